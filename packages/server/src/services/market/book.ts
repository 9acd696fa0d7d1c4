import { sql } from 'drizzle-orm';
import type { AppContext } from '../../context.ts';
import type { Queryable } from '../../db/client.ts';
import { one, rows } from '../../db/query.ts';
import { Big } from '../../lib/money.ts';
import type { Log } from '../payments/provider.ts';
import { instantOf, localTime, NSE, nextDate } from './calendar.ts';

/** One instrument's line of the book for a trading day (docs/market.md, "The operator's book"). */
export type BookLine = {
  symbol: string;
  /** Units customers bought and sold that day (executions). */
  bought: string;
  sold: string;
  /** What customers hold at the end of the day: the sum of their claims. */
  claims: string;
  /** The broker's pooled whole shares, as last recorded on or before the day; null: never recorded. */
  pooled: string | null;
  pooledDate: string | null;
  /** Whole shares to buy (positive) or that could be sold (negative) at the exchange so that the
   * pooled position covers the claims, rounded up to whole shares. */
  toTrade: string;
  /** The claims exceed the pooled position. */
  shortfall: boolean;
};

/**
 * The book of a trading day in the NSE's time zone: per instrument that anyone holds, traded or has a
 * pooled position in. Claims at the end of `date` are today's holdings less what was executed after
 * it (bought units taken back, sold ones added back), so a past day reads as it was.
 */
export async function bookFor(db: Queryable, date: string): Promise<BookLine[]> {
  const start = instantOf(NSE.timeZone, date, '00:00').toISOString();
  const end = instantOf(NSE.timeZone, nextDate(date), '00:00').toISOString();
  const found = await rows<Omit<BookLine, 'toTrade' | 'shortfall'>>(
    db,
    sql`with day as (
  select stock_id,
    coalesce(sum(units) filter (where side = 'BUY' and executed_at >= ${start}::timestamptz and executed_at < ${end}::timestamptz), 0) as bought,
    coalesce(sum(units) filter (where side = 'SELL' and executed_at >= ${start}::timestamptz and executed_at < ${end}::timestamptz), 0) as sold,
    coalesce(sum(case when side = 'BUY' then units else -units end) filter (where executed_at >= ${end}::timestamptz), 0) as later
  from executions group by stock_id
), held as (
  select stock_id, sum(units) as units from holdings group by stock_id
), pooled as (
  select distinct on (stock_id) stock_id, units, date from pooled_positions
  where date <= ${date} order by stock_id, date desc
)
select s.symbol, coalesce(day.bought, 0)::text as bought, coalesce(day.sold, 0)::text as sold,
  (coalesce(held.units, 0) - coalesce(day.later, 0))::text as claims,
  pooled.units::text as pooled, pooled.date as "pooledDate"
from stocks s
left join day on day.stock_id = s.id
left join held on held.stock_id = s.id
left join pooled on pooled.stock_id = s.id
where coalesce(held.units, 0) <> 0 or coalesce(day.bought, 0) <> 0 or coalesce(day.sold, 0) <> 0
  or coalesce(day.later, 0) <> 0 or pooled.units is not null
order by s.symbol`,
  );
  return found.map((line) => {
    const claims = new Big(line.claims);
    const needed = claims.round(0, Big.roundUp);
    const pooled = new Big(line.pooled ?? '0');
    return {
      ...line,
      bought: new Big(line.bought).toFixed(4),
      sold: new Big(line.sold).toFixed(4),
      claims: claims.toFixed(4),
      pooled: line.pooled === null ? null : pooled.toFixed(4),
      toTrade: needed.minus(pooled).toFixed(0),
      shortfall: claims.gt(pooled),
    };
  });
}

/** Records the broker's pooled position of an instrument on a date; undefined for an unknown symbol. */
export async function recordPooledPosition(
  db: Queryable,
  input: { symbol: string; date: string; units: string },
): Promise<{ symbol: string; date: string; units: string } | undefined> {
  return one(
    db,
    sql`insert into pooled_positions (stock_id, date, units)
  select id, ${input.date}, ${input.units}::numeric from stocks where symbol = ${input.symbol}
  on conflict (stock_id, date) do update set units = excluded.units, recorded_at = now()
  returning ${input.symbol} as symbol, date, units::text as units`,
  );
}

/**
 * Checks today's book (NSE date at `now`): the instruments whose claims exceed the pooled position
 * set the shortfall gauge, are logged, and are kept for /healthz.
 */
export async function checkBook(ctx: AppContext, log: Log): Promise<void> {
  const now = ctx.clock();
  const date = localTime(NSE.timeZone, now).date;
  const shortfall = (await bookFor(ctx.database.db, date)).filter((l) => l.shortfall).map((l) => l.symbol);
  ctx.metrics.bookShortfall.set(shortfall.length);
  if (shortfall.length > 0)
    log.warn({ shortfall, date }, "book: customers' claims exceed the pooled position");
  ctx.bookCheck = { checkedAt: now, date, shortfall };
}
