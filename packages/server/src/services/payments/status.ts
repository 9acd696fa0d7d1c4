import type { PaymentStatus, PaymentTransaction } from '@partner-api/contract';
import { sql } from 'drizzle-orm';
import type { Queryable } from '../../db/client.ts';
import { rows } from '../../db/query.ts';

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
  const latestPerType = await rows<PaymentTransaction>(
    db,
    sql`select distinct on (t.type) t.id, t.type, t.amount::text as amount, t.currency, t.status, t.provider
  from transactions t join orders o on o.id = t.order_id
  where t.order_id = ${orderId} and o.organization_id = ${organizationId}
  and t.organization_id = ${organizationId}
  order by t.type, t.created_at desc, t.id desc`,
  );
  if (latestPerType.length === 0) return undefined;

  const status: PaymentStatus = { orderId };
  for (const transaction of latestPerType) {
    switch (transaction.type) {
      case 'INCOMING':
        status.payment = transaction;
        break;
      case 'OUTGOING':
        status.disbursement = transaction;
        break;
    }
  }
  return status;
}
