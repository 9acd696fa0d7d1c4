import type { Customer } from '@partner-api/contract';
import { sql } from 'drizzle-orm';
import type { Queryable } from '../../db/client.ts';
import { dateOf, one } from '../../db/query.ts';
import { type CustomerRow, presentCustomer } from './present.ts';

type Row = Omit<CustomerRow, 'createdAt' | 'updatedAt'> & { createdAt: string; updatedAt: string };

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
  const row = await one<Row>(
    db,
    sql`select id, organization_id as "organizationId", first_name as "firstName", last_name as "lastName",
  msisdn, is_active as "isActive", identification_number as "identificationNumber",
  identification_type as "identificationType", reference_id as "referenceId",
  created_at::text as "createdAt", updated_at::text as "updatedAt"
  from customers where id = ${id} and organization_id = ${organizationId}`,
  );
  return (
    row && presentCustomer({ ...row, createdAt: dateOf(row.createdAt), updatedAt: dateOf(row.updatedAt) })
  );
}
