/** East Africa Time is UTC+3 all year (no daylight saving). */
const EAT_OFFSET_MS = 3 * 60 * 60 * 1000;

/**
 * Daraja's `Timestamp` (`YYYYMMDDHHmmss`). The zone is not documented; East Africa Time is the
 * common reading (docs/payments.md). Make it once per request and use the same value for Password.
 */
export function darajaTimestamp(now: Date): string {
  const eat = new Date(now.getTime() + EAT_OFFSET_MS);
  const pad = (n: number, width = 2) => String(n).padStart(width, '0');
  return (
    pad(eat.getUTCFullYear(), 4) +
    pad(eat.getUTCMonth() + 1) +
    pad(eat.getUTCDate()) +
    pad(eat.getUTCHours()) +
    pad(eat.getUTCMinutes()) +
    pad(eat.getUTCSeconds())
  );
}

/** STK Push and STK Query `Password`: base64(Shortcode + Passkey + Timestamp), plain concatenation. */
export function stkPassword(shortcode: string, passkey: string, timestamp: string): string {
  return Buffer.from(`${shortcode}${passkey}${timestamp}`, 'utf8').toString('base64');
}
