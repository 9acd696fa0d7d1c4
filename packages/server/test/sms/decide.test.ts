import { describe, expect, it } from 'vitest';
import { afterSend, exhaustedBeforeSend, smsRetryDelayMs } from '../../src/services/sms/decide.ts';
import type { ClaimedSms } from '../../src/services/sms/store.ts';

const SETTINGS = { SMS_MAX_ATTEMPTS: 4, SMS_BACKOFF_BASE_MS: 1000, SMS_BACKOFF_MAX_MS: 5000 };
const NOW = new Date('2026-11-29T10:00:00Z');
const claimed = (attempts: number, unconfirmedSends = 0): ClaimedSms => ({
  id: 'c1',
  msisdn: '254712345678',
  text: 'x',
  attempts,
  unconfirmedSends,
  lease: NOW.toISOString(),
});

/** What follows a hand-over (docs/sms.md, "At least once, at most twice"). */
describe('the SMS retry decision', () => {
  it('accepted is SENT, refused is REFUSED at once, whatever the attempts left', () => {
    const accepted = {
      kind: 'accepted',
      messageId: 'ATXid_1',
      statusCode: 101,
      status: 'Success',
      cost: null,
    } as const;
    expect(afterSend(claimed(1), accepted, SETTINGS, NOW)).toEqual({ state: 'SENT', outcome: accepted });
    const refused = { kind: 'refused', statusCode: 405, status: 'InsufficientBalance' } as const;
    expect(afterSend(claimed(1), refused, SETTINGS, NOW)).toEqual({ state: 'REFUSED', outcome: refused });
  });

  it('a certain failure is retried with backoff until the attempts are used up', () => {
    const failed = { kind: 'failed', error: 'HTTP 500' } as const;
    expect(afterSend(claimed(2), failed, SETTINGS, NOW, () => 0.5)).toEqual({
      state: 'QUEUED',
      nextAttemptAt: new Date(NOW.getTime() + 1000),
      error: 'HTTP 500',
      unconfirmed: false,
    });
    expect(afterSend(claimed(4), failed, SETTINGS, NOW)).toMatchObject({
      state: 'FAILED',
      error: 'HTTP 500',
    });
  });

  it('an unanswered hand-over is tried once more, never a third time', () => {
    const timeout = { kind: 'unconfirmed', error: 'timeout' } as const;
    expect(afterSend(claimed(1, 0), timeout, SETTINGS, NOW)).toMatchObject({
      state: 'QUEUED',
      unconfirmed: true,
    });
    expect(afterSend(claimed(2, 1), timeout, SETTINGS, NOW)).toMatchObject({
      state: 'FAILED',
      error: 'unconfirmed: timeout',
      unconfirmed: true,
    });
    // A claim that found two unanswered hand-overs (a crash, then a timeout) sends nothing.
    expect(exhaustedBeforeSend(claimed(3, 2))).toMatchObject({ state: 'FAILED' });
    expect(exhaustedBeforeSend(claimed(2, 1))).toBeUndefined();
  });

  it('backs off with full jitter under a doubling ceiling, capped', () => {
    expect(smsRetryDelayMs(1, SETTINGS, () => 0.999)).toBe(999);
    expect(smsRetryDelayMs(3, SETTINGS, () => 0.999)).toBe(3996);
    expect(smsRetryDelayMs(10, SETTINGS, () => 0.999)).toBe(4995);
  });
});
