import {
  type LedgerTransactionType,
  MONEY_TRANSACTION_TYPES,
  type Pagination,
  type Report,
  type ReportList,
  type ReportListQuery,
  type ReportType,
  type Transaction,
  type TransactionList,
  type TransactionListQuery,
} from '@partner-api/contract';
import { type SQL, sql } from 'drizzle-orm';
import type { Queryable } from '../../db/client.ts';
import { dateOf, one, rows } from '../../db/query.ts';
import { instantOf, localTime, NSE, nextDate } from '../market/calendar.ts';

/**
 * Transactions (docs/investments.md, Ledger): money movements are the payment transactions of
 * orders (their id is the payment transaction's, the subject of TRANSACTION.* events), booked when
 * their money entry is written; unit movements are the units ledger's entries, with their execution.
 */

/** Booking and value dates are local to the market (the NSE's time zone, as settlement dates are). */
const TIME_ZONE = NSE.timeZone;

type TransactionRow = {
  id: string;
  ledger: 'MONEY' | 'UNITS';
  customerId: string;
  type: LedgerTransactionType;
  status: Transaction['status'];
  amount: string | null;
  currency: string | null;
  units: string | null;
  instrumentId: string;
  provider: Transaction['provider'];
  failureReason: string | null;
  bookedAt: string | null;
  orderId: string | null;
  executionId: string | null;
  price: string | null;
  priceAsOf: string | null;
  executedAt: string | null;
  settlementDate: string | null;
  executionStatus: 'FILLED' | 'SETTLED' | null;
  createdAt: string;
  updatedAt: string;
};

const moneyType = sql`coalesce(me.kind, case when t.type = 'INCOMING' then 'COLLECTION'
  when o.side = 'SELL' then 'PAYOUT' else 'REFUND' end)`;

/** The money branch: a payment transaction, its order, and its money entry once money moved. */
const moneySelect = (where: SQL) => sql`select t.id, 'MONEY'::text as ledger, o.customer_id as "customerId",
  ${moneyType} as type, t.status,
  coalesce(me.amount, case when t.type = 'INCOMING' then t.amount else -t.amount end)::text as amount,
  t.currency, null::text as units, o.stock_id as "instrumentId", t.provider,
  t.failure_reason as "failureReason", me.created_at::text as "bookedAt", t.order_id as "orderId",
  null::text as "executionId", null::text as price, null::text as "priceAsOf",
  null::text as "executedAt", null::text as "settlementDate", null::text as "executionStatus",
  t.created_at as sort_at, t.created_at::text as "createdAt", t.updated_at::text as "updatedAt"
from transactions t join orders o on o.id = t.order_id
left join money_entries me on me.transaction_id = t.id
where ${where}`;

/** The units branch: a units entry, and the execution of a buy or a sell. */
const unitsSelect = (where: SQL) => sql`select le.id, 'UNITS'::text as ledger, le.customer_id as "customerId",
  le.kind as type, 'SUCCESS'::text as status, null::text as amount, null::text as currency,
  le.units::text as units, le.stock_id as "instrumentId", null::text as provider,
  null::text as "failureReason", le.created_at::text as "bookedAt", le.order_id as "orderId",
  e.id as "executionId", e.price::text as price, e.price_as_of::text as "priceAsOf",
  e.executed_at::text as "executedAt", e.settlement_date as "settlementDate", e.status as "executionStatus",
  le.created_at as sort_at, le.created_at::text as "createdAt",
  greatest(le.created_at, e.settled_at)::text as "updatedAt"
from ledger_entries le
left join executions e on e.order_id = le.order_id and le.kind in ('BUY', 'SELL')
where ${where}`;

const isMoneyType = (type: LedgerTransactionType) =>
  (MONEY_TRANSACTION_TYPES as readonly string[]).includes(type);

/**
 * The page and count queries of a listing, unexecuted. Each ledger's rows of the page come newest
 * first from its organization index (transactions_org_created_idx, ledger_entries_org_created_idx);
 * a customer's from orders_org_customer_idx and ledger_entries_holding_idx, a request's from the
 * order's key; the count reads the same indexes.
 */
