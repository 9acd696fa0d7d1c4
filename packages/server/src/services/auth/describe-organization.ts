import type { Organization } from '@partner-api/contract';
import { and, desc, eq, gt, isNull, or, sql } from 'drizzle-orm';
import type { Queryable } from '../../db/client.ts';
import { credentials, organizations } from '../../db/schema.ts';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** GET /oauth/me: the organization with its active credentials; undefined when it is gone. */
export async function describeOrganization({
  db,
  organizationId,
}: {
  db: Queryable;
  organizationId: string;
}): Promise<Organization | undefined> {
  const [org] = await db.select().from(organizations).where(eq(organizations.id, organizationId));
  if (!org?.isActive) return undefined;
  const active = await db
    .select()
    .from(credentials)
    .where(
      and(
        eq(credentials.organizationId, organizationId),
        eq(credentials.isActive, true),
        or(isNull(credentials.expiresAt), gt(credentials.expiresAt, sql`now()`)),
      ),
    )
    .orderBy(desc(credentials.createdAt));
  return {
    id: org.id,
    name: org.name,
    description: org.description,
    website: org.website,
    email: org.email,
    phone: org.phone,
    address: org.address,
    isActive: org.isActive,
    createdAt: org.createdAt.toISOString(),
    updatedAt: org.updatedAt.toISOString(),
    credentials: active.map((c) => ({
      id: c.id,
      name: c.name,
      clientId: c.clientId,
      expiresAt: iso(c.expiresAt),
      lastUsedAt: iso(c.lastUsedAt),
      createdAt: c.createdAt.toISOString(),
    })),
  };
}
