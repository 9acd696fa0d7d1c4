import { createId } from '@partner-api/contract';
import type { Queryable } from '../../db/client.ts';
import { organizations } from '../../db/schema.ts';

export type OrganizationInput = {
  name: string;
  description?: string | null;
  website?: string | null;
  email?: string | null;
  phone?: string | null;
  address?: string | null;
};

export async function createOrganization({ db, input }: { db: Queryable; input: OrganizationInput }) {
  const [row] = await db
    .insert(organizations)
    .values({ id: createId(), ...input })
    .returning();
  return row!;
}
