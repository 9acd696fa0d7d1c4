import { describe, expect, it } from 'vitest';
import {
  backoffDelayMs,
  MAX_RETRY_AFTER_MS,
  parseRetryAfterMs,
  RETRY_BASE_DELAY_MS,
  RETRY_MAX_DELAY_MS,
  shouldRetry,
} from '../src/index.ts';

const top = () => 0.999_999;
const zero = () => 0;
const base = { attempt: 0, maxRetries: 3, random: top };

describe('shouldRetry', () => {
  it('retries 429, 409, 500, 502, 503 and 504', () => {
    for (const status of [429, 409, 500, 502, 503, 504]) {
      expect(shouldRetry({ ...base, status }).retry, String(status)).toBe(true);
    }
  });

  it('does not retry other 4xx: they would fail the same way again', () => {
    for (const status of [400, 401, 403, 404, 405, 413, 422]) {
      expect(shouldRetry({ ...base, status }), String(status)).toEqual({ retry: false, delayMs: 0 });
    }
  });

  it('does not retry a 2xx or a call with neither status nor error', () => {
    expect(shouldRetry({ ...base, status: 200 }).retry).toBe(false);
    expect(shouldRetry({ ...base }).retry).toBe(false);
  });

  it('retries network failures (no status)', () => {
    expect(shouldRetry({ ...base, error: new Error('ECONNRESET') }).retry).toBe(true);
  });

  it('stops once maxRetries retries were made', () => {
    expect(shouldRetry({ ...base, attempt: 2, status: 503 }).retry).toBe(true);
    expect(shouldRetry({ ...base, attempt: 3, status: 503 }).retry).toBe(false);
    expect(shouldRetry({ ...base, maxRetries: 0, status: 503 }).retry).toBe(false);
    expect(shouldRetry({ ...base, maxRetries: 0, error: new Error('x') }).retry).toBe(false);
  });

  it('waits at least Retry-After seconds on a 429, plus jitter on top', () => {
    expect(shouldRetry({ ...base, status: 429, retryAfterHeader: '2', random: zero })).toEqual({
      retry: true,
      delayMs: 2000,
    });
    const jittered = shouldRetry({ ...base, status: 429, retryAfterHeader: '2' });
    expect(jittered.delayMs).toBeGreaterThanOrEqual(2000);
    expect(jittered.delayMs).toBeLessThan(2000 + RETRY_BASE_DELAY_MS);
  });

  it('accepts Retry-After as an HTTP date', () => {
    const now = Date.parse('2025-01-01T00:00:00Z');
    const decision = shouldRetry({
      ...base,
      status: 503,
      retryAfterHeader: 'Wed, 01 Jan 2025 00:00:05 GMT',
      now,
      random: zero,
    });
    expect(decision).toEqual({ retry: true, delayMs: 5000 });
  });

  it('gives up rather than sleep through a Retry-After beyond the maximum (the token limiter asks for 15 min)', () => {
    expect(shouldRetry({ ...base, status: 429, retryAfterHeader: '900' }).retry).toBe(false);
    const atMax = String(MAX_RETRY_AFTER_MS / 1000);
    expect(shouldRetry({ ...base, status: 429, retryAfterHeader: atMax }).retry).toBe(true);
    expect(
      shouldRetry({ ...base, status: 429, retryAfterHeader: '900', maxRetryAfterMs: 1_000_000 }).retry,
    ).toBe(true);
  });

  it('ignores an unparseable Retry-After and falls back to backoff', () => {
    const decision = shouldRetry({ ...base, status: 429, retryAfterHeader: 'soon' });
    expect(decision.retry).toBe(true);
    expect(decision.delayMs).toBeLessThan(RETRY_BASE_DELAY_MS);
  });

  it('is pure: the same input gives the same decision', () => {
    const input = { attempt: 1, maxRetries: 3, status: 503, random: () => 0.5 };
    expect(shouldRetry(input)).toEqual(shouldRetry(input));
  });
});

describe('backoffDelayMs', () => {
  it('doubles its window per attempt, with full jitter inside it', () => {
    expect(backoffDelayMs(0, zero)).toBe(0);
    expect(backoffDelayMs(0, top)).toBe(RETRY_BASE_DELAY_MS - 1);
    expect(backoffDelayMs(1, top)).toBe(2 * RETRY_BASE_DELAY_MS - 1);
    expect(backoffDelayMs(2, top)).toBe(4 * RETRY_BASE_DELAY_MS - 1);
    expect(backoffDelayMs(2, () => 0.5)).toBe(2 * RETRY_BASE_DELAY_MS);
  });

  it('is capped', () => {
    expect(backoffDelayMs(10, top)).toBe(RETRY_MAX_DELAY_MS - 1);
    expect(backoffDelayMs(1000, top)).toBe(RETRY_MAX_DELAY_MS - 1);
  });

  it('spreads real draws over the window', () => {
    const draws = Array.from({ length: 200 }, () => backoffDelayMs(3));
    expect(Math.min(...draws)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...draws)).toBeLessThan(8 * RETRY_BASE_DELAY_MS);
    expect(new Set(draws).size).toBeGreaterThan(50);
  });
});

describe('parseRetryAfterMs', () => {
  it('reads delta-seconds and dates, and nothing else', () => {
    expect(parseRetryAfterMs('0')).toBe(0);
    expect(parseRetryAfterMs(' 12 ')).toBe(12_000);
    expect(parseRetryAfterMs(undefined)).toBeUndefined();
    expect(parseRetryAfterMs(null)).toBeUndefined();
    expect(parseRetryAfterMs('')).toBeUndefined();
    expect(parseRetryAfterMs('-1')).toBeUndefined();
    expect(parseRetryAfterMs('1.5')).toBeUndefined();
    expect(parseRetryAfterMs('Wed, 01 Jan 2025 00:00:00 GMT', Date.parse('2025-01-01T00:00:10Z'))).toBe(0);
  });
});
