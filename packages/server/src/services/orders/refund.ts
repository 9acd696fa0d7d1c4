import { sql } from 'drizzle-orm';
import type { Tx } from '../../db/client.ts';
import { one } from '../../db/query.ts';
import type { Money } from '../../lib/money.ts';
import { createTransaction } from '../payments/create-transaction.ts';
import type { TransactionRef } from '../payments/provider.ts';
import type { OrderDeps } from './deps.ts';
import type { OrderRow } from './lock-order.ts';

/** A PENDING refund disbursement (OUTGOING) of `amount`, to the number that paid the order. */
export async function refund(
  tx: Tx,
  order: OrderRow,
  amount: Money,
  deps: OrderDeps,
): Promise<TransactionRef> {
  const collection = await one<{ msisdn: string }>(
    tx,
    sql`select msisdn from transactions where order_id = ${order.id} and type = 'INCOMING' limit 1`,
  );
  let msisdn = collection?.msisdn;
  if (!msisdn) {
    const customer = await one<{ msisdn: string | null }>(
      tx,
      sql`select msisdn from customers where id = ${order.customerId}`,
    );
    msisdn = customer?.msisdn ?? undefined;
  }
  if (!msisdn) throw new Error(`order ${order.id}: no number to refund to`);
  return createTransaction({
    tx,
    deps,
    input: {
      organizationId: order.organizationId,
      orderId: order.id,
      type: 'OUTGOING',
      amount,
      msisdn,
    },
  });
}
