import type { Customer } from '@partner-api/contract';
import { and, eq } from 'drizzle-orm';
import type { Queryable } from '../../db/client.ts';
import { customers } from '../../db/schema.ts';
import { presentCustomer } from './present.ts';

/** undefined both when the id does not exist and when it belongs to another organization. */
export async function getCustomer({
  db,
  organizationId,
  id,
}: {
  db: Queryable;
  organizationId: string;
  id: string;
}): Promise<Customer | undefined> {
  const [row] = await db
    .select()
    .from(customers)
    .where(and(eq(customers.id, id), eq(customers.organizationId, organizationId)));
  return row ? presentCustomer(row) : undefined;
}
