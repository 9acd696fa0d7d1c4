import { createId } from '@partner-api/contract';
import { sql } from 'drizzle-orm';
import type { Queryable } from '../../db/client.ts';
import { one } from '../../db/query.ts';
import { type OrganizationRow, organizationColumns, presentOrganization } from './present.ts';

export type OrganizationInput = {
  name: string;
  description?: string | null;
  website?: string | null;
  email?: string | null;
  phone?: string | null;
  address?: string | null;
};

export async function createOrganization({ db, input }: { db: Queryable; input: OrganizationInput }) {
  const row = await one<OrganizationRow>(
    db,
    sql`insert into organizations (id, name, description, website, email, phone, address)
  values (${createId()}, ${input.name}, ${input.description ?? null}, ${input.website ?? null},
  ${input.email ?? null}, ${input.phone ?? null}, ${input.address ?? null})
  returning ${organizationColumns}`,
  );
  return presentOrganization(row!);
}
