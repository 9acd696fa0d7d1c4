import { createHmac, timingSafeEqual } from 'node:crypto';

export const CALLBACK_SIGNATURE_HEADER = 'x-callback-signature';

/** How far a signed callback's time may be from ours, either way (docs/decisions.md). */
export const CALLBACK_TOLERANCE_SECONDS = 300;

const mac = (secret: string, unixSeconds: number, rawBody: string) =>
  createHmac('sha256', secret).update(`${unixSeconds}.${rawBody}`, 'utf8').digest();

/**
 * `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">` with PROVIDER_CALLBACK_SECRET: the time
 * is covered by the MAC, so a captured callback cannot be replayed outside the window.
 */
export function signCallback(secret: string, rawBody: string, at: Date = new Date()): string {
  const t = Math.floor(at.getTime() / 1000);
  return `t=${t},v1=${mac(secret, t, rawBody).toString('hex')}`;
}

export type CallbackSignatureCheck = { ok: true } | { ok: false; reason: 'invalid' | 'outside-window' };

/**
 * Constant-time check of the header against the raw body bytes as received (never a re-serialised
 * body), then of its time: a valid MAC whose time is more than CALLBACK_TOLERANCE_SECONDS from
 * `now` is refused as outside the window. No time, or the old `sha256=` form: invalid.
 */
export function verifyCallbackSignature(
  secret: string,
  rawBody: string,
  header: string | undefined,
  now: Date = new Date(),
): CallbackSignatureCheck {
  const match = /^t=(\d{1,12}),v1=([0-9a-f]{64})$/i.exec(header?.trim() ?? '');
  if (!match?.[1] || !match[2]) return { ok: false, reason: 'invalid' };
  const t = Number(match[1]);
  if (!timingSafeEqual(Buffer.from(match[2], 'hex'), mac(secret, t, rawBody)))
    return { ok: false, reason: 'invalid' };
  if (Math.abs(now.getTime() / 1000 - t) > CALLBACK_TOLERANCE_SECONDS)
    return { ok: false, reason: 'outside-window' };
  return { ok: true };
}
