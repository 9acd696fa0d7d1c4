/** First backoff window; each retry doubles it up to the cap (full jitter draws within it). */
export const RETRY_BASE_DELAY_MS = 500;
export const RETRY_MAX_DELAY_MS = 8_000;
/**
 * A Retry-After longer than this is not waited for: the token limiter can ask for 15 minutes, and a
 * call that silently sleeps that long is worse than a RateLimitError the caller can act on.
 */
export const MAX_RETRY_AFTER_MS = 60_000;

export type RetryInput = {
  /** Retries already made for this logical call: 0 when the first attempt has just failed. */
  attempt: number;
  maxRetries: number;
  /** HTTP status of the failed attempt; absent when it got no answer. */
  status?: number;
  /** The network failure (refused, reset, timeout) when there was no answer. */
  error?: unknown;
  retryAfterHeader?: string | null;
  /** Injected for tests; defaults to Math.random and Date.now. */
  random?: () => number;
  now?: number;
  maxRetryAfterMs?: number;
};

export type RetryDecision = { retry: boolean; delayMs: number };

/** Frozen: it is returned to every caller, so none can change the answer another one gets. */
const NO_RETRY: RetryDecision = Object.freeze({ retry: false, delayMs: 0 });

/** Exponential backoff with full jitter: uniform in [0, min(cap, base * 2^attempt)). */
export function backoffDelayMs(attempt: number, random: () => number = Math.random): number {
  const window = Math.min(RETRY_MAX_DELAY_MS, RETRY_BASE_DELAY_MS * 2 ** Math.max(0, attempt));
  return Math.floor(random() * window);
}

/** Retry-After as delta-seconds or an HTTP-date (RFC 9110 §10.2.3), in milliseconds. */
export function parseRetryAfterMs(header: string | null | undefined, now = Date.now()): number | undefined {
  if (header === null || header === undefined || header.trim() === '') return undefined;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  // HTTP-dates name the month; V8 would otherwise read '1.5' as a date.
  const date = /[A-Za-z]/.test(value) ? Date.parse(value) : Number.NaN;
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * The one retry decision (pure): 429 after Retry-After, 409 (a twin still in flight), 5xx and 503,
 * and network failures are retried, bounded by maxRetries; other 4xx would fail the same way again.
 * A server hint is a floor: the jittered backoff is added on top so that clients refused together do
 * not come back together.
 */
export function shouldRetry(input: RetryInput): RetryDecision {
  if (input.attempt >= input.maxRetries) return NO_RETRY;
  const { status } = input;
  const retryable =
    status === undefined ? input.error !== undefined : status === 429 || status === 409 || status >= 500;
  if (!retryable) return NO_RETRY;
  const hint = parseRetryAfterMs(input.retryAfterHeader, input.now);
  if (hint !== undefined && hint > (input.maxRetryAfterMs ?? MAX_RETRY_AFTER_MS)) return NO_RETRY;
  return { retry: true, delayMs: (hint ?? 0) + backoffDelayMs(input.attempt, input.random) };
}
