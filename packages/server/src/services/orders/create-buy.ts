import { createId } from '@partner-api/contract';
import { sql } from 'drizzle-orm';
import type { Tx } from '../../db/client.ts';
import { one } from '../../db/query.ts';
import { parseDecimal, plain } from '../../lib/money.ts';
import { createTransaction } from '../payments/create-transaction.ts';
import type { TransactionRef } from '../payments/provider.ts';
import type { OrderDeps } from './deps.ts';
import { ORDER_COLUMNS, type SelectedOrder } from './lock-order.ts';
import { emitOrderEvent } from './order-events.ts';

export type PlacedOrder = { orderId: string; payments: TransactionRef[] };

/**
 * A buy order (BUY, PENDING_PAYMENT) for a whole amount at the current price, and its collection
 * (INCOMING, PENDING) from the customer's number (`msisdn`, read by the caller in the same
 * transaction). The collection is requested after commit. The order is inserted from the listed
 * stock's row in one statement: no row when the stock is not listed.
 */
export async function createBuyOrder(
  tx: Tx,
  input: {
    organizationId: string;
    customerId: string;
    msisdn: string | null;
    stockId: string;
    /** Whole amount in the stock's currency, e.g. '1000'. */
    amount: string;
  },
  deps: OrderDeps,
): Promise<PlacedOrder> {
  const { msisdn } = input;
  if (!msisdn) throw new Error('buy order: the customer has no number to collect from');
  const whole = parseDecimal(input.amount, 'buy amount', 0);
  const orderId = createId();
  const order = await one<SelectedOrder>(
    tx,
    sql`insert into orders as o
  (id, organization_id, customer_id, stock_id, side, status, amount, currency, price)
  select ${orderId}, ${input.organizationId}, ${input.customerId}, s.id, 'BUY', 'PENDING_PAYMENT',
  ${plain(whole)}::numeric, s.currency, s.price
  from stocks s where s.id = ${input.stockId} and s.is_active
  returning ${ORDER_COLUMNS}`,
  );
  if (!order) throw new Error(`buy order: stock ${input.stockId} is not listed`);
  await emitOrderEvent(tx, deps.events, 'REQUEST.CREATED', order);
  const payment = await createTransaction({
    tx,
    deps,
    input: {
      organizationId: input.organizationId,
      orderId,
      type: 'INCOMING',
      amount: { amount: whole, currency: order.currency },
      msisdn,
    },
  });
  return { orderId, payments: [payment] };
}
