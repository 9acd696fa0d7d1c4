import { sql } from 'drizzle-orm';
import type { Tx } from '../../db/client.ts';
import { rows } from '../../db/query.ts';
import { money } from '../../lib/money.ts';
import type { TransactionRef } from '../payments/provider.ts';
import { emitTransactionEvent } from '../payments/transaction-events.ts';
import { type SelectedTransaction, TRANSACTION_COLUMNS } from '../payments/transaction-row.ts';
import type { OrderDeps } from './deps.ts';
import { lockOrder, setOrderStatus } from './lock-order.ts';
import { refund } from './refund.ts';

/**
 * A move whose snapshot another move outran (on PostgreSQL, two sessions of one customer at once):
 * the order or the holding it acted on changed after it was read. Not a failure: the USSD move is
 * planned again from what is there now, and shows the same refusal the customer would have seen a
 * moment later (services/ussd/process-choice.ts).
 */
export class StaleMoveError extends Error {}

export class OrderNotCancellableError extends StaleMoveError {}

/**
 * Cancels a customer's order that is not yet executed: PENDING_PAYMENT → CANCELLED with its pending
 * collection CANCELLED; PAID → CANCELLED with a refund disbursement (requested after commit).
 * The order row is locked, so a provider callback settling it at the same time waits for us and
 * then finds the collection CANCELLED (a late payment is refunded by the callback).
 */
export async function cancelOrder(
  tx: Tx,
  input: { organizationId: string; customerId: string; orderId: string },
  deps: OrderDeps,
): Promise<{ payments: TransactionRef[] }> {
  const order = await lockOrder(tx, input.orderId);
  if (!order || order.organizationId !== input.organizationId || order.customerId !== input.customerId) {
    throw new OrderNotCancellableError(`order ${input.orderId} is not this customer's`);
  }
  if (order.status !== 'PENDING_PAYMENT' && order.status !== 'PAID') {
    throw new OrderNotCancellableError(`order ${order.id} is ${order.status}`);
  }
  await setOrderStatus(tx, deps.events, order.id, 'CANCELLED');
  if (order.status === 'PENDING_PAYMENT') {
    const cancelled = await rows<SelectedTransaction>(
      tx,
      sql`update transactions t set status = 'CANCELLED', updated_at = ${new Date().toISOString()}::timestamptz
  where t.order_id = ${order.id} and t.type = 'INCOMING' and t.status = 'PENDING'
  returning ${TRANSACTION_COLUMNS}`,
    );
    for (const row of cancelled) await emitTransactionEvent(tx, deps.events, 'TRANSACTION.UPDATED', row);
    return { payments: [] };
  }
  return { payments: [await refund(tx, order, money(order.amount, order.currency), deps)] };
}
