import { and, eq } from 'drizzle-orm';
import type { Tx } from '../../db/client.ts';
import { customers, transactions } from '../../db/schema.ts';
import type { Money } from '../../lib/money.ts';
import { createTransaction } from '../payments/create-transaction.ts';
import type { TransactionRef } from '../payments/provider.ts';
import type { OrderRow } from './lock-order.ts';

/** A PENDING refund disbursement (OUTGOING) of `amount`, to the number that paid the order. */
export async function refund(tx: Tx, order: OrderRow, amount: Money): Promise<TransactionRef> {
  const [collection] = await tx
    .select({ msisdn: transactions.msisdn })
    .from(transactions)
    .where(and(eq(transactions.orderId, order.id), eq(transactions.type, 'INCOMING')))
    .limit(1);
  let msisdn = collection?.msisdn;
  if (!msisdn) {
    const [customer] = await tx
      .select({ msisdn: customers.msisdn })
      .from(customers)
      .where(eq(customers.id, order.customerId));
    msisdn = customer?.msisdn ?? undefined;
  }
  if (!msisdn) throw new Error(`order ${order.id}: no number to refund to`);
  return createTransaction({
    tx,
    input: {
      organizationId: order.organizationId,
      orderId: order.id,
      type: 'OUTGOING',
      amount,
      msisdn,
    },
  });
}
