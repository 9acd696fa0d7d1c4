// Renders /v1/openapi.json. Requests are signed (RFC 9421), which a browser form cannot do: no "Try it out".
window.ui = SwaggerUIBundle({
  url: '/v1/openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  // The default would send the document to an online validator.
  validatorUrl: null,
  supportedSubmitMethods: [],
  defaultModelsExpandDepth: 0,
  docExpansion: 'list',
});
