import type { Queryable } from '../../db/client.ts';
import { dateOf } from '../../db/query.ts';
import type { EventOutbox } from '../webhooks/outbox.ts';
import type { SelectedOrder } from './lock-order.ts';

/** The data of REQUEST.CREATED and REQUEST.UPDATED (docs/webhooks.md, Events and their data). */
export function orderEventData(order: SelectedOrder) {
  return {
    orderId: order.id,
    customerId: order.customerId,
    stockId: order.stockId,
    side: order.side,
    status: order.status,
    amount: order.amount,
    currency: order.currency,
    quantity: order.quantity,
    price: order.price,
    createdAt: dateOf(order.createdAt).toISOString(),
    updatedAt: dateOf(order.updatedAt).toISOString(),
  };
}

/** Writes REQUEST.CREATED or REQUEST.UPDATED for an order row on the change's own transaction. */
export function emitOrderEvent(
  q: Queryable,
  events: EventOutbox,
  event: 'REQUEST.CREATED' | 'REQUEST.UPDATED',
  order: SelectedOrder,
): Promise<void> {
  return events.emit(q, { organizationId: order.organizationId, event, data: orderEventData(order) });
}
