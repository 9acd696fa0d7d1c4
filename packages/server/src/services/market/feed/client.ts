import type { PriceFeedSettings } from './settings.ts';

/** One price the feed gave, checked: a symbol, a positive decimal and an as-of instant. */
export type FeedPrice = { symbol: string; price: string; asOf: Date };
/** A row the feed gave that is not a price (logged and counted, never recorded). */
export type FeedRejection = { row: number; reason: string };
export type FeedPull =
  | { ok: true; prices: FeedPrice[]; rejected: FeedRejection[] }
  | { ok: false; reason: string };

const SYMBOL = /^[A-Z0-9][A-Z0-9.]{0,11}$/;
const PRICE = /^\d{1,14}(\.\d{1,4})?$/;

/** Checks one row; the price with four decimals, as the catalog keeps it. */
function priceOf(symbol: unknown, price: unknown, asOf: unknown): FeedPrice | string {
  const s = typeof symbol === 'string' ? symbol.trim().toUpperCase() : '';
  if (!SYMBOL.test(s)) return 'symbol must be 1 to 12 letters, digits or dots';
  const p = typeof price === 'number' ? String(price) : typeof price === 'string' ? price.trim() : '';
  if (!PRICE.test(p) || /^0+(\.0+)?$/.test(p))
    return 'price must be a positive decimal with up to 4 decimals';
  const at = typeof asOf === 'string' ? new Date(asOf) : undefined;
  if (!at || Number.isNaN(at.getTime()) || !/[zZ]|[+-]\d{2}:\d{2}$/.test(String(asOf)))
    return 'asOf must be an ISO 8601 time with its offset';
  return { symbol: s, price: p, asOf: at };
}

/**
 * The feed's body: JSON `{"prices":[{"symbol","price","asOf"}]}`, or CSV with the header
 * `symbol,price,as_of` (docs/market.md, "The price feed"). Rows that are not prices are rejected one
 * by one; a body that is neither is a failed pull.
 */
export function parseFeed(format: 'json' | 'csv', body: string): FeedPull {
  const prices: FeedPrice[] = [];
  const rejected: FeedRejection[] = [];
  const take = (row: number, parsed: FeedPrice | string) => {
    if (typeof parsed === 'string') rejected.push({ row, reason: parsed });
    else prices.push(parsed);
  };
  if (format === 'json') {
    let json: unknown;
    try {
      json = JSON.parse(body);
    } catch {
      return { ok: false, reason: 'the body is not JSON' };
    }
    const list = (json as { prices?: unknown })?.prices;
    if (!Array.isArray(list)) return { ok: false, reason: 'the body has no prices array' };
    list.forEach((item, i) => {
      const o = (item ?? {}) as Record<string, unknown>;
      take(i + 1, priceOf(o.symbol, o.price, o.asOf));
    });
    return { ok: true, prices, rejected };
  }
  const lines = body.split(/\r?\n/).filter((line) => line.trim() !== '');
  const header = lines[0]?.split(',').map((h) => h.trim().toLowerCase());
  if (header?.join(',') !== 'symbol,price,as_of')
    return { ok: false, reason: 'the CSV header must be symbol,price,as_of' };
  lines.slice(1).forEach((line, i) => {
    const cells = line.split(',');
    if (cells.length !== 3) rejected.push({ row: i + 1, reason: 'a row must have 3 cells' });
    else take(i + 1, priceOf(cells[0], cells[1], cells[2]?.trim()));
  });
  return { ok: true, prices, rejected };
}

/** Pulls the feed once: an answer that is not a 2xx, a timeout or a reset is a failed pull. */
export async function pullFeed(
  settings: PriceFeedSettings,
  fetchImpl: typeof fetch = fetch,
): Promise<FeedPull> {
  try {
    const response = await fetchImpl(settings.url, {
      headers: settings.token ? { authorization: `Bearer ${settings.token}` } : {},
      signal: AbortSignal.timeout(settings.timeoutMs),
    });
    const body = await response.text();
    if (!response.ok) return { ok: false, reason: `the feed answered ${response.status}` };
    return parseFeed(settings.format, body);
  } catch (error) {
    const name = (error as Error).name;
    return {
      ok: false,
      reason: name === 'TimeoutError' ? 'the feed did not answer in time' : 'the feed could not be reached',
    };
  }
}
