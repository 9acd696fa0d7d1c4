import type { Queryable } from '../../db/client.ts';
import { dateOf } from '../../db/query.ts';
import { getRequest } from '../investments/request-resource.ts';
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

/**
 * Writes REQUEST.CREATED or REQUEST.UPDATED for an order row on the change's own transaction. With
 * the investments events on, `data` is the request resource as GET /v1/requests/{id} answers it at
 * that moment (its execution and transactions read on the same transaction), beside the fields
 * above, which keep their names and values (docs/webhooks.md).
 */
export async function emitOrderEvent(
  q: Queryable,
  events: EventOutbox,
  event: 'REQUEST.CREATED' | 'REQUEST.UPDATED',
  order: SelectedOrder,
): Promise<void> {
  if (!events.enabled) return;
  const resource = events.investments ? await getRequest(q, order.organizationId, order.id) : undefined;
  await events.emit(q, {
    organizationId: order.organizationId,
    event,
    data: { ...orderEventData(order), ...resource },
  });
}
