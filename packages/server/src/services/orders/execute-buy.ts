import { sql } from 'drizzle-orm';
import type { Tx } from '../../db/client.ts';
import { rows } from '../../db/query.ts';
import type { OrderRow } from './lock-order.ts';

/**
 * Executes a PAID buy order (locked by the caller) at the stock's current price: the units go into
 * the customer's holding and the order becomes EXECUTED. A stock delisted meanwhile cannot be bought:
 * the order stays PAID, still cancellable by the customer (with a refund).
 *
 * One statement (the price read, the holding upserted, the order updated): the units bought are
 * the amount over the price truncated to 4 decimals (never more than was paid for), computed with
 * `div`, PostgreSQL's exact integer quotient: floor(amount × 10⁴ / price) / 10⁴.
 */
export async function executePaidBuy(tx: Tx, order: OrderRow): Promise<boolean> {
  const now = new Date().toISOString();
  const executed = await rows<{ executed: number }>(
    tx,
    sql`with listed as (
  select price, (div(${order.amount}::numeric * 10000, price) / 10000)::numeric(20, 4) as units
  from stocks where id = ${order.stockId} and is_active
), held as (
  insert into holdings (organization_id, customer_id, stock_id, units)
  select ${order.organizationId}, ${order.customerId}, ${order.stockId}, units from listed
  on conflict (customer_id, stock_id)
  do update set units = holdings.units + excluded.units, updated_at = ${now}::timestamptz
), executed as (
  update orders set status = 'EXECUTED', quantity = listed.units, price = listed.price,
  updated_at = ${now}::timestamptz
  from listed where orders.id = ${order.id}
)
select 1 as executed from listed`,
  );
  return executed.length > 0;
}
