import type { AppContext } from '../../context.ts';
import type { UssdData } from '../ussd/types.ts';
import { NSE, sessionAt } from './calendar.ts';
import { marketHolidays } from './holidays.ts';

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
export async function tradingNow(ctx: AppContext): Promise<UssdData['trading']> {
  if (!marketHoursEnforced(ctx.config)) return undefined;
  const now = ctx.clock();
  // Holidays as read at most once a minute (services/market/holidays.ts); a failed read: none.
  const holidays = await marketHolidays(ctx.database.db, NSE.mic, now).catch(() => new Set<string>());
  return {
    open: sessionAt(NSE, now, holidays).state === 'OPEN',
    nowMs: now.getTime(),
    maxAgeMs: ctx.config.PRICE_MAX_AGE_SECONDS * 1000,
  };
}
