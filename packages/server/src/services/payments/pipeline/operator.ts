import { sql } from 'drizzle-orm';
import type { Queryable } from '../../../db/client.ts';
import { one, rows } from '../../../db/query.ts';
import { type SelectedTransaction, TRANSACTION_COLUMNS, toTransactionRow } from '../transaction-row.ts';

/** A provider request as the operator reads it (timestamps as ISO text, alike on both stores). */
type RequestView = {
  id: string;
  transactionId: string;
  organizationId: string;
  adapter: string;
  operation: string;
  state: string;
  attempts: number;
  nextAttemptAt: string;
  lockedUntil: string | null;
  providerIds: Record<string, string>;
  claimed: Record<string, unknown> | null;
  lastError: string | null;
  createdAt: string;
  updatedAt: string;
};

const REQUEST_COLUMNS =
  sql.raw(`r.id, r.transaction_id as "transactionId", r.organization_id as "organizationId",
  r.adapter, r.operation, r.state, r.attempts, r.next_attempt_at::text as "nextAttemptAt",
  r.locked_until::text as "lockedUntil", r.provider_ids as "providerIds", r.claimed, r.last_error as "lastError",
  r.created_at::text as "createdAt", r.updated_at::text as "updatedAt"`);

const iso = (text: string | null) => (text === null ? null : new Date(text).toISOString());
const present = (r: RequestView) => ({
  ...r,
  nextAttemptAt: iso(r.nextAttemptAt),
  lockedUntil: iso(r.lockedUntil),
  createdAt: iso(r.createdAt),
  updatedAt: iso(r.updatedAt),
});

/** GET /admin/transactions/{id}: the transaction, its provider request and every exchange, oldest first. */
export async function showTransaction(db: Queryable, id: string) {
  const transaction = await one<SelectedTransaction>(
    db,
    sql`select ${TRANSACTION_COLUMNS} from transactions t where t.id = ${id}`,
  );
  if (!transaction) return undefined;
  const request = await one<RequestView>(
    db,
    sql`select ${REQUEST_COLUMNS} from provider_requests r where r.transaction_id = ${id}`,
  );
  const exchanges = await rows<{
    id: string;
    kind: string;
    operation: string;
    at: string;
    latencyMs: number | null;
    httpStatus: number | null;
    providerIds: Record<string, string> | null;
    requestBody: unknown;
    responseBody: unknown;
    note: string | null;
    /** Callbacks: where it came from, what it claimed, and whether the provider confirmed it. */
    sourceAddress: string | null;
    claim: Record<string, unknown> | null;
    confirmed: boolean | null;
  }>(
    db,
    sql`select id, kind, operation, at::text as at, latency_ms as "latencyMs", http_status as "httpStatus",
  provider_ids as "providerIds", request_body as "requestBody", response_body as "responseBody", note,
  source_address as "sourceAddress", claim, confirmed
  from provider_exchanges where transaction_id = ${id} order by at, id`,
  );
  return {
    transaction: toTransactionRow(transaction),
    request: request ? present(request) : null,
    exchanges: exchanges.map((e) => ({ ...e, at: iso(e.at) })),
  };
}

/**
 * Stuck work: requests with the operator, uncertain ones, and any other not done after
 * `olderThanSeconds`, oldest first, each with its transaction's status, amount, number and order.
 */
export async function listStuck(
  db: Queryable,
  input: { olderThanSeconds: number; limit: number; now: Date },
) {
  const before = new Date(input.now.getTime() - input.olderThanSeconds * 1000).toISOString();
  const found = await rows<RequestView & { transaction: StuckTransaction }>(
    db,
    sql`select ${REQUEST_COLUMNS}, json_build_object('status', t.status, 'type', t.type,
    'amount', t.amount::text, 'currency', t.currency, 'msisdn', t.msisdn, 'orderId', t.order_id) as transaction
  from provider_requests r join transactions t on t.id = r.transaction_id
  where r.state in ('OPERATOR', 'UNCERTAIN')
  or (r.state in ('QUEUED', 'SENDING', 'AWAITING') and r.created_at < ${before}::timestamptz)
  order by r.created_at limit ${input.limit}`,
  );
  return found.map(({ transaction, ...request }) => ({ ...present(request), transaction }));
}

/** What a stuck request is about: whose money, how much, for which order (a payout: what is owed). */
type StuckTransaction = {
  status: string;
  type: string;
  amount: string;
  currency: string;
  msisdn: string;
  orderId: string;
};

/**
 * Re-runs reconciliation now: the request (or every request not done) becomes due at once, and
 * one with the operator becomes UNCERTAIN with fresh attempts, so the worker queries it before
 * anything else (never a blind re-send). Returns how many requests were made due.
 */
export async function reconcileNow(db: Queryable, input: { transactionId?: string; now: Date }) {
  const now = input.now.toISOString();
  const scope = input.transactionId ? sql`and transaction_id = ${input.transactionId}` : sql``;
  const changed = await rows<{ id: string }>(
    db,
    sql`update provider_requests set
  state = case when state = 'OPERATOR' then 'UNCERTAIN' else state end,
  attempts = case when state = 'OPERATOR' then 0 else attempts end,
  next_attempt_at = ${now}::timestamptz, updated_at = ${now}::timestamptz
  where state in ('QUEUED', 'AWAITING', 'UNCERTAIN', 'OPERATOR') ${scope} returning id`,
  );
  return { reconciling: changed.length };
}
