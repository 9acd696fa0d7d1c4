import { eq } from 'drizzle-orm';
import type { Queryable } from '../../db/client.ts';
import { organizations } from '../../db/schema.ts';
import { AppError } from '../../lib/errors.ts';
import type { OrganizationInput } from './create.ts';

export type OrganizationPatch = Partial<OrganizationInput> & { isActive?: boolean };

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
  const [row] = await db
    .update(organizations)
    .set({ ...patch, updatedAt: new Date() })
    .where(eq(organizations.id, id))
    .returning();
  if (!row) throw new AppError(404, 'Not found', 'Organization not found');
  return row;
}
