import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { API_PREFIX, openApiPath } from '../../server/src/openapi/build-document.ts';
import type {
  HeaderObject,
  HttpMethod,
  OpenApiDocument,
  Ref,
  ResponseObject,
} from '../../server/src/openapi/types.ts';
import { openApiDocumentOf } from '../../server/src/routes/docs.ts';

// ajv-formats is CommonJS; under NodeNext its default export is the module object.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

/** A response the OpenAPI document does not describe. */
export type ContractViolation = { method: string; url: string; status: number; problems: string[] };

/** Status of a response replaced because it broke the contract: no test expects it, so the test fails. */
export const CONTRACT_VIOLATION_STATUS = 599;

type Compiled = { ajv: Ajv; validators: Map<string, ValidateFunction> };
/** By document content (not its servers): the many apps a test process builds share their validators. */
const compiledByContent = new Map<string, Compiled>();
const contentKeys = new WeakMap<OpenApiDocument, string>();

function validatorFor(document: OpenApiDocument, key: string, schema: unknown): ValidateFunction {
  let contentKey = contentKeys.get(document);
  if (contentKey === undefined) {
    contentKey = JSON.stringify([document.paths, document.components]);
    contentKeys.set(document, contentKey);
  }
  let entry = compiledByContent.get(contentKey);
  if (!entry) {
    // OpenAPI 3.0 schemas: `nullable` is built into ajv; `example` and friends are not keywords.
    const ajv = new Ajv({ strict: false, allErrors: true });
    addFormats(ajv);
    entry = { ajv, validators: new Map() };
    compiledByContent.set(contentKey, entry);
  }
  let validate = entry.validators.get(key);
  if (!validate) {
    // The components travel with the schema, so `#/components/schemas/...` resolves.
    validate = entry.ajv.compile({ allOf: [schema], components: { schemas: document.components.schemas } });
    entry.validators.set(key, validate);
  }
  return validate;
}

const isRef = (value: unknown): value is Ref =>
  typeof value === 'object' && value !== null && '$ref' in value;

function resolveHeader(document: OpenApiDocument, header: HeaderObject | Ref): HeaderObject {
  if (!isRef(header)) return header;
  const resolved = document.components.headers[header.$ref.replace('#/components/headers/', '')];
  if (!resolved) throw new Error(`unresolvable header ${header.$ref}`);
  return resolved;
}

function headerProblem(name: string, header: HeaderObject, value: string): string | undefined {
  const schema = header.schema as { type?: string; pattern?: string; enum?: string[] };
  if (schema.type === 'integer' && !/^[0-9]+$/.test(value))
    return `header ${name}: '${value}' is not an integer`;
  if (schema.pattern && !new RegExp(schema.pattern).test(value))
    return `header ${name}: '${value}' does not match ${schema.pattern}`;
  if (schema.enum && !schema.enum.includes(value))
    return `header ${name}: '${value}' is not one of ${schema.enum.join(', ')}`;
  return undefined;
}

/** Everything wrong with one response of a documented operation (empty when it conforms). */
export function checkResponse(
  document: OpenApiDocument,
  operationKey: { path: string; method: HttpMethod },
  status: number,
  headers: Record<string, unknown>,
  payload: unknown,
): string[] {
  const operation = document.paths[operationKey.path]?.[operationKey.method];
  if (!operation) return [];
  const response: ResponseObject | undefined = operation.responses[String(status)];
  if (!response)
    return [
      `status ${status} is not documented for ${operationKey.method.toUpperCase()} ${operationKey.path}`,
    ];
  const problems: string[] = [];
  for (const [name, declared] of Object.entries(response.headers ?? {})) {
    const header = resolveHeader(document, declared);
    const value = headers[name.toLowerCase()];
    if (value === undefined) {
      if (header.required) problems.push(`required header ${name} is missing`);
      continue;
    }
    const problem = headerProblem(name, header, String(value));
    if (problem) problems.push(problem);
  }
  const media = response.content?.['application/json'];
  if (!media) return problems;
  const contentType = String(headers['content-type'] ?? '');
  // Another media type the operation documents (a report as application/pdf): not JSON to check.
  const other = Object.keys(response.content ?? {}).find(
    (type) => type !== 'application/json' && contentType.startsWith(type),
  );
  if (other)
    return payload === undefined || payload === '' ? [...problems, `the ${other} body is empty`] : problems;
  if (!contentType.startsWith('application/json'))
    problems.push(`content-type '${contentType}' is not application/json`);
  const text =
    typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : undefined;
  if (text === undefined) return [...problems, 'the body is not text'];
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return [...problems, `the body is not JSON: ${text.slice(0, 200)}`];
  }
  const found = bodyProblems(
    document,
    `${operationKey.method} ${operationKey.path} ${status}`,
    media.schema,
    body,
  );
  if (found.length > 0) problems.push(...found, `body was ${text.slice(0, 500)}`);
  return problems;
}

/** Where a JSON body breaks a schema of the document (`key` names the compiled validator). */
export function bodyProblems(
  document: OpenApiDocument,
  key: string,
  schema: unknown,
  body: unknown,
): string[] {
  const validate = validatorFor(document, key, schema);
  if (validate(body)) return [];
  return (validate.errors ?? []).map(
    (error) =>
      `body${error.instancePath || ''} ${error.message ?? 'is invalid'} ${JSON.stringify(error.params)}`,
  );
}

function describe(violation: ContractViolation): string {
  return `${violation.method} ${violation.url} answered ${violation.status}:\n  - ${violation.problems.join('\n  - ')}`;
}

/**
 * Checks every response of a documented operation against the app's own OpenAPI document: the
 * status is listed, the required headers are present and well formed, the body validates. A
 * response that breaks the contract is replaced by a 599 carrying the problems (so the test that
 * caused it fails at its own assertion), and is recorded so that closing the app fails as well.
 * Unmatched routes, undocumented routes (/healthz, /docs, the provider callback) and HEAD are exempt.
 */
export function installContractCheck(app: FastifyInstance) {
  const violations: ContractViolation[] = [];
  app.addHook('onSend', async (request, reply: FastifyReply, payload) => {
    const document = openApiDocumentOf(app);
    const route = request.routeOptions.url;
    if (!document || route === undefined || !route.startsWith(`${API_PREFIX}/`)) return payload;
    const method = request.method.toLowerCase() as HttpMethod;
    const path = openApiPath(route);
    if (!document.paths[path]?.[method]) return payload;
    const problems = checkResponse(document, { path, method }, reply.statusCode, reply.getHeaders(), payload);
    if (problems.length === 0) return payload;
    const violation = { method: request.method, url: request.url, status: reply.statusCode, problems };
    violations.push(violation);
    reply.code(CONTRACT_VIOLATION_STATUS).type('application/json; charset=utf-8');
    return JSON.stringify({ error: 'OpenAPI contract violation', violation: describe(violation) });
  });
  return {
    violations,
    /** Throws when any response broke the contract (called when the test app closes). */
    assertNoViolations(): void {
      if (violations.length === 0) return;
      throw new Error(
        `${violations.length} response(s) broke the OpenAPI contract:\n${violations.map(describe).join('\n')}`,
      );
    },
  };
}
