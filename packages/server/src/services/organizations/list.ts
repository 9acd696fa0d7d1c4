import { sql } from 'drizzle-orm';
import type { Queryable } from '../../db/client.ts';
import { rows } from '../../db/query.ts';
import { type OrganizationRow, organizationColumns, presentOrganization } from './present.ts';

export async function listOrganizations({ db }: { db: Queryable }) {
  const found = await rows<OrganizationRow>(
    db,
    sql`select ${organizationColumns} from organizations order by created_at desc, id desc`,
  );
  return found.map(presentOrganization);
}
