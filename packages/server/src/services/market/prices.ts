import { createId } from '@partner-api/contract';
import { sql } from 'drizzle-orm';
import type { Queryable, Tx } from '../../db/client.ts';
import { dateOf, one, rows, run } from '../../db/query.ts';
import { Big } from '../../lib/money.ts';
import { instantOf, localTime, nextDate, rulesOf } from './calendar.ts';

export type PriceSource = 'FEED' | 'IMPORT' | 'EDIT';
export type PriceStatus = 'APPLIED' | 'HELD' | 'REJECTED';

export type PriceRecord = {
  id: string;
  stockId: string;
  symbol: string;
  price: string;
  asOf: Date;
  source: PriceSource;
  status: PriceStatus;
  /** The previous close the band was measured from, when it was. */
  reference: string | null;
  decidedAt: Date | null;
};

type PriceRow = Omit<PriceRecord, 'asOf' | 'decidedAt'> & { asOf: string; decidedAt: string | null };

const priceColumns = sql`p.id, p.stock_id as "stockId", s.symbol, p.price::text as price, p.as_of::text as "asOf",
  p.source, p.status, p.reference::text as reference, p.decided_at::text as "decidedAt"`;

const recordOf = (row: PriceRow): PriceRecord => ({
  ...row,
  asOf: dateOf(row.asOf),
  decidedAt: row.decidedAt === null ? null : dateOf(row.decidedAt),
});

/**
 * Whether `price` moves beyond the band from `reference` (the previous close): |price/reference − 1|
 * greater than the band. No reference (a first price): never.
 */
export function beyondBand(price: string, reference: string | null, band: number): boolean {
  if (reference === null || new Big(reference).lte('0')) return false;
  return new Big(price).div(reference).minus('1').abs().gt(String(band));
}

/**
 * Records one price of an instrument. A feed price that moves beyond its market's daily band from
 * the previous close (the last applied price before the trading day of `asOf` began) is HELD for the
 * operator; every other price is APPLIED. An applied price becomes the instrument's price unless a
 * newer one already is (feeds may deliver out of order). Undefined when the instrument is unknown.
 */
export async function recordPrice(
  tx: Tx,
  input: { symbol: string; price: string; asOf: Date; source: PriceSource },
): Promise<PriceRecord | undefined> {
  const stock = await one<{ id: string; market: string }>(
    tx,
    sql`select id, market from stocks where symbol = ${input.symbol} for update`,
  );
  if (!stock) return undefined;
  const rules = rulesOf(stock.market);
  const dayStart = instantOf(rules.timeZone, localTime(rules.timeZone, input.asOf).date, '00:00');
  const previous = await one<{ price: string }>(
    tx,
    sql`select price::text as price from prices where stock_id = ${stock.id} and status = 'APPLIED'
  and as_of < ${dayStart.toISOString()}::timestamptz order by as_of desc limit 1`,
  );
  const reference = previous?.price ?? null;
  const held = input.source === 'FEED' && beyondBand(input.price, reference, rules.band);
  const id = createId();
  await run(
    tx,
    sql`insert into prices (id, stock_id, price, as_of, source, status, reference)
  values (${id}, ${stock.id}, ${input.price}::numeric, ${input.asOf.toISOString()}::timestamptz, ${input.source},
    ${held ? 'HELD' : 'APPLIED'}, ${reference}::numeric)`,
  );
  if (!held) await applyToInstrument(tx, stock.id, input.price, input.asOf);
  return (await priceById(tx, id)) as PriceRecord;
}

async function applyToInstrument(tx: Tx, stockId: string, price: string, asOf: Date) {
  await run(
    tx,
    sql`update stocks set price = ${price}::numeric, price_as_of = ${asOf.toISOString()}::timestamptz,
    updated_at = now()
  where id = ${stockId} and (price_as_of is null or price_as_of <= ${asOf.toISOString()}::timestamptz)`,
  );
}

export async function priceById(db: Queryable, id: string): Promise<PriceRecord | undefined> {
  const row = await one<PriceRow>(
    db,
    sql`select ${priceColumns} from prices p join stocks s on s.id = p.stock_id where p.id = ${id}`,
  );
  return row && recordOf(row);
}

/** Prices held for the operator, oldest first. */
export async function listHeldPrices(db: Queryable): Promise<PriceRecord[]> {
  const found = await rows<PriceRow>(
    db,
    sql`select ${priceColumns} from prices p join stocks s on s.id = p.stock_id
  where p.status = 'HELD' order by p.as_of, p.id`,
  );
  return found.map(recordOf);
}

/** An instrument's prices in a time range, oldest first (every source and status). */
export async function listPrices(
  db: Queryable,
  symbol: string,
  range: { from?: Date; to?: Date } = {},
): Promise<PriceRecord[]> {
  const from = range.from ? sql` and p.as_of >= ${range.from.toISOString()}::timestamptz` : sql``;
  const to = range.to ? sql` and p.as_of < ${range.to.toISOString()}::timestamptz` : sql``;
  const found = await rows<PriceRow>(
    db,
    sql`select ${priceColumns} from prices p join stocks s on s.id = p.stock_id
  where s.symbol = ${symbol}${from}${to} order by p.as_of, p.created_at`,
  );
  return found.map(recordOf);
}

