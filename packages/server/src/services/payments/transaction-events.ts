import type { Queryable } from '../../db/client.ts';
import { dateOf } from '../../db/query.ts';
import type { EventOutbox } from '../webhooks/outbox.ts';
import type { SelectedTransaction } from './transaction-row.ts';

/**
 * The data of TRANSACTION.CREATED and TRANSACTION.UPDATED (docs/webhooks.md, Events and their
 * data). The customer's number is left out: the payment status response does not carry it either,
 * and a receiver's logs are no place for it. The provider's reference stays internal too.
 */
export function transactionEventData(transaction: SelectedTransaction) {
  return {
    transactionId: transaction.id,
    orderId: transaction.orderId,
    type: transaction.type,
    status: transaction.status,
    amount: transaction.amount,
    currency: transaction.currency,
    provider: transaction.provider,
    failureReason: transaction.failureReason,
    createdAt: dateOf(transaction.createdAt).toISOString(),
    updatedAt: dateOf(transaction.updatedAt).toISOString(),
  };
}

/** Writes TRANSACTION.CREATED or TRANSACTION.UPDATED on the change's own transaction. */
export function emitTransactionEvent(
  q: Queryable,
  events: EventOutbox,
  event: 'TRANSACTION.CREATED' | 'TRANSACTION.UPDATED',
  transaction: SelectedTransaction,
): Promise<void> {
  return events.emit(q, {
    organizationId: transaction.organizationId,
    event,
    data: transactionEventData(transaction),
  });
}
