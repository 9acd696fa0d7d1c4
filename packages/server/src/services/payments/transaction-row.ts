import { sql } from 'drizzle-orm';
import { dateOf } from '../../db/query.ts';
import type { transactions } from '../../db/schema.ts';

export type TransactionRow = typeof transactions.$inferSelect;

/** A row as TRANSACTION_COLUMNS selects it: timestamps as text, alike on both stores. */
export type SelectedTransaction = Omit<TransactionRow, 'settledAt' | 'createdAt' | 'updatedAt'> & {
  settledAt: string | null;
  createdAt: string;
  updatedAt: string;
};

/** Every column of a transaction aliased `t`, named as TransactionRow names them. */
export const TRANSACTION_COLUMNS = sql.raw(`t.id, t.organization_id as "organizationId",
  t.order_id as "orderId", t.type, t.amount::text as amount, t.currency, t.status, t.provider, t.msisdn,
  t.provider_reference as "providerReference", t.failure_reason as "failureReason",
  t.settled_at::text as "settledAt", t.created_at::text as "createdAt", t.updated_at::text as "updatedAt"`);

/** A row selected with TRANSACTION_COLUMNS, its timestamps as Dates (as the admin API serialises them). */
export function toTransactionRow(row: SelectedTransaction): TransactionRow {
  return {
    ...row,
    settledAt: dateOf(row.settledAt),
    createdAt: dateOf(row.createdAt),
    updatedAt: dateOf(row.updatedAt),
  };
}