/** An instrument's id and market by its symbol; undefined when none has it. */
export async function instrumentBySymbol(
  db: Queryable,
  symbol: string,
): Promise<{ id: string; market: string } | undefined> {
  return one<{ id: string; market: string }>(db, sql`select id, market from stocks where symbol = ${symbol}`);
}

/** One market-local day of an instrument's applied prices. Prices are decimal strings ('100.0000'). */
export type DailyBar = {
  date: string;
  open: string;
  high: string;
  low: string;
  close: string;
  count: number;
};

/**
 * An instrument's daily open, high, low and close from its APPLIED prices (held and rejected ones are
 * not prices it had), per day in `timeZone` from `fromDate` to `toDate` (YYYY-MM-DD, both included),
 * oldest first. A price belongs to the local date of its as-of time (23:30 UTC is the next day in
 * EAT); open and close are the day's first and last by as-of time. A day without an applied price
 * (a weekend, a holiday, a day the feed was down) has no bar.
 */
export async function dailyBars(
  db: Queryable,
  stockId: string,
  fromDate: string,
  toDate: string,
  timeZone: string,
): Promise<DailyBar[]> {
  const from = instantOf(timeZone, fromDate, '00:00');
  const to = instantOf(timeZone, nextDate(toDate), '00:00');
  const found = await rows<{ price: string; asOf: string }>(
    db,
    sql`select price::text as price, as_of::text as "asOf" from prices
  where stock_id = ${stockId} and status = 'APPLIED'
    and as_of >= ${from.toISOString()}::timestamptz and as_of < ${to.toISOString()}::timestamptz
  order by as_of, created_at, id`,
  );
  const bars: DailyBar[] = [];
  for (const { price, asOf } of found) {
    const date = localTime(timeZone, dateOf(asOf)).date;
    const bar = bars.at(-1);
    if (bar?.date !== date) {
      bars.push({ date, open: price, high: price, low: price, close: price, count: 1 });
      continue;
    }
    if (new Big(price).gt(bar.high)) bar.high = price;
    if (new Big(price).lt(bar.low)) bar.low = price;
    bar.close = price;
    bar.count += 1;
  }
  return bars;
}

/**
 * The operator's decision on a held price: APPLIED (it becomes the instrument's price unless a newer
 * one is) or REJECTED. Undefined when no held price has that id (unknown, or decided already).
 */
export async function decideHeldPrice(
  tx: Tx,
  id: string,
  decision: 'APPLIED' | 'REJECTED',
): Promise<PriceRecord | undefined> {
  const decided = await one<{ stockId: string; price: string; asOf: string }>(
    tx,
    sql`update prices set status = ${decision}, decided_at = now() where id = ${id} and status = 'HELD'
  returning stock_id as "stockId", price::text as price, as_of::text as "asOf"`,
  );
  if (!decided) return undefined;
  if (decision === 'APPLIED')
    await applyToInstrument(tx, decided.stockId, decided.price, dateOf(decided.asOf));
  return priceById(tx, id);
}

/**
 * Whether an instrument's price may be traded at `now`: stale when it is older than `maxAgeMs`
 * (during a session a price that stopped moving is no price at all), or missing.
 */
export function isStale(priceAsOf: Date | null, now: Date, maxAgeMs: number): boolean {
  return priceAsOf === null || now.getTime() - priceAsOf.getTime() > maxAgeMs;
}

/** An instrument with its current price and the source of the applied price that set it. */
export type InstrumentPrice = {
  id: string;
  symbol: string;
  name: string;
  market: string;
  currency: string;
  isActive: boolean;
  price: string;
  priceAsOf: Date | null;
  /** The source of the newest applied price at or before `priceAsOf`; null when none is recorded. */
  source: PriceSource | null;
};

/**
 * Every instrument (or the one of `symbol`) by symbol, with its price, its as-of time, and the
 * source of the applied price that made it (the console's Market page, the audit of a decision).
 */
export async function instrumentPrices(db: Queryable, symbol?: string): Promise<InstrumentPrice[]> {
  const only = symbol === undefined ? sql`` : sql` where s.symbol = ${symbol}`;
  const found = await rows<Omit<InstrumentPrice, 'priceAsOf'> & { priceAsOf: string | null }>(
    db,
    sql`select s.id, s.symbol, s.name, s.market, s.currency, s.is_active as "isActive", s.price::text as price,
  s.price_as_of::text as "priceAsOf", latest.source
from stocks s left join lateral (
  select p.source from prices p where p.stock_id = s.id and p.status = 'APPLIED'
    and (s.price_as_of is null or p.as_of <= s.price_as_of)
  order by p.as_of desc, p.created_at desc limit 1
) latest on true${only}
order by s.symbol`,
  );
  return found.map((row) => ({ ...row, priceAsOf: row.priceAsOf === null ? null : dateOf(row.priceAsOf) }));
}
