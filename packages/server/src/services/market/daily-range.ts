import { DAILY_DEFAULT_DAYS, DAILY_MAX_DAYS, type ValidationDetail } from '@partner-api/contract';
import { localTime, nextDate } from './calendar.ts';

const daysBetween = (from: string, to: string) =>
  (Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000 + 1;

/**
 * The dates of a daily-bars request in a market's time zone, both included: `to` defaults to today
 * there and `from` to the 30 days that end on `to`. A range backwards or longer than 366 days is
 * refused with the field to blame (the operator's and the partners' daily bars alike).
 */
export function dailyRange(
  query: { from?: string | undefined; to?: string | undefined },
  timeZone: string,
  now: Date,
): { from: string; to: string } | { invalid: ValidationDetail[] } {
  const to = query.to ?? localTime(timeZone, now).date;
  const from = query.from ?? nextDate(to, 1 - DAILY_DEFAULT_DAYS);
  if (from > to) return { invalid: [{ field: 'from', message: 'must not be after to' }] };
  if (daysBetween(from, to) > DAILY_MAX_DAYS)
    return { invalid: [{ field: 'to', message: `must be at most ${DAILY_MAX_DAYS} days from from` }] };
  return { from, to };
}
