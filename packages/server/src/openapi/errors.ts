import { type ErrorBody, ErrorLabel, ErrorMessage } from '@partner-api/contract';

/** One way a status can be answered: a named example with the exact body the server sends. */
export type ErrorVariant = { key: string; summary: string; body: ErrorBody };
export type ErrorResponseSpec = { status: number; description: string; variants: ErrorVariant[] };

const variant = (key: string, summary: string, body: ErrorBody): ErrorVariant => ({ key, summary, body });
const withMessage = (error: string, message: string) => ({ error, message });
const validation = (field: string, message: string) => ({
  error: ErrorLabel.validation,
  details: [{ field, message }],
});

/** The component schema of each of the spec's three error shapes. */
export function shapeOf(body: ErrorBody): 'ValidationError' | 'ErrorWithMessage' | 'ErrorLabelOnly' {
  if ('details' in body) return 'ValidationError';
  if ('message' in body) return 'ErrorWithMessage';
  return 'ErrorLabelOnly';
}

export const validationVariant = (key: string, summary: string, field: string, message: string) =>
  variant(key, summary, validation(field, message));

/** A body sent as a `+json` vendor type is not parsed (spec, Body parsing rules 2). */
export const unparsedBodyVariant = variant(
  'bodyNotParsed',
  'Body not sent as application/json',
  validation('', 'Invalid input: expected object, received undefined'),
);

export function badRequest(description: string, variants: ErrorVariant[]): ErrorResponseSpec {
  return { status: 400, description, variants };
}

/** 401 of every signed endpoint, in the order the pipeline checks. */
export const signedUnauthorized: ErrorResponseSpec = {
  status: 401,
  description:
    'Missing, invalid, expired or revoked token; x-client-id missing or not matching the token; no signing key ' +
    'registered; signature or Content-Digest verification failed. In the sandbox, a signature or digest ' +
    'failure carries `Signature-Debug`.',
  variants: [
    variant(
      'tokenRequired',
      'No bearer token',
      withMessage(ErrorLabel.unauthorized, ErrorMessage.tokenRequired),
    ),
    variant(
      'tokenInvalid',
      'Invalid, expired or revoked token',
      withMessage(ErrorLabel.unauthorized, ErrorMessage.tokenInvalid),
    ),
    variant(
      'clientIdRequired',
      'No x-client-id',
      withMessage(ErrorLabel.unauthorized, ErrorMessage.clientIdRequired),
    ),
    variant(
      'clientIdMismatch',
      'x-client-id differs from the token',
      withMessage(ErrorLabel.unauthorized, ErrorMessage.clientIdMismatch),
    ),
    variant(
      'noSigningKey',
      'The credential has no public key',
      withMessage(ErrorLabel.unauthorized, ErrorMessage.noSigningKey),
    ),
    variant(
      'signatureFailed',
      'Signature missing, malformed, expired or not verifying',
      withMessage(ErrorLabel.unauthorized, ErrorMessage.signatureFailed),
    ),
    variant(
      'digestFailed',
      'Content-Digest does not match the body',
      withMessage(ErrorLabel.unauthorized, ErrorMessage.digestFailed),
    ),
  ],
};

export const ipForbidden = variant(
  'ipNotAllowed',
  "Client IP outside the credential's trustedIps",
  withMessage(ErrorLabel.forbidden, ErrorMessage.ipNotAllowed),
);

export const forbidden = (variants: ErrorVariant[] = []): ErrorResponseSpec => ({
  status: 403,
  description:
    "The client IP is outside the credential's allowlist, or the resource is another organization's.",
  variants: [ipForbidden, ...variants],
});

export const notFound = (description: string, variants: ErrorVariant[]): ErrorResponseSpec => ({
  status: 404,
  description,
  variants,
});

export const tooManyRequests = (limits: ('global' | 'token')[]): ErrorResponseSpec => ({
  status: 429,
  description: 'A per-IP rate limit was exceeded. Wait at least `Retry-After` seconds, then back off.',
  variants: limits.map((limit) =>
    limit === 'global'
      ? variant(
          'globalLimit',
          'Global limit (per client IP)',
          withMessage(ErrorLabel.tooManyRequests, ErrorMessage.rateLimitGlobal),
        )
      : variant(
          'tokenLimit',
          'Token endpoint limit (per client IP)',
          withMessage(ErrorLabel.tooManyRequests, ErrorMessage.rateLimitToken),
        ),
  ),
});

export const internalError: ErrorResponseSpec = {
  status: 500,
  description:
    'Unexpected server error, or a JSON body that is malformed or larger than 100 kB (answered before routing). ' +
    'The body is the label alone.',
  variants: [variant('internal', 'Unexpected error', { error: ErrorLabel.internal })],
};

export const serviceUnavailable: ErrorResponseSpec = {
  status: 503,
  description:
    'A needed dependency is not reachable. Retry with backoff (idempotent requests with the same key).',
  variants: [variant('unavailable', 'Dependency unreachable', { error: ErrorLabel.unavailable })],
};

/** 400, 409 and 422 of the endpoints that require X-Idempotency-Key. */
export const idempotencyKeyRequired = variant(
  'idempotencyKeyRequired',
  'X-Idempotency-Key missing',
  withMessage(ErrorLabel.badRequest, ErrorMessage.idempotencyKeyRequired),
);
export const idempotencyKeyNotUuid = validationVariant(
  'idempotencyKeyNotUuid',
  'X-Idempotency-Key is not a UUID',
  'x-idempotency-key',
  'X-Idempotency-Key must be a UUID',
);
export const idempotencyConflicts: ErrorResponseSpec[] = [
  {
    status: 409,
    description: 'A request with the same X-Idempotency-Key is still in progress; retry when it settles.',
    variants: [
      variant(
        'inProgress',
        'Key in flight',
        withMessage(ErrorLabel.conflict, ErrorMessage.idempotencyInProgress),
      ),
    ],
  },
  {
    status: 422,
    description: 'The X-Idempotency-Key was already used with a different payload.',
    variants: [
      variant(
        'payloadMismatch',
        'Key reused with another body',
        withMessage(ErrorLabel.unprocessable, ErrorMessage.idempotencyPayloadMismatch),
      ),
    ],
  },
];

export { variant, withMessage };
