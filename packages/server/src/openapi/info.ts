/** The document's introduction: the rules that hold for every operation. */
export const DOCUMENT_INFO = {
  title: 'Investment Platform Partner API',
  version: '1.0.0',
  description: [
    'Manage investment customers, drive USSD menus and poll mobile-money payment status. Every path is',
    'relative to the server URL, which includes the version segment `/v1`.',
    '',
    '**Authentication.** Exchange `clientId` and `clientSecret` at `POST /oauth/token` for a bearer token',
    '(TTL 3600 s). Every other endpoint except `GET /webhooks/key` needs `Authorization: Bearer <token>`,',
    '`x-client-id` and an RFC 9421 signature (`Signature`, `Signature-Input`) made with the Ed25519 key',
    'registered for the credential, plus an RFC 9530 `Content-Digest` when the request has a body.',
    'How to sign, with a worked example: [Signing requests](/docs/signing).',
    '',
    '**Idempotency.** `POST /customers`, `PATCH /customers/{id}`, `POST /ussd/session` and',
    '`POST /ussd/process` require `X-Idempotency-Key` (a UUID). The same key replays the stored response',
    'with `Idempotent-Replayed: true`; reuse it when retrying.',
    '',
    '**Errors** have one of three shapes: validation `{ error, details: [{ field, message }] }`,',
    '`{ error, message }`, or the label alone `{ error }` (every 5xx, unmatched routes). Treat `message` as',
    'optional. The examples show the exact messages.',
    '',
    '**Rate limits** are per client IP: 300 requests per 60 s overall, and 10 per 15 minutes on',
    '`POST /oauth/token`. Every response carries `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset`',
    'and `RateLimit-Policy`; a 429 adds `Retry-After`. Every response carries `X-Request-Id`.',
  ].join('\n'),
};

export const TAGS = [
  { name: 'Authentication', description: 'Tokens and the organization behind them.' },
  { name: 'Customers', description: "The partner's investment customers." },
  {
    name: 'Payments',
    description: 'Mobile-money collections and disbursements of orders, learned by polling.',
  },
  { name: 'Webhooks', description: 'The public key outbound webhooks will be signed with.' },
  {
    name: 'USSD',
    description: 'The menu state machine behind a USSD gateway: one session, one move per call.',
  },
];
