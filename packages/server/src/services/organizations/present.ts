import { sql } from 'drizzle-orm';
import { dateOf } from '../../db/query.ts';
import type { organizations } from '../../db/schema.ts';

export type Organization = typeof organizations.$inferSelect;
/** An organization as `organizationColumns` selects it: the timestamps as text. */
export type OrganizationRow = Omit<Organization, 'createdAt' | 'updatedAt'> & {
  createdAt: string;
  updatedAt: string;
};

/** Every column, in the table's order (the order of the operator's JSON). */
export const organizationColumns = sql`id, name, description, website, email, phone, address,
  is_active as "isActive", language, sms_enabled as "smsEnabled",
  created_at::text as "createdAt", updated_at::text as "updatedAt"`;

/** The operator's view of an organization: every column, the timestamps as dates. */
export function presentOrganization(row: OrganizationRow): Organization {
  return { ...row, createdAt: dateOf(row.createdAt), updatedAt: dateOf(row.updatedAt) };
}
