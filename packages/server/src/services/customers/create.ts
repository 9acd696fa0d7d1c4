import { type Customer, type CustomerCreate, createId } from '@partner-api/contract';
import { type SQL, sql } from 'drizzle-orm';

/**
 * A new customer of the caller's organization (isActive defaults to true, the rest to null) as the
 * API answers it, and the INSERT that writes exactly that row. The id and timestamps are chosen
 * here, so the answer is known before the statement runs (plugins/idempotency.ts, respondCreated,
 * writes the key's record, this row and its event in one statement).
 */
export function newCustomer(organizationId: string, input: CustomerCreate) {
  const now = new Date().toISOString();
  // The key order of presentCustomer: a later GET answers the same bytes.
  const customer: Customer = {
    id: createId(),
    organizationId,
    firstName: input.firstName,
    lastName: input.lastName,
    msisdn: input.msisdn ?? null,
    isActive: input.isActive ?? true,
    identificationNumber: input.identificationNumber ?? null,
    identificationType: input.identificationType ?? null,
    referenceId: input.referenceId ?? null,
    createdAt: now,
    updatedAt: now,
  };
  const c = customer;
  /** The INSERT of exactly that row, for each row of `source` (none: once). */
  const insertFrom = (source: SQL) => sql`insert into customers (id, organization_id, first_name, last_name,
  msisdn, is_active, identification_number, identification_type, reference_id, created_at, updated_at)
  select ${c.id}::text, ${organizationId}::text, ${c.firstName}::text, ${c.lastName}::text, ${c.msisdn}::text,
  ${c.isActive}::boolean, ${c.identificationNumber}::text, ${c.identificationType}::text, ${c.referenceId}::text,
  ${now}::timestamptz, ${now}::timestamptz ${source}`;
  return { customer, insertFrom };
}
