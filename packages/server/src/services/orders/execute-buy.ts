import { sql } from 'drizzle-orm';
import type { Tx } from '../../db/client.ts';
import { one } from '../../db/query.ts';
import { money, parseDecimal, plain, unitsFor } from '../../lib/money.ts';
import type { EventOutbox } from '../webhooks/outbox.ts';
import { ORDER_COLUMNS, type OrderRow, type SelectedOrder } from './lock-order.ts';
import { emitOrderEvent } from './order-events.ts';
import { recordExecution } from './record-execution.ts';

/**
 * Executes a PAID buy order (locked by the caller) at the stock's current price: the units go into
 * the customer's holding and the order becomes EXECUTED. A stock delisted meanwhile cannot be bought:
 * the order stays PAID, still cancellable by the customer (with a refund).
 *
 * The price is read under a share lock (a concurrent price import waits for this commit), the units
 * come from the money module (`unitsFor`: rounded down, never more than was paid for), and one
 * statement upserts the holding and updates the order.
 */
export async function executePaidBuy(tx: Tx, events: EventOutbox, order: OrderRow): Promise<boolean> {
  const stock = await one<{ price: string }>(
    tx,
    sql`select price::text as price from stocks where id = ${order.stockId} and is_active for share`,
  );
  if (!stock) return false;
  const units = plain(unitsFor(money(order.amount, order.currency), parseDecimal(stock.price, 'price')));
  const now = new Date().toISOString();
  const executed = await one<SelectedOrder>(
    tx,
    sql`with held as (
  insert into holdings (organization_id, customer_id, stock_id, units)
  values (${order.organizationId}, ${order.customerId}, ${order.stockId}, ${units}::numeric)
  on conflict (customer_id, stock_id)
  do update set units = holdings.units + excluded.units, updated_at = ${now}::timestamptz
)
update orders o set status = 'EXECUTED', quantity = ${units}::numeric, price = ${stock.price}::numeric,
  updated_at = ${now}::timestamptz
where o.id = ${order.id}
returning ${ORDER_COLUMNS}`,
  );
  if (executed) {
    await recordExecution(tx, {
      organizationId: order.organizationId,
      orderId: order.id,
      stockId: order.stockId,
      side: 'BUY',
      units,
      price: stock.price,
      executedAt: new Date(now),
    });
    await emitOrderEvent(tx, events, 'REQUEST.UPDATED', executed);
  }
  return true;
}