export function buildTransactionQueries(organizationId: string, query: TransactionListQuery) {
  // The organization is named on one table of each branch, the one the branch is read from: named on
  // both sides of a join, it lets a planner without statistics (a new database) pair every row of
  // one side with every row of the other.
  const money: SQL[] = [];
  const units: SQL[] = [sql`le.organization_id = ${organizationId}`];
  if (query.requestId) {
    money.push(sql`o.id = ${query.requestId}`, sql`o.organization_id = ${organizationId}`);
    units.push(sql`le.order_id = ${query.requestId}`);
  } else if (query.customerId) {
    money.push(sql`o.organization_id = ${organizationId}`);
  } else {
    money.push(sql`t.organization_id = ${organizationId}`);
  }
  if (query.customerId) {
    money.push(sql`o.customer_id = ${query.customerId}`);
    units.push(sql`le.customer_id = ${query.customerId}`);
  }
  if (query.type) {
    money.push(sql`${moneyType} = ${query.type}`);
    units.push(sql`le.kind = ${query.type}`);
  }
  if (query.from) {
    const from = instantOf(TIME_ZONE, query.from, '00:00').toISOString();
    money.push(sql`t.created_at >= ${from}::timestamptz`);
    units.push(sql`le.created_at >= ${from}::timestamptz`);
  }
  if (query.to) {
    const before = instantOf(TIME_ZONE, nextDate(query.to), '00:00').toISOString();
    money.push(sql`t.created_at < ${before}::timestamptz`);
    units.push(sql`le.created_at < ${before}::timestamptz`);
  }
  const wantsMoney = query.ledger !== 'UNITS' && (!query.type || isMoneyType(query.type));
  const wantsUnits = query.ledger !== 'MONEY' && (!query.type || !isMoneyType(query.type));
  const branches: { select: SQL; order: SQL }[] = [];
  if (wantsMoney)
    branches.push({
      select: moneySelect(sql.join(money, sql` and `)),
      order: sql`t.created_at desc, t.id desc`,
    });
  if (wantsUnits)
    branches.push({
      select: unitsSelect(sql.join(units, sql` and `)),
      order: sql`le.created_at desc, le.id desc`,
    });
  if (branches.length === 0) return undefined;
  // A page needs at most its offset plus its length from each ledger, taken newest first along the
  // ledger's own (organization_id, created_at desc, id desc) index: the merge sorts those alone.
  const offset = (query.page - 1) * query.limit;
  const union = (branch: (b: { select: SQL; order: SQL }) => SQL) =>
    sql.join(
      branches.map((b) => sql`(${branch(b)})`),
      sql` union all `,
    );
  return {
    page: sql`select * from (${union((b) => sql`${b.select} order by ${b.order} limit ${offset + query.limit}`)}) m
  order by sort_at desc, id desc limit ${query.limit} offset ${offset}`,
    count: sql`select count(*)::int as total from (${union((b) => b.select)}) m`,
  };
}

const localDate = (text: string | null) => (text === null ? null : localTime(TIME_ZONE, dateOf(text)).date);
const iso = (text: string) => dateOf(text).toISOString();

function presentTransaction(row: TransactionRow): Transaction {
  const bookingDate = localDate(row.bookedAt);
  const references: Transaction['references'] = [];
  if (row.orderId) references.push({ type: 'REQUEST', id: row.orderId });
  if (row.ledger === 'MONEY') references.push({ type: 'PAYMENT', id: row.id });
  if (row.executionId) references.push({ type: 'EXECUTION', id: row.executionId });
  return {
    id: row.id,
    customerId: row.customerId,
    ledger: row.ledger,
    type: row.type,
    status: row.status,
    amount: row.amount,
    currency: row.currency,
    units: row.units,
    instrumentId: row.instrumentId,
    provider: row.provider,
    failureReason: row.failureReason,
    bookingDate,
    valueDate: row.settlementDate ?? bookingDate,
    execution: row.executionId
      ? {
          id: row.executionId,
          price: row.price!,
          priceAsOf: row.priceAsOf === null ? null : iso(row.priceAsOf),
          executedAt: iso(row.executedAt!),
          settlementDate: row.settlementDate!,
          status: row.executionStatus!,
        }
      : null,
    references,
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
  };
}

