import type { Customer } from '@partner-api/contract';
import { sql } from 'drizzle-orm';
import type { Queryable } from '../../db/client.ts';
import { one } from '../../db/query.ts';
import { type CustomerRow, customerColumns, presentCustomer } from './present.ts';

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
  const row = await one<CustomerRow>(
    db,
    sql`select ${customerColumns} from customers where id = ${id} and organization_id = ${organizationId}`,
  );
  return row && presentCustomer(row);
}
