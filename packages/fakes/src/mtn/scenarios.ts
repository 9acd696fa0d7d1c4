/**
 * What the fake MTN does with one request-to-pay or transfer. A scenario comes from the control
 * queue (per operation), else from a magic amount, else from the sandbox test number, else `success`.
 */
export type FakeMtnScenario =
  /** SUCCESSFUL with a financialTransactionId; the callback is sent once. */
  | 'success'
  /** FAILED APPROVAL_REJECTED (the customer said no). */
  | 'cancelled'
  /** FAILED NOT_ENOUGH_FUNDS. */
  | 'insufficient'
  /** FAILED COULD_NOT_PERFORM_TRANSACTION (live: the PIN was not entered in time). */
  | 'unreachable'
  /** FAILED EXPIRED. */
  | 'expired'
  /** FAILED with this reason, e.g. `failed:PAYER_NOT_FOUND`. */
  | `failed:${string}`
  /** FAILED NOT_ENOUGH_FUNDS with `reason` as an object `{ code, message }` (older shape). */
  | 'reason-object'
  /** PENDING for ever (sandbox "Ongoing"); no callback. */
  | 'pending'
  /** PENDING for `delayedMs` (sandbox "Delayed"), then SUCCESSFUL and the callback. */
  | 'delayed'
  /** The outcome is reached (the status tells it) but no callback is ever sent. */
  | 'no-callback'
  /** The callback is sent once and never again, even when callback retries are on and ours failed. */
  | 'callback-once'
  /** The callback is sent twice, same body. */
  | 'duplicate-callback'
  /** The outcome is reached at once; the callback comes `lateCallbackMs` later. */
  | 'late-callback'
  /** The callback says SUCCESSFUL while the status says FAILED APPROVAL_REJECTED. */
  | 'contradicting-callback'
  /** HTTP 500 INTERNAL_PROCESSING_ERROR; nothing done (the status query answers 404). */
  | 'http-500'
  /** HTTP 500 INTERNAL_PROCESSING_ERROR after the request was taken: it settles and calls back. */
  | 'http-500-accepted'
  /** Processed, but the 202 comes `slowResponseMs` later (past the client's timeout). */
  | 'slow'
  /** Processed, then the connection is destroyed without an answer. */
  | 'reset'
  /** Token requests only: the token is refused (401) from its second use on. */
  | 'expires-early';

/** Magic amounts (the whole part of `amount`), as the fake Daraja's. Every other amount: no effect. */
export const MTN_MAGIC_AMOUNTS: Readonly<Record<number, FakeMtnScenario>> = {
  1032: 'cancelled',
  1037: 'unreachable',
  1019: 'expired',
  1111: 'insufficient',
  5000: 'http-500',
  5001: 'slow',
  5002: 'reset',
  6001: 'no-callback',
  6002: 'duplicate-callback',
  6003: 'late-callback',
  6004: 'contradicting-callback',
  6005: 'pending',
  6007: 'callback-once',
  6008: 'delayed',
};

/**
 * MTN's sandbox test numbers ("Sandbox Use Cases"): request-to-pay by payer, transfer by payee. The
 * sandbox does not document the reason strings; "Failed" is taken as INTERNAL_PROCESSING_ERROR.
 */
export const MTN_SANDBOX_NUMBERS: Readonly<
  Record<string, { requestToPay: FakeMtnScenario; transfer: FakeMtnScenario }>
> = {
  '46733123450': {
    requestToPay: 'failed:INTERNAL_PROCESSING_ERROR',
    transfer: 'failed:INTERNAL_PROCESSING_ERROR',
  },
  '46733123451': { requestToPay: 'cancelled', transfer: 'cancelled' },
  '46733123452': { requestToPay: 'expired', transfer: 'expired' },
  '46733123453': { requestToPay: 'pending', transfer: 'pending' },
  '46733123454': { requestToPay: 'delayed', transfer: 'delayed' },
  '46733123455': { requestToPay: 'failed:PAYER_NOT_FOUND', transfer: 'failed:NOT_ENOUGH_FUNDS' },
  '46733123456': {
    requestToPay: 'failed:PAYEE_NOT_ALLOWED_TO_RECEIVE',
    transfer: 'failed:PAYER_LIMIT_REACHED',
  },
  '46733123457': { requestToPay: 'failed:NOT_ALLOWED', transfer: 'failed:PAYEE_NOT_FOUND' },
  '46733123458': {
    requestToPay: 'failed:NOT_ALLOWED_TARGET_ENVIRONMENT',
    transfer: 'failed:NOT_ALLOWED',
  },
  '46733123459': {
    requestToPay: 'failed:INVALID_CALLBACK_URL_HOST',
    transfer: 'failed:NOT_ALLOWED_TARGET_ENVIRONMENT',
  },
  '46733123460': { requestToPay: 'failed:INVALID_CURRENCY', transfer: 'failed:INVALID_CALLBACK_URL_HOST' },
  '46733123461': {
    requestToPay: 'failed:INTERNAL_PROCESSING_ERROR',
    transfer: 'failed:INVALID_CURRENCY',
  },
  '46733123462': {
    requestToPay: 'failed:SERVICE_UNAVAILABLE',
    transfer: 'failed:INTERNAL_PROCESSING_ERROR',
  },
  '46733123463': {
    requestToPay: 'failed:COULD_NOT_PERFORM_TRANSACTION',
    transfer: 'failed:SERVICE_UNAVAILABLE',
  },
};

/** The FAILED reason a scenario ends with; undefined: it succeeds (or stays pending). */
export function scenarioReason(scenario: FakeMtnScenario): string | undefined {
  if (scenario.startsWith('failed:')) return scenario.slice('failed:'.length);
  switch (scenario) {
    case 'cancelled':
      return 'APPROVAL_REJECTED';
    case 'insufficient':
    case 'reason-object':
      return 'NOT_ENOUGH_FUNDS';
    case 'unreachable':
      return 'COULD_NOT_PERFORM_TRANSACTION';
    case 'expired':
      return 'EXPIRED';
    default:
      return undefined;
  }
}
