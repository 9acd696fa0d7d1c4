import { sql } from 'drizzle-orm';
import type { Tx } from '../../db/client.ts';
import { one, run } from '../../db/query.ts';
import type { OrderDeps } from '../orders/deps.ts';
import { lateCollectionReceived, paymentSettled } from '../orders/life.ts';
import { lockOrder, type OrderRow } from '../orders/lock-order.ts';
import type { TransactionRef } from './provider.ts';
import { emitTransactionEvent } from './transaction-events.ts';
import {
  type SelectedTransaction,
  TRANSACTION_COLUMNS,
  type TransactionRow,
  toTransactionRow,
} from './transaction-row.ts';

export type ProviderResult = {
  transactionId: string;
  status: 'SUCCESS' | 'FAILED' | 'CANCELLED';
  providerReference: string;
  reason?: string;
  /**
   * The provider confirmed a payment for a collection that had already ended unpaid (FAILED at the
   * maximum age, when nothing told us it was paid): the money is given back, once.
   */
  late?: boolean;
};

/** The failure reason of a failed collection whose late payment was refunded (a repeat refunds nothing). */
export const PAID_AFTER_FAILURE = 'paid after the order had failed; refunded';

export type CallbackOutcome =
  | { outcome: 'unknown' }
  | { outcome: 'duplicate'; transaction: TransactionRow }
  | { outcome: 'applied'; transaction: TransactionRow; disbursements: TransactionRef[] };

/**
 * Applies a provider's result for one transaction, once: the order and the transaction rows are
 * locked, and a transaction that already has a final status never moves (a repeat changes nothing).
 * What the order does about it is the order's life's (orders/life.ts, paymentSettled), in the same
 * database transaction. Disbursements to request after commit are returned.
 */
export async function applyProviderResult(
  tx: Tx,
  input: ProviderResult,
  deps: OrderDeps,
): Promise<CallbackOutcome> {
  const peek = await one<{ orderId: string }>(
    tx,
    sql`select order_id as "orderId" from transactions where id = ${input.transactionId}`,
  );
  if (!peek) return { outcome: 'unknown' };
  const order = await lockOrder(tx, peek.orderId);
  const locked = await one<SelectedTransaction>(
    tx,
    sql`select ${TRANSACTION_COLUMNS} from transactions t where t.id = ${input.transactionId} for update`,
  );
  if (!order || !locked) return { outcome: 'unknown' };
  const current = toTransactionRow(locked);

  if (current.status !== 'PENDING') {
    if (isLateCollection(current, input)) return refundLateCollection(tx, order, current, input, deps);
    return { outcome: 'duplicate', transaction: current };
  }
  const settled = await settle(tx, deps, current.id, {
    status: input.status,
    providerReference: input.providerReference,
    failureReason:
      input.status === 'SUCCESS'
        ? null
        : (input.reason ?? (input.status === 'FAILED' ? 'failed at provider' : 'cancelled at provider')),
  });
  const disbursements = await paymentSettled(tx, order, settled, deps);
  // OUTGOING (proceeds or refund): the outcome is recorded on the transaction; a FAILED payout is
  // left for the operator (its request OPERATOR: pipeline/decide.ts), who retries it or pays it
  // another way (pipeline/resolve.ts), never retried blindly.
  return { outcome: 'applied', transaction: settled, disbursements };
}

/**
 * A collection we cancelled (customer cancelled the order) that the customer paid anyway, or one
 * that failed for want of an answer and that the provider now confirms paid (`late`).
 */
function isLateCollection(current: TransactionRow, input: ProviderResult): boolean {
  if (current.type !== 'INCOMING' || input.status !== 'SUCCESS') return false;
  if (current.status === 'CANCELLED') return current.settledAt === null;
  return input.late === true && current.status === 'FAILED' && current.failureReason !== PAID_AFTER_FAILURE;
}

async function refundLateCollection(
  tx: Tx,
  order: OrderRow,
  current: TransactionRow,
  input: ProviderResult,
  deps: OrderDeps,
): Promise<CallbackOutcome> {
  // The status stays CANCELLED (final); settledAt marks the collection as received, so a repeat
  // of this callback is a duplicate and refunds nothing twice.
  const settled = await settle(tx, deps, current.id, {
    status: current.status,
    providerReference: input.providerReference,
    failureReason:
      current.status === 'CANCELLED' ? 'paid after the order was cancelled; refunded' : PAID_AFTER_FAILURE,
  });
  return {
    outcome: 'applied',
    transaction: settled,
    disbursements: await lateCollectionReceived(tx, order, settled, deps),
  };
}

/** Every settlement of a transaction goes through here: the change and its TRANSACTION.UPDATED. */
async function settle(
  tx: Tx,
  deps: OrderDeps,
  id: string,
  fields: Pick<TransactionRow, 'status' | 'providerReference' | 'failureReason'>,
): Promise<TransactionRow> {
  const now = new Date().toISOString();
  const row = await one<SelectedTransaction>(
    tx,
    sql`update transactions t set status = ${fields.status}, provider_reference = ${fields.providerReference},
  failure_reason = ${fields.failureReason}, settled_at = ${now}::timestamptz, updated_at = ${now}::timestamptz
  where t.id = ${id} returning ${TRANSACTION_COLUMNS}`,
  );
  if (!row) throw new Error(`transaction ${id} vanished while locked`);
  await emitTransactionEvent(tx, deps.events, 'TRANSACTION.UPDATED', row);
  // Settled, by whichever path (pipeline, signed callback, operator): its provider request is done.
  await run(
    tx,
    sql`update provider_requests set state = 'DONE', locked_until = null, updated_at = ${now}::timestamptz
  where transaction_id = ${id} and state <> 'DONE'`,
  );
  return toTransactionRow(row);
}
