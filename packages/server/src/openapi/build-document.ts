import {
  credentialSchema,
  customerSchema,
  errorLabelBodySchema,
  errorWithMessageBodySchema,
  organizationSchema,
  paginationSchema,
  paymentStatusSchema,
  paymentTransactionSchema,
  ussdMenuSchema,
  ussdOptionSchema,
  ussdSessionDataSchema,
  validationDetailSchema,
  validationErrorBodySchema,
  webhookJwkSchema,
} from '@partner-api/contract';
import type { z } from 'zod';
import { HEADERS, PARAMETERS, SECURITY_SCHEMES } from './components.ts';
import { DOCUMENT_INFO, TAGS } from './info.ts';
import { INVESTMENT_OPERATIONS, INVESTMENT_SHARED_SCHEMAS, INVESTMENTS_TAG } from './investments/index.ts';
import { buildOperation } from './operation.ts';
import { OPERATIONS, UNDOCUMENTED_ROUTES } from './operations.ts';
import type { CatalogRoute } from './route-catalog.ts';
import type { HttpMethod, OpenApiDocument } from './types.ts';
import { PREVIEW_OPERATIONS, PREVIEW_SHARED_SCHEMAS } from './webhook-operations.ts';
import { componentSchemas } from './zod-json.ts';

/** Schemas that responses share; named, so they appear once under components and in generated clients. */
const SHARED_RESPONSE_SCHEMAS: [string, z.ZodType][] = [
  ['Customer', customerSchema],
  ['Pagination', paginationSchema],
  ['Organization', organizationSchema],
  ['Credential', credentialSchema],
  ['PaymentStatus', paymentStatusSchema],
  ['PaymentTransaction', paymentTransactionSchema],
  ['UssdSessionData', ussdSessionDataSchema],
  ['UssdMenu', ussdMenuSchema],
  ['UssdOption', ussdOptionSchema],
  ['WebhookJwk', webhookJwkSchema],
  ['ValidationError', validationErrorBodySchema],
  ['ValidationDetail', validationDetailSchema],
  ['ErrorWithMessage', errorWithMessageBodySchema],
  ['ErrorLabelOnly', errorLabelBodySchema],
];

export const API_PREFIX = '/v1';

/** `/v1/customers/:id` → `/customers/{id}` (paths are relative to the server URL, which ends in /v1). */
export const openApiPath = (url: string) => url.slice(API_PREFIX.length).replace(/:([A-Za-z0-9_]+)/g, '{$1}');

export type BuildDocumentOptions = {
  routes: CatalogRoute[];
  publicBaseUrl: string;
  appEnv: 'sandbox' | 'production';
  /** WEBHOOKS_PREVIEW: the webhook configuration operations are described (and must be registered). */
  preview?: boolean;
  /** INVESTMENTS_PREVIEW: the investments operations are described (and must be registered). */
  investments?: boolean;
};

/**
 * The OpenAPI 3.0.3 document of the live partner API, built once at startup from the registered
 * routes. A /v1 route without a description (or a description without a route) stops the start:
 * the document cannot silently fall behind the server.
 */
export function buildOpenApiDocument({
  routes,
  publicBaseUrl,
  appEnv,
  preview = false,
  investments = false,
}: BuildDocumentOptions): OpenApiDocument {
  const operations = {
    ...OPERATIONS,
    ...(preview ? PREVIEW_OPERATIONS : {}),
    ...(investments ? INVESTMENT_OPERATIONS : {}),
  };
  const byKey = new Map<string, CatalogRoute>();
  for (const route of routes) {
    if (!route.url.startsWith(`${API_PREFIX}/`)) continue;
    const key = `${route.method} ${route.url}`;
    if (!(key in operations) && !(key in UNDOCUMENTED_ROUTES)) {
      throw new Error(`route ${key} is neither in the OpenAPI document nor listed as undocumented`);
    }
    byKey.set(key, route);
  }

  const requests = new Map<string, z.ZodType>();
  const responses = new Map<string, z.ZodType>([
    ...SHARED_RESPONSE_SCHEMAS,
    ...(preview ? PREVIEW_SHARED_SCHEMAS : []),
    ...(investments ? INVESTMENT_SHARED_SCHEMAS : []),
  ]);
  const paths: OpenApiDocument['paths'] = {};
  for (const [key, spec] of Object.entries(operations)) {
    const route = byKey.get(key);
    if (!route) throw new Error(`the OpenAPI document describes ${key}, which is not registered`);
    const body = route.schema?.body;
    if (body) {
      if (!spec.requestName) throw new Error(`${key} validates a body but names no request schema`);
      requests.set(spec.requestName, body);
    }
    for (const success of spec.successes) {
      const known = responses.get(success.name);
      if (known && known !== success.schema) throw new Error(`two schemas are named ${success.name}`);
      responses.set(success.name, success.schema);
    }
    const path = openApiPath(route.url);
    paths[path] ??= {};
    paths[path][route.method.toLowerCase() as HttpMethod] = buildOperation(spec, route);
  }

  const requestSchemas = componentSchemas(requests, 'input');
  const responseSchemas = componentSchemas(responses, 'output');
  for (const name of Object.keys(requestSchemas)) {
    if (name in responseSchemas) throw new Error(`component schema ${name} is both a request and a response`);
  }

  return {
    openapi: '3.0.3',
    info: DOCUMENT_INFO,
    servers: [
      {
        url: `${new URL(publicBaseUrl).origin}${API_PREFIX}`,
        description: appEnv === 'production' ? 'Production' : 'Sandbox (UAT)',
      },
    ],
    tags: investments ? [...TAGS, INVESTMENTS_TAG] : TAGS,
    security: [{ bearerAuth: [] }],
    paths,
    components: {
      schemas: { ...requestSchemas, ...responseSchemas },
      parameters: PARAMETERS,
      headers: HEADERS,
      securitySchemes: SECURITY_SCHEMES,
    },
  };
}
