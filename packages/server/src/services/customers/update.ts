import type { Customer, CustomerUpdate } from '@partner-api/contract';
import { and, eq, sql } from 'drizzle-orm';
import type { Queryable } from '../../db/client.ts';
import { customers } from '../../db/schema.ts';
import { getCustomer } from './get.ts';
import { presentCustomer } from './present.ts';

/**
 * Applies the fields present in the patch (null clears a nullable one); undefined when the customer
 * is not the organization's. An empty patch changes nothing, updatedAt included, and returns the customer.
 */
export async function updateCustomer({
  db,
  organizationId,
  id,
  input,
}: {
  db: Queryable;
  organizationId: string;
  id: string;
  input: CustomerUpdate;
}): Promise<Customer | undefined> {
  if (Object.values(input).every((value) => value === undefined)) {
    return getCustomer({ db, organizationId, id });
  }
  // drizzle leaves out undefined keys: only the fields the partner sent are written.
  const [row] = await db
    .update(customers)
    .set({ ...input, updatedAt: sql`now()` })
    .where(and(eq(customers.id, id), eq(customers.organizationId, organizationId)))
    .returning();
  return row ? presentCustomer(row) : undefined;
}
