import { createId } from '@partner-api/contract';
import { sql } from 'drizzle-orm';
import type { Tx } from '../../db/client.ts';
import { one } from '../../db/query.ts';
import { amountString, parseDecimal, proceeds } from '../../lib/money.ts';
import { createTransaction } from '../payments/create-transaction.ts';
import { StaleMoveError } from './cancel.ts';
import type { PlacedOrder } from './create-buy.ts';
import type { OrderDeps } from './deps.ts';
import { ORDER_COLUMNS, type SelectedOrder } from './lock-order.ts';
import { emitOrderEvent } from './order-events.ts';
import { recordExecution } from './record-execution.ts';

/**
 * A sell order of whole units, EXECUTED at once at the current price: the holding is decremented
 * (only if it still holds the units: the guarded update is the check) and the proceeds are paid out
 * by a disbursement (OUTGOING, PENDING) requested after commit, to the customer's number (`msisdn`,
 * read by the caller in the same transaction).
 */
export async function createSellOrder(
  tx: Tx,
  input: {
    organizationId: string;
    customerId: string;
    msisdn: string | null;
    stockId: string;
    /** Whole units, e.g. '3'. */
    quantity: string;
  },
  deps: OrderDeps,
): Promise<PlacedOrder> {
  const { msisdn } = input;
  if (!msisdn) throw new Error('sell order: the customer has no number to pay out to');
  const stock = await one<{ id: string; price: string; currency: string }>(
    tx,
    sql`select id, price::text as price, currency from stocks where id = ${input.stockId} and is_active`,
  );
  if (!stock) throw new Error(`sell order: stock ${input.stockId} is not listed`);
  const quantity = input.quantity;
  const sold = await one<{ units: string }>(
    tx,
    sql`update holdings set units = units - ${quantity}::numeric, updated_at = ${new Date().toISOString()}::timestamptz
  where customer_id = ${input.customerId} and stock_id = ${stock.id} and units >= ${quantity}::numeric
  returning units::text as units`,
  );
  if (!sold) throw new StaleMoveError('sell order: the holding no longer has these units');
  const orderId = createId();
  const payout = proceeds(
    parseDecimal(quantity, 'quantity', 0),
    parseDecimal(stock.price, 'price'),
    stock.currency,
  );
  const order = await one<SelectedOrder>(
    tx,
    sql`insert into orders as o (id, organization_id, customer_id, stock_id, side, status, amount, currency, quantity, price)
  values (${orderId}, ${input.organizationId}, ${input.customerId}, ${stock.id}, 'SELL', 'EXECUTED',
  ${amountString(payout)}::numeric, ${payout.currency}, ${quantity}::numeric, ${stock.price}::numeric)
  returning ${ORDER_COLUMNS}`,
  );
  if (!order) throw new Error('sell order: the insert returned no row');
  await recordExecution(tx, {
    organizationId: input.organizationId,
    orderId,
    stockId: stock.id,
    side: 'SELL',
    units: quantity,
    price: stock.price,
    executedAt: new Date(),
  });
  await emitOrderEvent(tx, deps.events, 'REQUEST.CREATED', order);
  const disbursement = await createTransaction({
    tx,
    deps,
    input: { organizationId: input.organizationId, orderId, type: 'OUTGOING', amount: payout, msisdn },
  });
  return { orderId, payments: [disbursement] };
}
