import {
  type ErrorResponseSpec,
  forbidden,
  idempotencyConflicts,
  internalError,
  serviceUnavailable,
  shapeOf,
  signedUnauthorized,
  tooManyRequests,
} from './errors.ts';
import type { OperationSpec } from './operations.ts';
import type { CatalogRoute } from './route-catalog.ts';
import type { OperationObject, ParameterObject, Ref, ResponseObject } from './types.ts';
import { objectProperties, schemaRef } from './zod-json.ts';

const parameterRef = (name: string): Ref => ({ $ref: `#/components/parameters/${name}` });
const headerRef = (name: string): Ref => ({ $ref: `#/components/headers/${name}` });
const JSON_TYPE = 'application/json';
const PREVIEW_NOTE =
  '**Preview.** Outbound webhooks are switched on for this environment ahead of their announcement; ' +
  'the spec still lists them as planned, and their shapes may change.';
const INVESTMENTS_PREVIEW_NOTE =
  '**Preview.** The investments API is switched on for this environment ahead of its announcement; ' +
  'the spec lists these resources as planned, and their shapes may change.';

/** Every status an operation can answer with an error, in status order; variants of one status merge. */
function errorResponses(spec: OperationSpec): ErrorResponseSpec[] {
  const all = new Map<number, ErrorResponseSpec>();
  const add = (error: ErrorResponseSpec) => {
    const known = all.get(error.status);
    if (!known) return void all.set(error.status, { ...error, variants: [...error.variants] });
    for (const v of error.variants) if (!known.variants.some((k) => k.key === v.key)) known.variants.push(v);
  };
  if (spec.auth === 'signed') {
    add(signedUnauthorized);
    add(forbidden());
  }
  for (const error of spec.errors) add(error);
  if (spec.idempotent) for (const error of idempotencyConflicts) add(error);
  add(tooManyRequests(spec.operationId === 'createToken' ? ['global', 'token'] : ['global']));
  add(internalError);
  // The webhook key is served from memory; everything else needs the database.
  if (spec.operationId !== 'getWebhookKey') add(serviceUnavailable);
  return [...all.values()].sort((a, b) => a.status - b.status);
}

function responseHeaders(spec: OperationSpec, status: number, extra: string[] = []): Record<string, Ref> {
  const names = [
    'X-Request-Id',
    'RateLimit-Limit',
    'RateLimit-Remaining',
    'RateLimit-Reset',
    'RateLimit-Policy',
  ];
  if (status === 429) names.push('Retry-After');
  if (status === 401 && spec.auth === 'signed') names.push('Signature-Debug');
  if (spec.idempotent) names.push('Idempotent-Replayed');
  return Object.fromEntries([...names, ...extra].map((name) => [name, headerRef(name)]));
}

function errorResponse(spec: OperationSpec, error: ErrorResponseSpec): ResponseObject {
  const shapes = [...new Set(error.variants.map((v) => shapeOf(v.body)))];
  const schema = shapes.length === 1 ? schemaRef(shapes[0]!) : { oneOf: shapes.map(schemaRef) };
  const examples = Object.fromEntries(
    error.variants.map((v) => [v.key, { summary: v.summary, value: v.body }]),
  );
  return {
    description: error.description,
    headers: responseHeaders(spec, error.status),
    content: { [JSON_TYPE]: { schema, examples } },
  };
}

function parameters(spec: OperationSpec, route: CatalogRoute): (ParameterObject | Ref)[] {
  const out: (ParameterObject | Ref)[] = [];
  const pathSchema = route.schema?.params ?? spec.pathParams;
  if (pathSchema) {
    for (const p of objectProperties(pathSchema))
      out.push({ name: p.name, in: 'path', required: true, schema: p.schema });
  }
  if (route.schema?.querystring) {
    for (const p of objectProperties(route.schema.querystring)) {
      out.push({ name: p.name, in: 'query', required: p.required, schema: p.schema });
    }
  }
  if (spec.auth === 'signed')
    out.push(parameterRef('ClientId'), parameterRef('SignatureInput'), parameterRef('Signature'));
  if (route.schema?.body && spec.auth === 'signed') out.push(parameterRef('ContentDigest'));
  if (spec.idempotent) out.push(parameterRef('IdempotencyKey'));
  out.push(parameterRef('RequestId'));
  return out;
}

export function buildOperation(spec: OperationSpec, route: CatalogRoute): OperationObject {
  const responses: Record<string, ResponseObject> = {};
  for (const success of spec.successes) {
    responses[String(success.status)] = {
      description: success.description,
      headers: responseHeaders(spec, success.status, success.headers),
      content: {
        [JSON_TYPE]: { schema: schemaRef(success.name) },
        ...Object.fromEntries(
          (success.alternatives ?? []).map(({ mediaType, description }) => [
            mediaType,
            { schema: { type: 'string', format: 'binary', description } },
          ]),
        ),
      },
    };
  }
  for (const error of errorResponses(spec)) responses[String(error.status)] = errorResponse(spec, error);
  const operation: OperationObject = {
    operationId: spec.operationId,
    summary: spec.summary,
    description: spec.preview
      ? `${spec.tag === 'Investments (preview)' ? INVESTMENTS_PREVIEW_NOTE : PREVIEW_NOTE}\n\n${spec.description}`
      : spec.description,
    ...(spec.preview ? { 'x-preview': true as const } : {}),
    tags: [spec.tag],
    ...(spec.auth === 'none' ? { security: [] } : {}),
    parameters: parameters(spec, route),
    responses,
  };
  if (route.schema?.body && spec.requestName) {
    operation.requestBody = {
      required: true,
      content: { [JSON_TYPE]: { schema: schemaRef(spec.requestName) } },
    };
  }
  return operation;
}
