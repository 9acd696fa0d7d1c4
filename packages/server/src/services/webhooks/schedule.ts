/**
 * When a failed delivery is tried again, and when it is given up (docs/webhooks.md, Retries and
 * disabling). Pure functions: the worker passes the clock and the random source.
 */

export type RetrySettings = {
  /** The ceiling of the first retry's delay; it doubles with each failed attempt. */
  WEBHOOK_BACKOFF_BASE_MS: number;
  /** The largest ceiling any retry's delay may reach. */
  WEBHOOK_BACKOFF_MAX_MS: number;
  /** A delivery is retried until this long after it was created; the next failure is final. */
  WEBHOOK_RETRY_WINDOW_SECONDS: number;
};

/** A webhook whose deliveries have all failed for this long is disabled (Svix's rule, 5 days). */
export const DISABLE_AFTER_FAILING_SECONDS = 5 * 86_400;

/**
 * Full jitter (AWS architecture blog's "exponential backoff and jitter"): after the n-th failed
 * attempt the delay is uniform in [0, min(max, base·2^(n-1))). Spreads the retries of a receiver
 * that was down for everyone, so it is not hit by a wave when it comes back. A `Retry-After` the
 * receiver sent (429, 503) is a floor, still capped by the max.
 */
export function retryDelayMs(
  failedAttempts: number,
  settings: RetrySettings,
  random: () => number = Math.random,
  retryAfterMs?: number,
): number {
  const exponent = Math.min(Math.max(failedAttempts - 1, 0), 40);
  const ceiling = Math.min(settings.WEBHOOK_BACKOFF_MAX_MS, settings.WEBHOOK_BACKOFF_BASE_MS * 2 ** exponent);
  const jittered = Math.floor(random() * ceiling);
  const floor = Math.min(retryAfterMs ?? 0, settings.WEBHOOK_BACKOFF_MAX_MS);
  return Math.max(jittered, floor);
}

/**
 * What follows a failed attempt: another attempt at `nextAttemptAt`, or nothing more once the
 * retry window since the delivery's creation has passed. Every attempt scheduled inside the window
 * is made, so the last one lands at or after the window's end: retries span at least the window.
 */
export function afterFailure(input: {
  createdAt: Date;
  now: Date;
  attempts: number;
  settings: RetrySettings;
  random?: () => number;
  retryAfterMs?: number;
}): { retry: true; nextAttemptAt: Date } | { retry: false } {
  const windowEnd = input.createdAt.getTime() + input.settings.WEBHOOK_RETRY_WINDOW_SECONDS * 1000;
  if (input.now.getTime() >= windowEnd) return { retry: false };
  const delay = retryDelayMs(input.attempts, input.settings, input.random, input.retryAfterMs);
  return { retry: true, nextAttemptAt: new Date(input.now.getTime() + delay) };
}

/** Retry-After as delta seconds or an HTTP date, in ms from `now`; undefined when absent or bad. */
export function parseRetryAfter(value: string | undefined, now: Date): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now.getTime());
}
