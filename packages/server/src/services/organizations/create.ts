import { createId } from '@partner-api/contract';
import { sql } from 'drizzle-orm';
import type { Queryable } from '../../db/client.ts';
import { one } from '../../db/query.ts';
import { DEFAULT_LANGUAGE, type Language } from '../../i18n/index.ts';
import { type OrganizationRow, organizationColumns, presentOrganization } from './present.ts';

export type OrganizationInput = {
  name: string;
  description?: string | null;
  website?: string | null;
  email?: string | null;
  phone?: string | null;
  address?: string | null;
  /** The default language of the organization's customers (src/i18n); 'en' when not given. */
  language?: Language;
};

export async function createOrganization({ db, input }: { db: Queryable; input: OrganizationInput }) {
  const row = await one<OrganizationRow>(
    db,
    sql`insert into organizations (id, name, description, website, email, phone, address, language)
  values (${createId()}, ${input.name}, ${input.description ?? null}, ${input.website ?? null},
  ${input.email ?? null}, ${input.phone ?? null}, ${input.address ?? null}, ${input.language ?? DEFAULT_LANGUAGE})
  returning ${organizationColumns}`,
  );
  return presentOrganization(row!);
}
