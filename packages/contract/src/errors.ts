/** Error labels and exact messages of the spec's Errors section. Partners match these byte for byte. */
export const ErrorLabel = {
  validation: 'Validation failed',
  badRequest: 'Bad Request',
  invalidRequest: 'Invalid request',
  unauthorized: 'Unauthorized',
  forbidden: 'Forbidden',
  sessionForbidden: 'SESSION_FORBIDDEN',
  notFound: 'Not found',
  routeNotFound: 'Not Found',
  transactionNotFound: 'Transaction not found',
  customerNotFound: 'CUSTOMER_NOT_FOUND',
  sessionNotFound: 'SESSION_NOT_FOUND',
  conflict: 'Conflict',
  unprocessable: 'Unprocessable Entity',
  tooManyRequests: 'Too Many Requests',
  internal: 'Internal Server Error',
  unavailable: 'Service Unavailable',
} as const;

export const ErrorMessage = {
  tokenRequired: 'Organization authentication token is required',
  tokenInvalid: 'Invalid organization authentication token',
  /** POST /oauth/revoke only (400 Bad Request): a token that is malformed or expired. */
  tokenMalformedOrExpired: 'Token is malformed or expired',
  clientIdRequired: 'x-client-id header is required',
  clientIdMismatch: 'Client ID mismatch',
  invalidCredentials: 'Invalid client credentials',
  signatureFailed: 'Signature verification failed',
  digestFailed: 'Content-Digest verification failed',
  noSigningKey: 'No signing key registered for this client',
  ipNotAllowed: 'Client IP not allowed',
  idempotencyKeyRequired: 'X-Idempotency-Key header is required for this request',
  idempotencyInProgress: 'A request with this X-Idempotency-Key is already in progress',
  idempotencyPayloadMismatch: 'X-Idempotency-Key was already used with a different request payload',
  rateLimitGlobal: 'Too many requests. Please slow down and try again shortly.',
  rateLimitToken: 'Too many authentication attempts. Please try again in a few minutes.',
  customerNotFound: 'Customer not found',
  ussdCustomerNotFound: 'Customer not found or does not belong to this organization',
  sessionNotFound: 'USSD session not found',
  sessionForbidden: 'Session does not belong to this organization',
  sessionExpired: 'USSD session has expired',
  sessionInactive: 'USSD session is no longer active',
  invalidOrderReference: 'Order ID is not a valid order reference',
  transactionNotFound: (orderId: string) =>
    `No payment or disbursement transaction was found for the order ${orderId}`,
} as const;

/** The three error body shapes of the spec. */
export type ValidationDetail = { field: string; message: string };
export type ErrorBody =
  | { error: string; details: ValidationDetail[] }
  | { error: string; message: string }
  | { error: string };
