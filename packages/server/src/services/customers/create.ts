import { type Customer, type CustomerCreate, createId } from '@partner-api/contract';
import type { Queryable } from '../../db/client.ts';
import { customers } from '../../db/schema.ts';
import { presentCustomer } from './present.ts';

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
  const [row] = await db
    .insert(customers)
    .values({
      id: createId(),
      organizationId,
      firstName: input.firstName,
      lastName: input.lastName,
      msisdn: input.msisdn ?? null,
      isActive: input.isActive ?? true,
      identificationNumber: input.identificationNumber ?? null,
      identificationType: input.identificationType ?? null,
      referenceId: input.referenceId ?? null,
    })
    .returning();
  return presentCustomer(row!);
}
