// Renders /v1/openapi.json. "Try it out" signs in the page (try-it-out.js): a token from the
// credential chosen above, then RFC 9421 headers on every signed request.
window.ui = SwaggerUIBundle({
  url: '/v1/openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  // The default would send the document to an online validator.
  validatorUrl: null,
  defaultModelsExpandDepth: 0,
  docExpansion: 'list',
  requestInterceptor: window.PartnerApiTryItOut.requestInterceptor,
  responseInterceptor: window.PartnerApiTryItOut.responseInterceptor,
});
