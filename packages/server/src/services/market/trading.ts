import type { AppContext } from '../../context.ts';
import type { Queryable } from '../../db/client.ts';
import { dateOf } from '../../db/query.ts';
import type { UssdData } from '../ussd/types.ts';
import { NSE, sessionAt } from './calendar.ts';
import { marketHolidays } from './holidays.ts';
import { isStale } from './prices.ts';

/** Whether market hours and price ages bind orders: the setting, else on in production only. */
export function marketHoursEnforced(config: AppContext['config']): boolean {
  return (
    (config.MARKET_HOURS ?? (config.APP_ENV === 'production' ? 'enforced' : 'always-open')) === 'enforced'
  );
}

/**
 * What a USSD move needs to refuse an order outside the NSE's continuous session or at a stale price
 * (docs/market.md, "Orders and market hours"); undefined when market hours are not enforced.
 */
export async function tradingNow(
  ctx: AppContext,
  /** Where to read the holidays when they are not cached: a transaction the caller holds. */
  q: Queryable = ctx.database.db,
): Promise<UssdData['trading']> {
  if (!marketHoursEnforced(ctx.config)) return undefined;
  const now = ctx.clock();
  // Holidays as read at most once a minute (services/market/holidays.ts), through `q` when they are
  // not cached. A failed read fails the caller: a day is never taken for a trading day unread.
  const holidays = await marketHolidays(ctx.database.db, NSE.mic, now, q);
  return {
    open: sessionAt(NSE, now, holidays).state === 'OPEN',
    nowMs: now.getTime(),
    maxAgeMs: ctx.config.PRICE_MAX_AGE_SECONDS * 1000,
  };
}

/**
 * Whether an order executes now at a price of this as-of time: the market in its session and the
 * price fresh; always, when market hours are not enforced (`trading` undefined). The one rule the
 * order gate and the instruments' `fresh` both read.
 */
export function tradesNow(trading: UssdData['trading'], asOf: Date | null): boolean {
  return !trading || (trading.open && !isStale(asOf, new Date(trading.nowMs), trading.maxAgeMs));
}

/**
 * When a paid buy may execute at a price of this as-of time (ISO or store text; null: none): now,
 * by the context's clock, when the market is in session and the price fresh (or market hours are
 * not enforced); null when it must wait.
 */
export type MarketGate = (tx: Queryable, priceAsOf: string | null) => Promise<Date | null>;

/**
 * The gate of a context: reads its clock and settings at each call (tests change the clock), and
 * the holidays through the caller's transaction (PGlite has one connection: a read beside it waits).
 */
export function marketGate(ctx: AppContext): MarketGate {
  return async (tx, priceAsOf) => {
    const trading = await tradingNow(ctx, tx);
    const asOf = priceAsOf === null ? null : dateOf(priceAsOf);
    if (!tradesNow(trading, asOf)) return null;
    return trading ? new Date(trading.nowMs) : ctx.clock();
  };
}
