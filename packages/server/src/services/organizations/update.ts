import { type SQL, sql } from 'drizzle-orm';
import type { Queryable } from '../../db/client.ts';
import { assignments, one } from '../../db/query.ts';
import { AppError } from '../../lib/errors.ts';
import type { OrganizationInput } from './create.ts';
import { type OrganizationRow, organizationColumns, presentOrganization } from './present.ts';

export type OrganizationPatch = Partial<OrganizationInput> & { isActive?: boolean; smsEnabled?: boolean };

const COLUMNS: { [K in keyof Required<OrganizationPatch>]: SQL } = {
  name: sql`name`,
  description: sql`description`,
  website: sql`website`,
  email: sql`email`,
  phone: sql`phone`,
  address: sql`address`,
  language: sql`language`,
  isActive: sql`is_active`,
  smsEnabled: sql`sms_enabled`,
};

/** Deactivating an organization refuses its tokens and makes it "gone" for GET /oauth/me. */
export async function updateOrganization({
  db,
  id,
  patch,
}: {
  db: Queryable;
  id: string;
  patch: OrganizationPatch;
}) {
  const set = [...assignments(patch, COLUMNS), sql`updated_at = ${new Date().toISOString()}::timestamptz`];
  const row = await one<OrganizationRow>(
    db,
    sql`update organizations set ${sql.join(set, sql`, `)} where id = ${id} returning ${organizationColumns}`,
  );
  if (!row) throw new AppError(404, 'Not found', 'Organization not found');
  return presentOrganization(row);
}