/** One page and the true total of a listing (none without queries: a filter no row can match). */
async function paged<Row, Item>(
  db: Queryable,
  queries: { page: SQL; count: SQL } | undefined,
  query: { page: number; limit: number },
  present: (row: Row) => Item,
): Promise<{ data: Item[]; pagination: Pagination }> {
  const [page, count] = queries
    ? await Promise.all([rows<Row>(db, queries.page), one<{ total: number }>(db, queries.count)])
    : [[], { total: 0 }];
  const total = count?.total ?? 0;
  return {
    data: page.map(present),
    pagination: { page: query.page, limit: query.limit, total, totalPages: Math.ceil(total / query.limit) },
  };
}

/** GET /transactions: newest first (createdAt, then id), with true totals even past the last page. */
export async function listTransactions(
  db: Queryable,
  organizationId: string,
  query: TransactionListQuery,
): Promise<TransactionList> {
  return paged(db, buildTransactionQueries(organizationId, query), query, presentTransaction);
}

/** GET /transactions/{id}: a payment transaction's id or a units entry's, in the organization. */
export async function getTransaction(
  db: Queryable,
  organizationId: string,
  id: string,
): Promise<Transaction | undefined> {
  const row = await one<TransactionRow>(
    db,
    sql`(${moneySelect(sql`t.id = ${id} and t.organization_id = ${organizationId}`)})
  union all (${unitsSelect(sql`le.id = ${id} and le.organization_id = ${organizationId}`)}) limit 1`,
  );
  return row && presentTransaction(row);
}

/**
 * A customer's transactions booked in [from, before): money movements once their money entry is
 * written, unit movements at their entry, oldest booking first (a monthly statement's lines).
 */
export async function bookedTransactions(
  db: Queryable,
  owner: { organizationId: string; customerId: string },
  from: Date,
  before: Date,
): Promise<Transaction[]> {
  const [start, end] = [from.toISOString(), before.toISOString()];
  const { organizationId, customerId } = owner;
  const found = await rows<TransactionRow>(
    db,
    sql`select * from ((${moneySelect(sql`o.organization_id = ${organizationId} and o.customer_id = ${customerId}
    and me.created_at >= ${start}::timestamptz and me.created_at < ${end}::timestamptz`)})
  union all (${unitsSelect(sql`le.organization_id = ${organizationId} and le.customer_id = ${customerId}
    and le.created_at >= ${start}::timestamptz and le.created_at < ${end}::timestamptz`)})) m
  order by "bookedAt"::timestamptz, ledger, sort_at, id`,
  );
  return found.map(presentTransaction);
}

export type ReportRow = {
  id: string;
  customerId: string;
  type: ReportType;
  replaces: string | null;
  createdAt: string;
  data: Record<string, unknown>;
};

export const reportColumns = sql`id, customer_id as "customerId", type, replaces, created_at::text as "createdAt", data`;

export const presentReport = (row: ReportRow): Report => ({
  id: row.id,
  customerId: row.customerId,
  type: row.type,
  replaces: row.replaces,
  createdAt: iso(row.createdAt),
  data: row.data,
});

/** The page and count queries of GET /reports: reports_org_created_idx, newest first. */
export function buildReportQueries(organizationId: string, query: ReportListQuery) {
  const conditions: SQL[] = [sql`organization_id = ${organizationId}`];
  if (query.customerId) conditions.push(sql`customer_id = ${query.customerId}`);
  if (query.type) conditions.push(sql`type = ${query.type}`);
  const where = sql.join(conditions, sql` and `);
  return {
    page: sql`select ${reportColumns} from reports where ${where}
  order by created_at desc, id desc limit ${query.limit} offset ${(query.page - 1) * query.limit}`,
    count: sql`select count(*)::int as total from reports where ${where}`,
  };
}

export async function listReports(
  db: Queryable,
  organizationId: string,
  query: ReportListQuery,
): Promise<ReportList> {
  return paged(db, buildReportQueries(organizationId, query), query, presentReport);
}

export async function getReport(
  db: Queryable,
  organizationId: string,
  id: string,
): Promise<Report | undefined> {
  const row = await one<ReportRow>(
    db,
    sql`select ${reportColumns} from reports where id = ${id} and organization_id = ${organizationId}`,
  );
  return row && presentReport(row);
}
