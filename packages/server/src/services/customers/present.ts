import type { Customer, IdentificationType } from '@partner-api/contract';
import type { customers } from '../../db/schema.ts';

export type CustomerRow = typeof customers.$inferSelect;

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
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}
