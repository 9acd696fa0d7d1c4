import { desc } from 'drizzle-orm';
import type { Queryable } from '../../db/client.ts';
import { organizations } from '../../db/schema.ts';

export async function listOrganizations({ db }: { db: Queryable }) {
  return db.select().from(organizations).orderBy(desc(organizations.createdAt), desc(organizations.id));
}
