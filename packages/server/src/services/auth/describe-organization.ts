import type { Organization } from '@partner-api/contract';
import { sql } from 'drizzle-orm';
import type { Queryable } from '../../db/client.ts';
import { dateOf, one, rows } from '../../db/query.ts';

const iso = (text: string | null) => dateOf(text)?.toISOString() ?? null;

type OrganizationRow = Omit<Organization, 'credentials' | 'createdAt' | 'updatedAt'> & {
  createdAt: string;
  updatedAt: string;
};
/** The wire fields, timestamps still as PostgreSQL's text. */
type CredentialRow = Organization['credentials'][number];

/** GET /oauth/me: the organization with its active credentials; undefined when it is gone. */
export async function describeOrganization({
  db,
  organizationId,
}: {
  db: Queryable;
  organizationId: string;
}): Promise<Organization | undefined> {
  const org = await one<OrganizationRow>(
    db,
    sql`select id, name, description, website, email, phone, address, is_active as "isActive",
  created_at::text as "createdAt", updated_at::text as "updatedAt"
  from organizations where id = ${organizationId}`,
  );
  if (!org?.isActive) return undefined;
  const active = await rows<CredentialRow>(
    db,
    sql`select id, name, client_id as "clientId", expires_at::text as "expiresAt",
  last_used_at::text as "lastUsedAt", created_at::text as "createdAt"
  from credentials where organization_id = ${organizationId} and is_active
  and (expires_at is null or expires_at > now()) order by created_at desc`,
  );
  return {
    id: org.id,
    name: org.name,
    description: org.description,
    website: org.website,
    email: org.email,
    phone: org.phone,
    address: org.address,
    isActive: org.isActive,
    createdAt: dateOf(org.createdAt).toISOString(),
    updatedAt: dateOf(org.updatedAt).toISOString(),
    credentials: active.map((c) => ({
      id: c.id,
      name: c.name,
      clientId: c.clientId,
      expiresAt: iso(c.expiresAt),
      lastUsedAt: iso(c.lastUsedAt),
      createdAt: dateOf(c.createdAt).toISOString(),
    })),
  };
}
