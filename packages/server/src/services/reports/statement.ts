import type { MonthlyStatementData, Report, Transaction } from '@partner-api/contract';
import { sql } from 'drizzle-orm';
import type { Db, Queryable } from '../../db/client.ts';
import { dateOf, rows } from '../../db/query.ts';
import { AMOUNT_DECIMALS, Big, type Decimal, holdingValue, UNITS_DECIMALS } from '../../lib/money.ts';
import { bookedTransactions } from '../investments/ledger.ts';
import { instantOf, localTime, NSE, nextDate } from '../market/calendar.ts';
import { platformOf, type ReportDeps, writeReport } from './write.ts';

/**
 * Monthly statements (docs/investments.md, Reports): one MONTHLY_STATEMENT per account and month
 * (its subject, YYYY-MM), for each customer with a position at the month's start or any entry in
 * the month; none for an account with neither. Months are local to the market (EAT).
 */

const TIME_ZONE = NSE.timeZone;

/** A month's days and the instants that bound it: [from, before). */
export function monthPeriod(month: string) {
  const [y, m] = month.split('-').map(Number) as [number, number];
  const first = `${month}-01`;
  const next = new Date(Date.UTC(y, m, 1)).toISOString().slice(0, 7);
  const last = nextDate(`${next}-01`, -1);
  return {
    period: { month, from: first, to: last, timeZone: TIME_ZONE },
    from: instantOf(TIME_ZONE, first, '00:00'),
    before: instantOf(TIME_ZONE, `${next}-01`, '00:00'),
  };
}

type Candidate = {
  organizationId: string;
  customerId: string;
  firstName: string;
  lastName: string;
  accountId: string | null;
};

/** Customers owed a statement of the month that have none yet (the originals' subject index). */
function candidates(db: Queryable, month: string, from: Date, before: Date) {
  const [start, end] = [from.toISOString(), before.toISOString()];
  return rows<Candidate>(
    db,
    sql`with active as (
  select customer_id from ledger_entries where created_at < ${end}::timestamptz
  group by customer_id, stock_id
  having coalesce(sum(units) filter (where created_at < ${start}::timestamptz), 0) <> 0
    or bool_or(created_at >= ${start}::timestamptz)
  union
  select customer_id from money_entries
  where created_at >= ${start}::timestamptz and created_at < ${end}::timestamptz
)
select c.organization_id as "organizationId", c.id as "customerId", c.first_name as "firstName",
  c.last_name as "lastName", acc.id as "accountId"
from active a join customers c on c.id = a.customer_id left join accounts acc on acc.customer_id = c.id
where not exists (select 1 from reports r where r.customer_id = c.id and r.type = 'MONTHLY_STATEMENT'
  and r.subject = ${month} and r.replaces is null)
order by c.id`,
  );
}

type PositionRow = {
  instrumentId: string;
  symbol: string;
  name: string;
  currency: string;
  opening: string | null;
  closing: string;
  openingPrice: string | null;
  openingPriceAsOf: string | null;
  closingPrice: string | null;
  closingPriceAsOf: string | null;
};

/** The last applied price (and its time) of the row's stock before an instant. */
const priceBefore = (instant: string) =>
  sql`(select p.price::text from prices p where p.stock_id = le.stock_id and p.status = 'APPLIED'
    and p.as_of < ${instant}::timestamptz order by p.as_of desc limit 1)`;
const priceAsOfBefore = (instant: string) =>
  sql`(select p.as_of::text from prices p where p.stock_id = le.stock_id and p.status = 'APPLIED'
    and p.as_of < ${instant}::timestamptz order by p.as_of desc limit 1)`;

/** Units held per instrument at the month's start and end, with the prices that value them. */
function positionRows(db: Queryable, customerId: string, from: Date, before: Date) {
  const [start, end] = [from.toISOString(), before.toISOString()];
  return rows<PositionRow>(
    db,
    sql`select le.stock_id as "instrumentId", s.symbol, s.name, s.currency,
  (sum(le.units) filter (where le.created_at < ${start}::timestamptz))::text as opening,
  sum(le.units)::text as closing,
  ${priceBefore(start)} as "openingPrice", ${priceAsOfBefore(start)} as "openingPriceAsOf",
  ${priceBefore(end)} as "closingPrice", ${priceAsOfBefore(end)} as "closingPriceAsOf"
from ledger_entries le join stocks s on s.id = le.stock_id
where le.customer_id = ${customerId} and le.created_at < ${end}::timestamptz
group by le.stock_id, s.symbol, s.name, s.currency
order by s.symbol`,
  );
}

type Holding = MonthlyStatementData['opening'];

function holdingsAt(list: PositionRow[], at: 'opening' | 'closing'): Holding {
  const values = new Map<string, Decimal>();
  const positions = list.flatMap((row) => {
    const units = new Big(row[at] ?? '0');
    if (units.eq('0')) return [];
    const price = at === 'opening' ? row.openingPrice : row.closingPrice;
    const asOf = at === 'opening' ? row.openingPriceAsOf : row.closingPriceAsOf;
    const value = price === null ? null : holdingValue(units, new Big(price), row.currency).amount;
    if (value) values.set(row.currency, (values.get(row.currency) ?? new Big('0')).plus(value));
    return [
      {
        instrument: { id: row.instrumentId, symbol: row.symbol, name: row.name, currency: row.currency },
        units: units.toFixed(UNITS_DECIMALS),
        price,
        priceAsOf: asOf === null ? null : dateOf(asOf).toISOString(),
        value: value === null ? null : value.toFixed(AMOUNT_DECIMALS),
      },
    ];
  });
  return {
    positions,
    values: [...values].map(([currency, value]) => ({ currency, value: value.toFixed(AMOUNT_DECIMALS) })),
  };
}

