import { createId } from '@partner-api/contract';
import { sql } from 'drizzle-orm';
import type { Tx } from '../../db/client.ts';
import { one } from '../../db/query.ts';
import { parseDecimal, plain } from '../../lib/money.ts';
import {
  paymentInserts,
  paymentRouteFor,
  refuseOtherCurrency,
  transactionRef,
} from '../payments/create-transaction.ts';
import type { TransactionRef } from '../payments/provider.ts';
import { emitTransactionEvent } from '../payments/transaction-events.ts';
import { type SelectedTransaction, TRANSACTION_COLUMNS } from '../payments/transaction-row.ts';
import type { OrderDeps } from './deps.ts';
import { ORDER_COLUMNS, type SelectedOrder } from './lock-order.ts';
import { emitOrderEvent } from './order-events.ts';

export type PlacedOrder = { orderId: string; payments: TransactionRef[] };

type Placed = {
  order: SelectedOrder | null;
  transaction: SelectedTransaction | null;
  /** The stock's currency when it is listed, whether or not the order was placed. */
  listedCurrency: string | null;
};

/**
 * A buy order (BUY, PENDING_PAYMENT) for a whole amount at the current price, and its collection
 * (INCOMING, PENDING, with its provider request QUEUED) from the customer's number (`msisdn`, read
 * by the caller in the same transaction), in one statement. The collection is requested after
 * commit. The order is inserted from the listed stock's row, and only in a currency the number's
 * adapter moves: otherwise nothing is inserted, and the statement's reading of the stock says why.
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
  const route = paymentRouteFor(deps, msisdn);
  const only = route.adapter.currency ?? null;
  const placed = await one<Placed>(
    tx,
    sql`with s as (
  select id, currency, price from stocks where id = ${input.stockId} and is_active
), o as (
  insert into orders (id, organization_id, customer_id, stock_id, side, status, amount, currency, price)
  select ${createId()}, ${input.organizationId}, ${input.customerId}, s.id, 'BUY', 'PENDING_PAYMENT',
  ${plain(whole)}::numeric, s.currency, s.price
  from s where ${only}::text is null or s.currency = ${only}::text
  returning *
), ${paymentInserts(route, 'INCOMING', msisdn, sql`select organization_id, id, amount, currency from o`)}
select (select row_to_json(x) from (select ${ORDER_COLUMNS} from o) x) as "order",
  (select row_to_json(y) from (select ${TRANSACTION_COLUMNS} from t) y) as "transaction",
  (select currency from s) as "listedCurrency"`,
  );
  const { order, transaction, listedCurrency } = placed!;
  if (!order || !transaction) {
    if (listedCurrency === null) throw new Error(`buy order: stock ${input.stockId} is not listed`);
    refuseOtherCurrency(route, listedCurrency);
    throw new Error('buy order: the order or its collection was not inserted');
  }
  await emitOrderEvent(tx, deps.events, 'REQUEST.CREATED', order);
  await emitTransactionEvent(tx, deps.events, 'TRANSACTION.CREATED', transaction);
  return { orderId: order.id, payments: [transactionRef(transaction)] };
}
