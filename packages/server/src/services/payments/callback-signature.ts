import { createHmac, timingSafeEqual } from 'node:crypto';

export const CALLBACK_SIGNATURE_HEADER = 'x-callback-signature';

/** `sha256=<hex HMAC-SHA256 of the raw body>` with PROVIDER_CALLBACK_SECRET. */
export function signCallback(secret: string, rawBody: string): string {
  return `sha256=${createHmac('sha256', secret).update(rawBody, 'utf8').digest('hex')}`;
}

/** Constant-time check of the header against the raw body bytes as received (never a re-serialised body). */
export function verifyCallbackSignature(
  secret: string,
  rawBody: string,
  header: string | undefined,
): boolean {
  const match = /^sha256=([0-9a-f]{64})$/i.exec(header?.trim() ?? '');
  if (!match?.[1]) return false;
  const expected = createHmac('sha256', secret).update(rawBody, 'utf8').digest();
  return timingSafeEqual(Buffer.from(match[1], 'hex'), expected);
}