const sum = (list: (string | null)[]) => list.reduce((total, v) => total.plus(v ?? '0'), new Big('0'));

function groupBy<T>(list: T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of list) groups.set(key(item), [...(groups.get(key(item)) ?? []), item]);
  return groups;
}

/** The month's totals: money per currency and units per instrument, as the two ledgers sum them. */
function totalsOf(lines: Transaction[], symbolOf: (id: string) => string): MonthlyStatementData['totals'] {
  const money = groupBy(
    lines.filter((l) => l.ledger === 'MONEY'),
    (l) => l.currency!,
  );
  const units = groupBy(
    lines.filter((l) => l.ledger === 'UNITS'),
    (l) => l.instrumentId,
  );
  const amounts = (list: Transaction[], type?: string) =>
    sum(list.filter((l) => !type || l.type === type).map((l) => l.amount)).toFixed(AMOUNT_DECIMALS);
  const unitsOf = (list: Transaction[], type?: string) =>
    sum(list.filter((l) => !type || l.type === type).map((l) => l.units)).toFixed(UNITS_DECIMALS);
  return {
    money: [...money].map(([currency, list]) => ({
      currency,
      collected: amounts(list, 'COLLECTION'),
      paidOut: amounts(list, 'PAYOUT'),
      refunded: amounts(list, 'REFUND'),
      net: amounts(list),
    })),
    units: [...units].map(([instrumentId, list]) => ({
      instrumentId,
      symbol: symbolOf(instrumentId),
      bought: unitsOf(list, 'BUY'),
      sold: unitsOf(list, 'SELL'),
      net: unitsOf(list),
    })),
    transactions: lines.length,
  };
}

/** The statement's data for one customer (read in the transaction that writes it). */
export async function statementData(
  db: Queryable,
  who: Candidate,
  month: string,
  deps: ReportDeps,
): Promise<MonthlyStatementData> {
  const { period, from, before } = monthPeriod(month);
  const list = await positionRows(db, who.customerId, from, before);
  const lines = await bookedTransactions(db, who, from, before);
  const symbols = new Map(list.map((row) => [row.instrumentId, row.symbol]));
  const missing = lines.map((l) => l.instrumentId).filter((id) => !symbols.has(id));
  if (missing.length > 0) {
    const found = await rows<{ id: string; symbol: string }>(
      db,
      sql`select id, symbol from stocks where id = any(${sql.param([...new Set(missing)])}::text[])`,
    );
    for (const row of found) symbols.set(row.id, row.symbol);
  }
  const symbolOf = (id: string) => symbols.get(id) ?? '';
  return {
    period,
    customer: { id: who.customerId, firstName: who.firstName, lastName: who.lastName },
    accountId: who.accountId,
    opening: holdingsAt(list, 'opening'),
    closing: holdingsAt(list, 'closing'),
    transactions: lines.map((l) => ({
      id: l.id,
      ledger: l.ledger,
      type: l.type,
      bookingDate: l.bookingDate!,
      instrumentId: l.instrumentId,
      symbol: symbolOf(l.instrumentId),
      amount: l.amount,
      currency: l.currency,
      units: l.units,
      price: l.execution?.price ?? null,
      orderId: l.references.find((r) => r.type === 'REQUEST')?.id ?? null,
    })),
    totals: totalsOf(lines, symbolOf),
    platform: platformOf(deps.config),
  };
}

export type StatementDeps = ReportDeps & { clock: () => Date };

/**
 * Writes the month's statements not yet written, each in its own transaction; safe on several
 * instances at once and on a rerun (an original per customer and month: the loser writes nothing).
 * Returns the statements this call wrote.
 */
export async function generateMonthlyStatements(
  db: Db,
  deps: StatementDeps,
  month: string,
): Promise<Report[]> {
  const { from, before } = monthPeriod(month);
  const written: Report[] = [];
  for (const who of await candidates(db, month, from, before)) {
    const report = await db.transaction(async (tx) =>
      writeReport(tx, deps, {
        organizationId: who.organizationId,
        customerId: who.customerId,
        type: 'MONTHLY_STATEMENT',
        subject: month,
        data: await statementData(tx, who, month, deps),
        createdAt: deps.clock(),
      }),
    );
    if (report) written.push(report);
  }
  return written;
}

/** Statements are written from 01:00 on the 1st (EAT): an hour for the month's last commits to land. */
const GRACE_MS = 3_600_000;

/** The month whose statements are due at `now` (the one before now's, in EAT), once past the grace hour. */
export function dueMonth(now: Date): string {
  const local = localTime(TIME_ZONE, new Date(now.getTime() - GRACE_MS)).date;
  const [y, m] = local.split('-').map(Number) as [number, number];
  return new Date(Date.UTC(y, m - 2, 1)).toISOString().slice(0, 7);
}

/** `month` is YYYY-MM and entirely past at `now` (its statements may be written). */
export function isPastMonth(month: string, now: Date): boolean {
  return monthPeriod(month).before.getTime() <= now.getTime();
}

/**
 * Housekeeping's statement run (server.ts): the due month's missing statements, then nothing more
 * for that month in this process (the candidates query reads the month's ledger entries, so it is
 * not repeated every tick once the month is done); a failed run is retried at the next tick.
 */
export function monthlyStatementsTask(db: Db, deps: StatementDeps): (now: Date) => Promise<number> {
  let done: string | undefined;
  return async (now) => {
    const month = dueMonth(now);
    if (month === done) return 0;
    const written = await generateMonthlyStatements(db, deps, month);
    done = month;
    return written.length;
  };
}
