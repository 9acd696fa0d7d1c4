/**
 * Daraja's `Timestamp`, `YYYYMMDDHHmmss` in East Africa Time (UTC+3 all year, no daylight saving):
 * the zone Daraja's samples read in.
 */
export function darajaTimestamp(now: Date): string {
  const eat = new Date(now.getTime() + 3 * 3600_000).toISOString();
  return eat.slice(0, 19).replace(/\D/g, '');
}

/** STK Push and STK Query `Password` as Daraja documents it: base64 of Shortcode + Passkey + Timestamp. */
export const stkPassword = (shortcode: string, passkey: string, timestamp: string): string =>
  Buffer.from(shortcode + passkey + timestamp).toString('base64');

/** `DDMMYYYYHHmmss` in EAT, as in CheckoutRequestID `ws_CO_10072024091526…`. */
export function ddmmyyyyhhmmss(now: Date): string {
  const t = darajaTimestamp(now);
  return `${t.slice(6, 8)}${t.slice(4, 6)}${t.slice(0, 4)}${t.slice(8)}`;
}

/** `DD.MM.YYYY HH:mm:ss` in EAT, B2C's TransactionCompletedDateTime. */
export function dottedDateTime(now: Date): string {
  const t = darajaTimestamp(now);
  return `${t.slice(6, 8)}.${t.slice(4, 6)}.${t.slice(0, 4)} ${t.slice(8, 10)}:${t.slice(10, 12)}:${t.slice(12)}`;
}
