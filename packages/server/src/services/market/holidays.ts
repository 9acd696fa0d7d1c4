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

/** The dates a market does not trade besides its weekends, as the calendar takes them. */
export async function holidaySet(db: Queryable, market: string): Promise<Set<string>> {
  return new Set((await listHolidays(db, market)).map((h) => h.date));
}

/** Sets (or renames) one holiday. */
export async function setHoliday(db: Queryable, holiday: Holiday): Promise<Holiday> {
  return (await one<Holiday>(
    db,
    sql`insert into market_holidays (market, date, name) values (${holiday.market}, ${holiday.date}, ${holiday.name})
  on conflict (market, date) do update set name = excluded.name returning market, date, name`,
  )) as Holiday;
}

/** Removes one holiday; false when there was none on that date. */
export async function removeHoliday(db: Queryable, market: string, date: string): Promise<boolean> {
  return (await run(db, sql`delete from market_holidays where market = ${market} and date = ${date}`)) > 0;
}
