import { sql } from 'drizzle-orm';
import type { Tx } from '../../db/client.ts';
import { rows } from '../../db/query.ts';
import { money } from '../../lib/money.ts';
import type { TransactionRef } from '../payments/provider.ts';
import { emitTransactionEvent } from '../payments/transaction-events.ts';
import { type SelectedTransaction, TRANSACTION_COLUMNS } from '../payments/transaction-row.ts';
import type { OrderDeps } from './deps.ts';
import { lockOrder, setOrderStatus } from './lock-order.ts';
import { OvertakenError } from './overtaken.ts';
import { refund } from './refund.ts';

export class OrderNotCancellableError extends Error {}

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
  // Cancelled or settled since the move read it as open (the lock waited for that commit).
  if (order.status !== 'PENDING_PAYMENT' && order.status !== 'PAID') {
    throw new OvertakenError(`order ${order.id} is ${order.status}`);
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
