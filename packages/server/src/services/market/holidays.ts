import { sql } from 'drizzle-orm';
import type { Queryable } from '../../db/client.ts';
import { one, rows, run } from '../../db/query.ts';

export type Holiday = { market: string; date: string; name: string };

/** A market's holidays, by date. */
export async function listHolidays(db: Queryable, market: string): Promise<Holiday[]> {
  return rows<Holiday>(
    db,
    sql`select market, date, name from market_holidays where market = ${market} order by date`,
  );
}

/** The dates a market does not trade besides its weekends, as the calendar takes them (read now). */
export async function holidaySet(db: Queryable, market: string): Promise<Set<string>> {
  return new Set((await listHolidays(db, market)).map((h) => h.date));
}

/** How long `marketHolidays` keeps a market's holidays: one read a minute, not one per USSD move. */
export const HOLIDAYS_TTL_MS = 60_000;

type Cached = { at: number; generation: number; holidays: Promise<ReadonlySet<string>> };
/** Per store (the `db` given), per market. */
const cache = new WeakMap<object, Map<string, Cached>>();
/** Bumped by every change of a market's holidays made in this process: older reads are dropped. */
const generations = new Map<string, number>();

/**
 * The dates a market does not trade besides its weekends, read at most once per `HOLIDAYS_TTL_MS`
 * per store and market (by `now`, the caller's clock; a clock set back reads again). A holiday set
 * or removed through `setHoliday`/`removeHoliday` in this process is seen by the next call; one
 * changed by another instance within the TTL. A failed read is not kept.
 * The cache is keyed by `db`: pass the store's `Db`, not a transaction, to share it. Inside a
 * transaction, pass it as `via`: a read the cache needs runs in it (a read on the pool could wait for
 * the connection that transaction holds), and is kept for the store. A change written in a
 * transaction is forgotten when the write returns, not at the commit: a read in between may keep the
 * old holidays for the TTL (the operator's routes write outside a transaction).
 */
export function marketHolidays(
  db: Queryable,
  market: string,
  now: Date,
  via: Queryable = db,
): Promise<ReadonlySet<string>> {
  let byMarket = cache.get(db);
  if (!byMarket) {
    byMarket = new Map();
    cache.set(db, byMarket);
  }
  const at = now.getTime();
  const generation = generations.get(market) ?? 0;
  const hit = byMarket.get(market);
  if (hit && hit.generation === generation && at >= hit.at && at - hit.at <= HOLIDAYS_TTL_MS)
    return hit.holidays;
  const entry: Cached = { at, generation, holidays: holidaySet(via, market) };
  byMarket.set(market, entry);
  const kept = byMarket;
  entry.holidays.catch(() => {
    if (kept.get(market) === entry) kept.delete(market);
  });
  return entry.holidays;
}

/** Every cached read of `market`'s holidays is stale: called once a change has been written. */
function changed(market: string): void {
  generations.set(market, (generations.get(market) ?? 0) + 1);
}

/** Sets (or renames) one holiday. */
export async function setHoliday(db: Queryable, holiday: Holiday): Promise<Holiday> {
  try {
    return (await one<Holiday>(
      db,
      sql`insert into market_holidays (market, date, name) values (${holiday.market}, ${holiday.date}, ${holiday.name})
  on conflict (market, date) do update set name = excluded.name returning market, date, name`,
    )) as Holiday;
  } finally {
    changed(holiday.market);
  }
}

/** Removes one holiday; false when there was none on that date. */
export async function removeHoliday(db: Queryable, market: string, date: string): Promise<boolean> {
  try {
    return (await run(db, sql`delete from market_holidays where market = ${market} and date = ${date}`)) > 0;
  } finally {
    changed(market);
  }
}
