import type { Organization } from '@partner-api/contract';
import { sql } from 'drizzle-orm';
import type { Queryable } from '../../db/client.ts';
import { dateOf, one } from '../../db/query.ts';

const iso = (text: string | null) => dateOf(text)?.toISOString() ?? null;

type OrganizationRow = Omit<Organization, 'credentials' | 'createdAt' | 'updatedAt'> & {
  createdAt: string;
  updatedAt: string;
};
/** The wire fields, timestamps still as PostgreSQL's text. */
type CredentialRow = Organization['credentials'][number];

/**
 * GET /oauth/me: the organization with its active credentials, in one statement (the credentials as
 * a JSON array, newest first); undefined when it is gone.
 */
export async function describeOrganization({
  db,
  organizationId,
}: {
  db: Queryable;
  organizationId: string;
}): Promise<Organization | undefined> {
  const org = await one<OrganizationRow & { credentials: CredentialRow[] }>(
    db,
    sql`select id, name, description, website, email, phone, address, is_active as "isActive",
  created_at::text as "createdAt", updated_at::text as "updatedAt",
  coalesce((select json_agg(json_build_object('id', c.id, 'name', c.name, 'clientId', c.client_id,
      'expiresAt', c.expires_at::text, 'lastUsedAt', c.last_used_at::text, 'createdAt', c.created_at::text)
    order by c.created_at desc)
    from credentials c where c.organization_id = o.id and c.is_active
    and (c.expires_at is null or c.expires_at > now())), '[]') as credentials
  from organizations o where o.id = ${organizationId}`,
  );
  if (!org?.isActive) return undefined;
  const active = org.credentials;
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
