import { and, eq, sql } from 'drizzle-orm';
import type { Tx } from '../../db/client.ts';
import { holdings, orders, stocks } from '../../db/schema.ts';
import { unitsFor } from './decimal.ts';
import type { OrderRow } from './lock-order.ts';

/**
 * Executes a PAID buy order (locked by the caller) at the stock's current price: the units go into
 * the customer's holding and the order becomes EXECUTED. A stock delisted meanwhile cannot be bought:
 * the order stays PAID, still cancellable by the customer (with a refund).
 */
export async function executePaidBuy(tx: Tx, order: OrderRow): Promise<boolean> {
  const [stock] = await tx
    .select({ price: stocks.price })
    .from(stocks)
    .where(and(eq(stocks.id, order.stockId), eq(stocks.isActive, true)));
  if (!stock) return false;
  const units = unitsFor(order.amount, stock.price);
  await tx
    .insert(holdings)
    .values({
      organizationId: order.organizationId,
      customerId: order.customerId,
      stockId: order.stockId,
      units,
    })
    .onConflictDoUpdate({
      target: [holdings.customerId, holdings.stockId],
      set: { units: sql`${holdings.units} + excluded.units`, updatedAt: new Date() },
    });
  await tx
    .update(orders)
    .set({ status: 'EXECUTED', quantity: units, price: stock.price, updatedAt: new Date() })
    .where(eq(orders.id, order.id));
  return true;
}
