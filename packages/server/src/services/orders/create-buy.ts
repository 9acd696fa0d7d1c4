import { createId } from '@partner-api/contract';
import { and, eq } from 'drizzle-orm';
import type { Tx } from '../../db/client.ts';
import { customers, orders, stocks } from '../../db/schema.ts';
import { createTransaction } from '../payments/create-transaction.ts';
import type { TransactionRef } from '../payments/provider.ts';

export type PlacedOrder = { orderId: string; payments: TransactionRef[] };

/**
 * A buy order (BUY, PENDING_PAYMENT) for a whole amount at the current price, and its collection
 * (INCOMING, PENDING) from the customer's number. The collection is requested after commit.
 */
export async function createBuyOrder(
  tx: Tx,
  input: { organizationId: string; customerId: string; stockId: string; amount: string },
): Promise<PlacedOrder> {
  const [customer] = await tx
    .select({ msisdn: customers.msisdn })
    .from(customers)
    .where(and(eq(customers.id, input.customerId), eq(customers.organizationId, input.organizationId)));
  if (!customer?.msisdn) throw new Error('buy order: the customer has no number to collect from');
  const [stock] = await tx
    .select()
    .from(stocks)
    .where(and(eq(stocks.id, input.stockId), eq(stocks.isActive, true)));
  if (!stock) throw new Error(`buy order: stock ${input.stockId} is not listed`);
  const orderId = createId();
  await tx.insert(orders).values({
    id: orderId,
    organizationId: input.organizationId,
    customerId: input.customerId,
    stockId: stock.id,
    side: 'BUY',
    status: 'PENDING_PAYMENT',
    amount: input.amount,
    currency: stock.currency,
    price: stock.price,
  });
  const payment = await createTransaction({
    tx,
    input: {
      organizationId: input.organizationId,
      orderId,
      type: 'INCOMING',
      amount: input.amount,
      currency: stock.currency,
      msisdn: customer.msisdn,
    },
  });
  return { orderId, payments: [payment] };
}
