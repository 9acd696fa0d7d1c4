import type { HeaderObject, JsonSchema, ParameterObject } from './types.ts';

const string = (extra: JsonSchema = {}): JsonSchema => ({ type: 'string', ...extra });
const integer: JsonSchema = { type: 'integer', minimum: 0 };

/** Request headers of signed endpoints (Authorization is the bearerAuth security scheme). */
export const PARAMETERS: Record<string, ParameterObject> = {
  ClientId: {
    name: 'x-client-id',
    in: 'header',
    required: true,
    description: 'The clientId of the credential; must equal the clientId inside the token.',
    schema: string({ pattern: '^org_[a-f0-9]{32}$' }),
  },
  SignatureInput: {
    name: 'Signature-Input',
    in: 'header',
    required: true,
    description:
      'RFC 9421 signature parameters: exactly one label, covering at least `@method`, `@target-uri`, ' +
      '`authorization` and `x-client-id`, plus `content-digest` when there is a body and ' +
      '`x-idempotency-key` when that header is sent; `created` and `expires` required (at most 300 s apart), ' +
      '`keyid` naming the registered key. See /docs/signing.',
    schema: string(),
    example:
      'sig1=("@method" "@target-uri" "authorization" "x-client-id");created=1767225600;expires=1767225900;keyid="staging-service-ed25519"',
  },
  Signature: {
    name: 'Signature',
    in: 'header',
    required: true,
    description: 'RFC 9421 Ed25519 signature of the signature base, under the label of Signature-Input.',
    schema: string(),
  },
  ContentDigest: {
    name: 'Content-Digest',
    in: 'header',
    required: true,
    description:
      'RFC 9530 digest of the raw body bytes: `sha-512` (or `sha-256`), e.g. `sha-512=:<base64>:`.',
    schema: string(),
  },
  IdempotencyKey: {
    name: 'X-Idempotency-Key',
    in: 'header',
    required: true,
    description:
      'A UUID, scoped to the credential. The same key replays the stored response (with `Idempotent-Replayed: ' +
      'true`); reuse it when retrying. Kept 24 hours.',
    schema: string({ format: 'uuid' }),
  },
  RequestId: {
    name: 'X-Request-Id',
    in: 'header',
    required: false,
    description: 'Optional correlation id (1 to 128 of `A-Za-z0-9._:-`); echoed back, otherwise one is made.',
    schema: string({ pattern: '^[A-Za-z0-9._:-]{1,128}$' }),
  },
};

/** Response headers. `required` ones are on every response of every documented operation. */
export const HEADERS: Record<string, HeaderObject> = {
  'X-Request-Id': {
    description: 'The request id, also in the server logs.',
    required: true,
    schema: string(),
  },
  'RateLimit-Limit': { description: 'Requests allowed in the window.', required: true, schema: integer },
  'RateLimit-Remaining': { description: 'Requests left in the window.', required: true, schema: integer },
  'RateLimit-Reset': { description: 'Seconds until the window resets.', required: true, schema: integer },
  'RateLimit-Policy': {
    description: '`<limit>;w=<window seconds>`, e.g. `300;w=60` (global) or `10;w=900` (token endpoint).',
    required: true,
    schema: string({ pattern: '^[0-9]+;w=[0-9]+$' }),
  },
  'Retry-After': { description: 'Seconds to wait before retrying.', required: true, schema: integer },
  'Idempotent-Replayed': {
    description: '`true` when this is the stored response of an earlier request with the same key.',
    schema: string({ enum: ['true'] }),
  },
  'Signature-Debug': {
    description:
      'Sandbox only, on a signature or digest 401: `reason="<reason>", time=<server unix time>, ' +
      'base=:<base64 of the server signature base>:`. See /docs/signing.',
    schema: string(),
  },
  'Cache-Control': { description: '`public, max-age=300`.', required: true, schema: string() },
};

export const RATE_LIMIT_HEADERS = [
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
  'RateLimit-Policy',
];

export const SECURITY_SCHEMES: Record<string, JsonSchema> = {
  bearerAuth: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description:
      'A token from POST /oauth/token in `Authorization: Bearer <token>`. Every authenticated request must ' +
      'also carry `x-client-id` and an RFC 9421 `Signature`/`Signature-Input` pair made with the Ed25519 key ' +
      'registered for the credential (plus `Content-Digest` when it has a body): see /docs/signing.',
  },
};
