import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { afterFailure, parseRetryAfter, retryDelayMs } from '../../src/services/webhooks/schedule.ts';

const defaults = loadConfig({ DATA_DIR: '/tmp/unused' });
const HOUR = 3_600_000;

describe('webhook retry schedule (docs/webhooks.md, Retries and disabling)', () => {
  it('defaults: 10 s timeout, 5 s base doubling to a 4 h ceiling, retried for 3 days', () => {
    expect(defaults.WEBHOOK_TIMEOUT_MS).toBe(10_000);
    expect(defaults.WEBHOOK_BACKOFF_BASE_MS).toBe(5_000);
    expect(defaults.WEBHOOK_BACKOFF_MAX_MS).toBe(4 * HOUR);
    expect(defaults.WEBHOOK_RETRY_WINDOW_SECONDS).toBe(3 * 86_400);
  });

  it.each([
    [1, 5_000],
    [2, 10_000],
    [3, 20_000],
    [8, 640_000],
    [12, 10_240_000],
    [13, 4 * HOUR],
    [40, 4 * HOUR],
    [1000, 4 * HOUR],
  ])('after failed attempt %i the delay is uniform in [0, %i ms)', (attempts, ceiling) => {
    expect(retryDelayMs(attempts, defaults, () => 0)).toBe(0);
    expect(retryDelayMs(attempts, defaults, () => 0.5)).toBe(Math.floor(ceiling / 2));
    expect(retryDelayMs(attempts, defaults, () => 0.999_999)).toBe(Math.floor(ceiling * 0.999_999));
  });

  it('a Retry-After is a floor, capped by the ceiling', () => {
    expect(retryDelayMs(1, defaults, () => 0, 60_000)).toBe(60_000);
    expect(retryDelayMs(1, defaults, () => 0, 10 * 86_400_000)).toBe(4 * HOUR);
    const now = new Date('2026-11-25T12:00:00Z');
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter('Wed, 25 Nov 2026 12:01:00 GMT', now)).toBe(60_000);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });

  it('retries while inside the window and gives up at its end', () => {
    const createdAt = new Date('2026-11-01T00:00:00Z');
    const at = (ms: number) => new Date(createdAt.getTime() + ms);
    const inside = afterFailure({ createdAt, now: at(72 * HOUR - 1), attempts: 30, settings: defaults });
    expect(inside.retry).toBe(true);
    expect(afterFailure({ createdAt, now: at(72 * HOUR), attempts: 31, settings: defaults })).toEqual({
      retry: false,
    });
  });

  it.each([0, 0.5, 0.999])('simulated with draws of %s, the attempts span at least 3 days', (draw) => {
    const createdAt = new Date('2026-11-01T00:00:00Z');
    let now = createdAt;
    let attempts = 1;
    for (;;) {
      const next = afterFailure({ createdAt, now, attempts, settings: defaults, random: () => draw });
      if (!next.retry) break;
      // A draw of 0 retries at once: each attempt still takes time (here, the 10 s timeout).
      now = new Date(next.nextAttemptAt.getTime() + (draw === 0 ? 10_000 : 0));
      attempts += 1;
    }
    expect(now.getTime() - createdAt.getTime()).toBeGreaterThanOrEqual(72 * HOUR);
    if (draw === 0.5) expect(attempts).toBeGreaterThan(30);
  });
});
