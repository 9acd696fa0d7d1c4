import { createId } from '@partner-api/contract';
import { sql } from 'drizzle-orm';
import type { Queryable } from '../../db/client.ts';
import { one } from '../../db/query.ts';
import { amountString, type Money } from '../../lib/money.ts';
import type { OrderDeps } from '../orders/deps.ts';
import { routeForMsisdn } from './mobile-network.ts';
import type { TransactionRef } from './provider.ts';
import { emitTransactionEvent } from './transaction-events.ts';
import { type SelectedTransaction, TRANSACTION_COLUMNS } from './transaction-row.ts';

/** A move reached a network no adapter serves: the confirm screen should have refused it. */
export class NoPaymentAdapterError extends Error {
  override readonly name = 'NoPaymentAdapterError';
}

/**
 * A PENDING collection (INCOMING) or disbursement (OUTGOING) of an order, on the customer's
 * network, and its provider request (QUEUED) in the same database transaction: the request is
 * durable exactly when the order is (docs/payments.md, Pipeline). A worker sends it after commit.
 * Its TRANSACTION.CREATED is written in that transaction too.
 */
export async function createTransaction({
  tx,
  input,
  deps,
}: {
  tx: Queryable;
  input: {
    organizationId: string;
    orderId: string;
    type: 'INCOMING' | 'OUTGOING';
    amount: Money;
    msisdn: string;
  };
  deps: OrderDeps;
}): Promise<TransactionRef> {
  const route = routeForMsisdn(input.msisdn);
  const adapter = route && deps.registry(route.network, route.country);
  if (!route || !adapter) throw new NoPaymentAdapterError('no payment adapter serves this number');
  if (adapter.currency && adapter.currency !== input.amount.currency)
    throw new NoPaymentAdapterError(
      `${adapter.name} moves ${adapter.currency} only, not ${input.amount.currency}`,
    );
  // The transaction and its provider request in one statement: one round trip, and neither
  // exists without the other.
  const row = await one<SelectedTransaction>(
    tx,
    sql`with t as (
  insert into transactions (id, organization_id, order_id, type, amount, currency, status, provider, msisdn)
  values (${createId()}, ${input.organizationId}, ${input.orderId}, ${input.type}, ${amountString(input.amount)}::numeric,
  ${input.amount.currency}, 'PENDING', ${route.network}, ${input.msisdn})
  returning *
), request as (
  insert into provider_requests (id, transaction_id, organization_id, adapter, operation, state)
  select ${createId()}, t.id, t.organization_id, ${adapter.name},
  ${input.type === 'INCOMING' ? 'COLLECT' : 'DISBURSE'}, 'QUEUED' from t
)
select ${TRANSACTION_COLUMNS} from t`,
  );
  if (!row) throw new Error('transaction insert returned no row');
  await emitTransactionEvent(tx, deps.events, 'TRANSACTION.CREATED', row);
  const { id, type, amount, currency, msisdn, provider } = row;
  return { id, type, amount, currency, msisdn, provider };
}
