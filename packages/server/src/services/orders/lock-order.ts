import { eq } from 'drizzle-orm';
import type { Tx } from '../../db/client.ts';
import { orders } from '../../db/schema.ts';

export type OrderRow = typeof orders.$inferSelect;

/**
 * Locks an order row for the rest of the transaction. Lock order everywhere: session, then order,
 * then its transactions, then holdings, so a USSD cancel and a provider callback cannot deadlock.
 */
export async function lockOrder(tx: Tx, orderId: string): Promise<OrderRow | undefined> {
  const [order] = await tx.select().from(orders).where(eq(orders.id, orderId)).for('update');
  return order;
}

export async function setOrderStatus(tx: Tx, orderId: string, status: OrderRow['status']): Promise<void> {
  await tx.update(orders).set({ status, updatedAt: new Date() }).where(eq(orders.id, orderId));
}
