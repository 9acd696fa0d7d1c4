import type { Customer, IdentificationType } from '@partner-api/contract';
import { sql } from 'drizzle-orm';
import { dateOf } from '../../db/query.ts';
import type { customers } from '../../db/schema.ts';

/** A customer as `customerColumns` selects it: the timestamps as text (README, "Data access"). */
export type CustomerRow = Omit<typeof customers.$inferSelect, 'createdAt' | 'updatedAt'> & {
  createdAt: string;
  updatedAt: string;
};

/** The select list (or `returning` list) of a CustomerRow. */
export const customerColumns = sql`id, organization_id as "organizationId", first_name as "firstName",
  last_name as "lastName", msisdn, is_active as "isActive", identification_number as "identificationNumber",
  identification_type as "identificationType", reference_id as "referenceId",
  created_at::text as "createdAt", updated_at::text as "updatedAt"`;

/** The wire form of a customer: every field of the spec's Customer, dates as ISO strings. */
export function presentCustomer(row: CustomerRow): Customer {
  return {
    id: row.id,
    organizationId: row.organizationId,
    firstName: row.firstName,
    lastName: row.lastName,
    msisdn: row.msisdn,
    isActive: row.isActive,
    identificationNumber: row.identificationNumber,
    // Only values of the contract's enum are ever written (validated at the edge).
    identificationType: row.identificationType as IdentificationType | null,
    referenceId: row.referenceId,
    createdAt: dateOf(row.createdAt).toISOString(),
    updatedAt: dateOf(row.updatedAt).toISOString(),
  };
}
