import type { Customer, CustomerUpdate } from '@partner-api/contract';
import { type SQL, sql } from 'drizzle-orm';
import type { Queryable } from '../../db/client.ts';
import { assignments, one } from '../../db/query.ts';
import type { EventOutbox } from '../webhooks/outbox.ts';
import { getCustomer } from './get.ts';
import { type CustomerRow, customerColumns, presentCustomer } from './present.ts';

/** The column each field of a patch writes. */
const COLUMNS: { [K in keyof Required<CustomerUpdate>]: SQL } = {
  firstName: sql`first_name`,
  lastName: sql`last_name`,
  msisdn: sql`msisdn`,
  isActive: sql`is_active`,
  identificationNumber: sql`identification_number`,
  identificationType: sql`identification_type`,
  referenceId: sql`reference_id`,
};

/**
 * Applies the fields present in the patch (null clears a nullable one); undefined when the customer
 * is not the organization's. An empty patch changes nothing, updatedAt included, and returns the
 * customer. A change writes CUSTOMER.UPDATED (data: the customer as GET answers it) on `db`, which
 * is then the request's transaction.
 */
export async function updateCustomer({
  db,
  organizationId,
  id,
  input,
  events,
}: {
  db: Queryable;
  organizationId: string;
  id: string;
  input: CustomerUpdate;
  events: EventOutbox;
}): Promise<Customer | undefined> {
  // Only the fields the partner sent are written.
  const set = assignments(input, COLUMNS);
  if (set.length === 0) return getCustomer({ db, organizationId, id });
  const row = await one<CustomerRow>(
    db,
    sql`update customers set ${sql.join(set, sql`, `)}, updated_at = now()
  where id = ${id} and organization_id = ${organizationId}
  returning ${customerColumns}`,
  );
  if (!row) return undefined;
  const customer = presentCustomer(row);
  await events.emit(db, { organizationId, event: 'CUSTOMER.UPDATED', data: customer });
  return customer;
}
