import { createId, type TransactionType } from '@partner-api/contract';
import { type SQL, sql } from 'drizzle-orm';
import type { Queryable } from '../../db/client.ts';
import { one } from '../../db/query.ts';
import { amountString, type Money } from '../../lib/money.ts';
import type { OrderDeps } from '../orders/deps.ts';
import { routeForMsisdn } from './mobile-network.ts';
import type { PaymentAdapter } from './pipeline/adapter.ts';
import type { TransactionRef } from './provider.ts';
import { emitTransactionEvent } from './transaction-events.ts';
import { type SelectedTransaction, TRANSACTION_COLUMNS } from './transaction-row.ts';

/** A move reached a network no adapter serves: the confirm screen should have refused it. */
export class NoPaymentAdapterError extends Error {
  override readonly name = 'NoPaymentAdapterError';
}

/** The customer's network and the adapter that moves money on it. */
export type PaymentRoute = { network: string; adapter: PaymentAdapter };

/** The route for a number, or `NoPaymentAdapterError` when no adapter serves its network. */
export function paymentRouteFor(deps: OrderDeps, msisdn: string): PaymentRoute {
  const route = routeForMsisdn(msisdn);
  const adapter = route && deps.registry(route.network, route.country);
  if (!route || !adapter) throw new NoPaymentAdapterError('no payment adapter serves this number');
  return { network: route.network, adapter };
}

/** `NoPaymentAdapterError` when the route's adapter does not move this currency. */
export function refuseOtherCurrency({ adapter }: PaymentRoute, currency: string): void {
  if (adapter.currency && adapter.currency !== currency)
    throw new NoPaymentAdapterError(`${adapter.name} moves ${adapter.currency} only, not ${currency}`);
}

/**
 * The CTEs `t`, a PENDING transaction, and `request`, its provider request (QUEUED), for a
 * statement to insert together: one round trip, and neither exists without the other. `source` is a
 * select of one row `(organization_id, order_id, amount, currency)`; no row, nothing inserted.
 */
export function paymentInserts(route: PaymentRoute, type: TransactionType, msisdn: string, source: SQL): SQL {
  return sql`t as (
  insert into transactions (id, organization_id, order_id, type, amount, currency, status, provider, msisdn)
  select ${createId()}, src.organization_id, src.order_id, ${type}, src.amount, src.currency, 'PENDING',
  ${route.network}, ${msisdn}
  from (${source}) as src (organization_id, order_id, amount, currency)
  returning *
), request as (
  insert into provider_requests (id, transaction_id, organization_id, adapter, operation, state)
  select ${createId()}, t.id, t.organization_id, ${route.adapter.name},
  ${type === 'INCOMING' ? 'COLLECT' : 'DISBURSE'}, 'QUEUED' from t
)`;
}

/** What a move hands the pipeline about a transaction it created. */
export function transactionRef(row: SelectedTransaction): TransactionRef {
  const { id, type, amount, currency, msisdn, provider } = row;
  return { id, type, amount, currency, msisdn, provider };
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
    type: TransactionType;
    amount: Money;
    msisdn: string;
  };
  deps: OrderDeps;
}): Promise<TransactionRef> {
  const route = paymentRouteFor(deps, input.msisdn);
  refuseOtherCurrency(route, input.amount.currency);
  const source = sql`values (${input.organizationId}::text, ${input.orderId}::text,
  ${amountString(input.amount)}::numeric, ${input.amount.currency}::text)`;
  const row = await one<SelectedTransaction>(
    tx,
    sql`with ${paymentInserts(route, input.type, input.msisdn, source)}
select ${TRANSACTION_COLUMNS} from t`,
  );
  if (!row) throw new Error('transaction insert returned no row');
  await emitTransactionEvent(tx, deps.events, 'TRANSACTION.CREATED', row);
  return transactionRef(row);
}
