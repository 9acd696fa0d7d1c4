/** The parts of an OpenAPI 3.0.3 document this server writes and its contract check reads. */
export type JsonSchema = { [keyword: string]: unknown };
export type Ref = { $ref: string };

export type HeaderObject = { description: string; required?: boolean; schema: JsonSchema };
export type ParameterObject = {
  name: string;
  in: 'path' | 'query' | 'header';
  description?: string;
  required: boolean;
  schema: JsonSchema;
  example?: unknown;
};
export type ExampleObject = { summary: string; value: unknown };
export type MediaTypeObject = { schema: JsonSchema | Ref; examples?: Record<string, ExampleObject> };
export type ResponseObject = {
  description: string;
  headers?: Record<string, HeaderObject | Ref>;
  content?: Record<string, MediaTypeObject>;
};
export type OperationObject = {
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  security?: Record<string, string[]>[];
  parameters?: (ParameterObject | Ref)[];
  requestBody?: { required: boolean; content: Record<string, MediaTypeObject> };
  responses: Record<string, ResponseObject>;
  /** A preview operation (WEBHOOKS_PREVIEW): not part of the live contract yet. */
  'x-preview'?: true;
};
export type HttpMethod = 'get' | 'post' | 'patch' | 'put' | 'delete';

export type OpenApiDocument = {
  openapi: '3.0.3';
  info: { title: string; version: string; description: string };
  servers: { url: string; description: string }[];
  tags: { name: string; description: string }[];
  security: Record<string, string[]>[];
  paths: Record<string, Partial<Record<HttpMethod, OperationObject>>>;
  components: {
    schemas: Record<string, JsonSchema>;
    parameters: Record<string, ParameterObject>;
    headers: Record<string, HeaderObject>;
    securitySchemes: Record<string, JsonSchema>;
  };
};
