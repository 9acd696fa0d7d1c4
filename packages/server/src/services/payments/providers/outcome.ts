/**
 * Provider-neutral shapes for one call to a mobile-money provider (Daraja today, MTN and Airtel
 * next). The pipeline decides from the kind alone what it may do next:
 * - `accepted`: the provider took the request; `value` carries its ids.
 * - `rejected`: a definite refusal (an error envelope saying nothing was done); a retry is a new request.
 * - `ambiguous`: the request may or may not have been acted on (timeout, connection reset, a 5xx
 *   that is not a known refusal, an unparseable body); query the provider before any new attempt.
 * - `not-sent`: the request never left (no access token could be had); nothing to query.
 */
export type CallOutcome<T> =
  | { kind: 'accepted'; value: T; exchanges: ExchangeRecord[] }
  | { kind: 'rejected'; code: string; message: string; httpStatus: number; exchanges: ExchangeRecord[] }
  | { kind: 'ambiguous'; reason: AmbiguityReason; detail: string; exchanges: ExchangeRecord[] }
  | { kind: 'not-sent'; detail: string; exchanges: ExchangeRecord[] };

export type AmbiguityReason = 'timeout' | 'network' | 'server-error' | 'unparseable';

/** Our payment statuses (db/schema.ts, transactions.status). */
export type PaymentStatus = 'PENDING' | 'SUCCESS' | 'FAILED' | 'CANCELLED';

/**
 * One HTTP exchange with a provider, as the pipeline stores it per transaction. Secrets are already
 * redacted in the bodies. `status` is null when no response came (timeout, reset); `error` says why.
 */
export type ExchangeRecord = {
  provider: string;
  operation: string;
  method: 'GET' | 'POST';
  path: string;
  requestBody: unknown;
  status: number | null;
  responseBody: unknown;
  startedAt: Date;
  latencyMs: number;
  error: string | null;
  /** An inbound callback's source address (after TRUST_PROXY), as the route saw it. */
  sourceAddress?: string;
};

/** A parse of an inbound provider body: never throws, a failure says where the body went wrong. */
export type ParseResult<T> = { ok: true; value: T } | { ok: false; error: string };
