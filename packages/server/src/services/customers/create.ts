import { type Customer, type CustomerCreate, createId } from '@partner-api/contract';
import { sql } from 'drizzle-orm';
import type { Queryable } from '../../db/client.ts';
import { one } from '../../db/query.ts';
import { type CustomerRow, customerColumns, presentCustomer } from './present.ts';

/** Creates a customer of the caller's organization; isActive defaults to true, the rest to null. */
export async function createCustomer({
  db,
  organizationId,
  input,
}: {
  db: Queryable;
  organizationId: string;
  input: CustomerCreate;
}): Promise<Customer> {
  const row = await one<CustomerRow>(
    db,
    sql`insert into customers (id, organization_id, first_name, last_name, msisdn, is_active,
  identification_number, identification_type, reference_id)
  values (${createId()}, ${organizationId}, ${input.firstName}, ${input.lastName}, ${input.msisdn ?? null},
  ${input.isActive ?? true}, ${input.identificationNumber ?? null}, ${input.identificationType ?? null},
  ${input.referenceId ?? null})
  returning ${customerColumns}`,
  );
  return presentCustomer(row!);
}
