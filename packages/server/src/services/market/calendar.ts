/**
 * Market calendars: when a market trades, in its own time zone, and what date a trade settles. Pure
 * functions of an instant, the market's rules and its holidays (market_holidays, set by the
 * operator): nothing here reads the clock.
 */

export type MarketRules = {
  /** ISO 10383 MIC. */
  mic: string;
  name: string;
  /** IANA time zone of the sessions. */
  timeZone: string;
  /** ISO weekdays it trades on (1 = Monday). */
  tradingDays: readonly number[];
  /** Local HH:MM: the pre-open starts, continuous trading starts, trading ends. */
  preOpen: string;
  open: string;
  close: string;
  /** A trade settles this many trading days after its trade date (T+N). */
  settlementDays: number;
  /** The largest move from the previous close a price may make before the operator confirms it. */
  band: number;
};

/**
 * The Nairobi Securities Exchange: pre-open 09:00–09:30, opening auction 09:30–09:31, continuous
 * trading 09:31–15:00 EAT, Monday to Friday; settlement T+3; a ±10% daily price band.
 */
export const NSE: MarketRules = {
  mic: 'XNAI',
  name: 'Nairobi Securities Exchange',
  timeZone: 'Africa/Nairobi',
  tradingDays: [1, 2, 3, 4, 5],
  preOpen: '09:00',
  open: '09:31',
  close: '15:00',
  settlementDays: 3,
  band: 0.1,
};

export const MARKETS: Readonly<Record<string, MarketRules>> = { XNAI: NSE };

/** The rules of an instrument's market (the NSE's for a market we have no rules for). */
export const rulesOf = (market: string): MarketRules => MARKETS[market] ?? NSE;

/** A market's session at an instant: OPEN is continuous trading, the only time an order executes. */
export type SessionState = 'PRE_OPEN' | 'OPEN' | 'CLOSED';

export type Session = {
  state: SessionState;
  /** The local date at that instant (YYYY-MM-DD). */
  date: string;
  /** Whether that date is a trading day (a weekday of the market's that is not a holiday). */
  tradingDay: boolean;
};

type Local = { date: string; weekday: number; minutes: number };

const formatters = new Map<string, Intl.DateTimeFormat>();
function formatter(timeZone: string): Intl.DateTimeFormat {
  let found = formatters.get(timeZone);
  if (!found) {
    found = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      weekday: 'short',
    });
    formatters.set(timeZone, found);
  }
  return found;
}

const WEEKDAYS: Record<string, number> = { Mon: 1, Tue: 2, Wed: 3, Thu: 4, Fri: 5, Sat: 6, Sun: 7 };

function partsOf(timeZone: string, instant: Date) {
  const parts = Object.fromEntries(
    formatter(timeZone)
      .formatToParts(instant)
      .map((p) => [p.type, p.value]),
  );
  return {
    year: Number(parts.year),
    month: Number(parts.month),
    day: Number(parts.day),
    hour: Number(parts.hour),
    minute: Number(parts.minute),
    second: Number(parts.second),
    weekday: WEEKDAYS[parts.weekday as string] ?? 0,
  };
}

const pad = (n: number) => String(n).padStart(2, '0');
const minutesOf = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));

/** The local date, ISO weekday and minute of the day of an instant in a time zone. */
export function localTime(timeZone: string, instant: Date): Local {
  const p = partsOf(timeZone, instant);
  return {
    date: `${p.year}-${pad(p.month)}-${pad(p.day)}`,
    weekday: p.weekday,
    minutes: p.hour * 60 + p.minute,
  };
}

/** The instant a local date and HH:MM in a time zone names (zones with DST: the first such instant). */
export function instantOf(timeZone: string, date: string, hhmm: string): Date {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  const wanted = Date.UTC(y, m - 1, d, Number(hhmm.slice(0, 2)), Number(hhmm.slice(3, 5)));
  // The zone's offset at the guess, then once more at the corrected instant.
  let instant = wanted;
  for (let i = 0; i < 2; i++) {
    const p = partsOf(timeZone, new Date(instant));
    const shown = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second);
    instant += wanted - shown;
  }
  return new Date(instant);
}

/** The next calendar date (YYYY-MM-DD) after `date`. */
export function nextDate(date: string, days = 1): string {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  return new Date(Date.UTC(y, m - 1, d + days)).toISOString().slice(0, 10);
}

function weekdayOf(date: string): number {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  const day = new Date(Date.UTC(y, m - 1, d)).getUTCDay();
  return day === 0 ? 7 : day;
}

export function isTradingDay(rules: MarketRules, date: string, holidays: ReadonlySet<string>): boolean {
  return rules.tradingDays.includes(weekdayOf(date)) && !holidays.has(date);
}

/** The market's session at `instant`. */
export function sessionAt(rules: MarketRules, instant: Date, holidays: ReadonlySet<string>): Session {
  const local = localTime(rules.timeZone, instant);
  const tradingDay = isTradingDay(rules, local.date, holidays);
  let state: SessionState = 'CLOSED';
  if (tradingDay && local.minutes >= minutesOf(rules.open) && local.minutes < minutesOf(rules.close))
    state = 'OPEN';
  else if (tradingDay && local.minutes >= minutesOf(rules.preOpen) && local.minutes < minutesOf(rules.open))
    state = 'PRE_OPEN';
  return { state, date: local.date, tradingDay };
}

/** When continuous trading next opens at or after `instant` (`instant` itself while it is open). */
export function nextOpen(rules: MarketRules, instant: Date, holidays: ReadonlySet<string>): Date {
  const session = sessionAt(rules, instant, holidays);
  if (session.state === 'OPEN') return instant;
  let date = session.date;
  // Today, if its session has not started yet; else the next trading day (a year of holidays at most).
  if (!session.tradingDay || localTime(rules.timeZone, instant).minutes >= minutesOf(rules.open))
    date = nextDate(date);
  for (let i = 0; i < 366 && !isTradingDay(rules, date, holidays); i++) date = nextDate(date);
  return instantOf(rules.timeZone, date, rules.open);
}

/** The trading date `count` trading days after `date` (settlement: T+N of the market's calendar). */
export function addTradingDays(
  rules: MarketRules,
  date: string,
  count: number,
  holidays: ReadonlySet<string>,
): string {
  let result = date;
  for (let left = count; left > 0; ) {
    result = nextDate(result);
    if (isTradingDay(rules, result, holidays)) left -= 1;
  }
  return result;
}

/** The settlement date of a trade executed at `instant`. */
export function settlementDate(rules: MarketRules, instant: Date, holidays: ReadonlySet<string>): string {
  return addTradingDays(rules, localTime(rules.timeZone, instant).date, rules.settlementDays, holidays);
}
