import type { PaymentStatus, PaymentTransaction } from '@partner-api/contract';
import { and, desc, eq } from 'drizzle-orm';
import type { Queryable } from '../../db/client.ts';
import { orders, transactions } from '../../db/schema.ts';

type TransactionRow = typeof transactions.$inferSelect;

function presentTransaction(row: TransactionRow): PaymentTransaction {
  return {
    id: row.id,
    type: row.type,
    amount: row.amount,
    currency: row.currency,
    status: row.status,
    provider: row.provider,
  };
}

/**
 * The latest collection (INCOMING) and latest disbursement (OUTGOING) of an order of the caller's
 * organization. undefined when the order is unknown, another organization's, or has no transaction:
 * the three must look alike to the caller.
 */
export async function getPaymentStatus({
  db,
  organizationId,
  orderId,
}: {
  db: Queryable;
  organizationId: string;
  orderId: string;
}): Promise<PaymentStatus | undefined> {
  const latestPerType = await db
    .selectDistinctOn([transactions.type], { transaction: transactions })
    .from(transactions)
    .innerJoin(orders, eq(orders.id, transactions.orderId))
    .where(
      and(
        eq(transactions.orderId, orderId),
        eq(orders.organizationId, organizationId),
        eq(transactions.organizationId, organizationId),
      ),
    )
    .orderBy(transactions.type, desc(transactions.createdAt), desc(transactions.id));
  if (latestPerType.length === 0) return undefined;

  const status: PaymentStatus = { orderId };
  for (const { transaction } of latestPerType) {
    switch (transaction.type) {
      case 'INCOMING':
        status.payment = presentTransaction(transaction);
        break;
      case 'OUTGOING':
        status.disbursement = presentTransaction(transaction);
        break;
    }
  }
  return status;
}
