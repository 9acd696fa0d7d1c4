import { sql } from 'drizzle-orm';
import type { Tx } from '../../db/client.ts';
import { rowsOf } from '../../db/rows.ts';
import type { orders } from '../../db/schema.ts';

export type OrderRow = typeof orders.$inferSelect;

type Row = Omit<OrderRow, 'createdAt' | 'updatedAt'> & { createdAt: string; updatedAt: string };

/**
 * Locks an order row for the rest of the transaction. Lock order everywhere: session, then order,
 * then its transactions, then holdings, so a USSD cancel and a provider callback cannot deadlock.
 */
export async function lockOrder(tx: Tx, orderId: string): Promise<OrderRow | undefined> {
  const result = await tx.execute(sql`select id, organization_id as "organizationId",
  customer_id as "customerId", stock_id as "stockId", side, status, amount::text as amount, currency,
  quantity::text as quantity, price::text as price, created_at::text as "createdAt",
  updated_at::text as "updatedAt"
  from orders where id = ${orderId} for update`);
  const [row] = rowsOf<Row>(result);
  return row && { ...row, createdAt: new Date(row.createdAt), updatedAt: new Date(row.updatedAt) };
}

export async function setOrderStatus(tx: Tx, orderId: string, status: OrderRow['status']): Promise<void> {
  await tx.execute(
    sql`update orders set status = ${status}, updated_at = ${new Date().toISOString()}::timestamptz where id = ${orderId}`,
  );
}
