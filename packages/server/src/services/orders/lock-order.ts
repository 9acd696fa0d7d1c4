import { sql } from 'drizzle-orm';
import type { Tx } from '../../db/client.ts';
import { dateOf, one } from '../../db/query.ts';
import type { orders } from '../../db/schema.ts';
import type { EventOutbox } from '../webhooks/outbox.ts';
import { emitOrderEvent } from './order-events.ts';

export type OrderRow = typeof orders.$inferSelect;

/** A row as ORDER_COLUMNS selects it: timestamps as text, alike on both stores. */
export type SelectedOrder = Omit<OrderRow, 'createdAt' | 'updatedAt'> & {
  createdAt: string;
  updatedAt: string;
};

/** Every column of an order aliased `o`, named as OrderRow names them. */
export const ORDER_COLUMNS = sql.raw(`o.id, o.organization_id as "organizationId",
  o.customer_id as "customerId", o.stock_id as "stockId", o.side, o.status, o.amount::text as amount,
  o.currency, o.quantity::text as quantity, o.price::text as price, o.created_at::text as "createdAt",
  o.updated_at::text as "updatedAt"`);

export const toOrderRow = (row: SelectedOrder): OrderRow => ({
  ...row,
  createdAt: dateOf(row.createdAt),
  updatedAt: dateOf(row.updatedAt),
});

/**
 * Locks an order row for the rest of the transaction. Lock order everywhere: session, then order,
 * then its transactions, then holdings, so a USSD cancel and a provider callback cannot deadlock.
 */
export async function lockOrder(tx: Tx, orderId: string): Promise<OrderRow | undefined> {
  const row = await one<SelectedOrder>(
    tx,
    sql`select ${ORDER_COLUMNS} from orders o where o.id = ${orderId} for update`,
  );
  return row && toOrderRow(row);
}

/** Every status change of an order goes through here: the change and its REQUEST.UPDATED. */
export async function setOrderStatus(
  tx: Tx,
  events: EventOutbox,
  orderId: string,
  status: OrderRow['status'],
): Promise<void> {
  const row = await one<SelectedOrder>(
    tx,
    sql`update orders o set status = ${status}, updated_at = ${new Date().toISOString()}::timestamptz
  where o.id = ${orderId} returning ${ORDER_COLUMNS}`,
  );
  if (row) await emitOrderEvent(tx, events, 'REQUEST.UPDATED', row);
}
