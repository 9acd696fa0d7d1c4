import { createId } from '@partner-api/contract';
import { sql } from 'drizzle-orm';
import type { Queryable } from '../../db/client.ts';
import { one } from '../../db/query.ts';
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
  const row = await one<TransactionRef>(
    tx,
    sql`insert into transactions (id, organization_id, order_id, type, amount, currency, status, provider, msisdn)
  values (${createId()}, ${input.organizationId}, ${input.orderId}, ${input.type}, ${amountString(input.amount)}::numeric,
  ${input.amount.currency}, 'PENDING', ${providerForMsisdn(input.msisdn)}, ${input.msisdn})
  returning id, type, amount::text as amount, currency, msisdn, provider`,
  );
  if (!row) throw new Error('transaction insert returned no row');
  return row;
}
