import { createId } from '@partner-api/contract';
import type { Queryable } from '../../db/client.ts';
import { transactions } from '../../db/schema.ts';
import { amountString, type Money } from '../../lib/money.ts';
import { providerForMsisdn } from './mobile-network.ts';
import type { TransactionRef } from './provider.ts';

/**
 * A PENDING collection (INCOMING) or disbursement (OUTGOING) of an order, on the customer's
 * network. Returns what the provider is asked for once the caller's transaction commits.
 */
export async function createTransaction({
  tx,
  input,
}: {
  tx: Queryable;
  input: {
    organizationId: string;
    orderId: string;
    type: 'INCOMING' | 'OUTGOING';
    amount: Money;
    msisdn: string;
  };
}): Promise<TransactionRef> {
  const { amount: value, ...rest } = input;
  const [row] = await tx
    .insert(transactions)
    .values({
      id: createId(),
      ...rest,
      amount: amountString(value),
      currency: value.currency,
      status: 'PENDING',
      provider: providerForMsisdn(input.msisdn),
    })
    .returning();
  if (!row) throw new Error('transaction insert returned no row');
  const { id, type, amount, currency, msisdn, provider } = row;
  return { id, type, amount, currency, msisdn, provider };
}
