import type { SmsSendOutcome } from './gateway/client.ts';
import { type ClaimedSms, MAX_UNCONFIRMED_SENDS, type SmsChange } from './store.ts';

export type SmsRetrySettings = {
  SMS_MAX_ATTEMPTS: number;
  SMS_BACKOFF_BASE_MS: number;
  SMS_BACKOFF_MAX_MS: number;
};

/** Full jitter: after the n-th failed attempt, uniform in [0, min(max, base·2^(n-1))). */
export function smsRetryDelayMs(attempts: number, settings: SmsRetrySettings, random = Math.random): number {
  const ceiling = Math.min(
    settings.SMS_BACKOFF_MAX_MS,
    settings.SMS_BACKOFF_BASE_MS * 2 ** Math.min(Math.max(attempts - 1, 0), 30),
  );
  return Math.floor(random() * ceiling);
}

/**
 * What follows a hand-over (pure): accepted is SENT; refused is REFUSED, never retried; a certain
 * failure is retried with backoff until SMS_MAX_ATTEMPTS, then FAILED; an unconfirmed one is
 * retried only while fewer than MAX_UNCONFIRMED_SENDS hand-overs went unanswered, so the gateway
 * gets one SMS at most twice.
 */
export function afterSend(
  sms: ClaimedSms,
  outcome: SmsSendOutcome,
  settings: SmsRetrySettings,
  now: Date,
  random = Math.random,
): SmsChange {
  switch (outcome.kind) {
    case 'accepted':
      return { state: 'SENT', outcome };
    case 'refused':
      return { state: 'REFUSED', outcome };
    case 'failed':
    case 'unconfirmed': {
      const unconfirmed = outcome.kind === 'unconfirmed';
      const statusCode = outcome.kind === 'failed' ? outcome.statusCode : undefined;
      const error = unconfirmed ? `unconfirmed: ${outcome.error}` : outcome.error;
      const spent = unconfirmed && sms.unconfirmedSends + 1 >= MAX_UNCONFIRMED_SENDS;
      if (spent || sms.attempts >= settings.SMS_MAX_ATTEMPTS)
        return { state: 'FAILED', error, unconfirmed, ...(statusCode ? { statusCode } : {}) };
      const nextAttemptAt = new Date(now.getTime() + smsRetryDelayMs(sms.attempts, settings, random));
      return { state: 'QUEUED', nextAttemptAt, error, unconfirmed, ...(statusCode ? { statusCode } : {}) };
    }
  }
}

/** A claim that found the SMS already handed over unanswered twice: not sent a third time. */
export function exhaustedBeforeSend(sms: ClaimedSms): SmsChange | undefined {
  if (sms.unconfirmedSends < MAX_UNCONFIRMED_SENDS) return undefined;
  return {
    state: 'FAILED',
    error: 'unconfirmed: handed to the gateway twice without an answer; it may have been sent',
    unconfirmed: false,
  };
}
