import type { Customer } from '@partner-api/contract';
import { and, eq, type SQLWrapper, sql } from 'drizzle-orm';
import { PgTransaction } from 'drizzle-orm/pg-core';
import type { Queryable } from '../../db/client.ts';
import { prepared } from '../../db/prepared.ts';
import { customers } from '../../db/schema.ts';
import { presentCustomer } from './present.ts';

/** undefined both when the id does not exist and when it belongs to another organization. */
export async function getCustomer({
  db,
  organizationId,
  id,
}: {
  db: Queryable;
  organizationId: string;
  id: string;
}): Promise<Customer | undefined> {
  // GET /customers/{id} reads through a prepared statement (db/prepared.ts); a transaction builds its own.
  const [row] =
    db instanceof PgTransaction
      ? await db.select().from(customers).where(byIdInOrganization(id, organizationId))
      : await prepared(db, 'customers_get', (root, name) =>
          root
            .select()
            .from(customers)
            .where(byIdInOrganization(sql.placeholder('id'), sql.placeholder('organizationId')))
            .prepare(name),
        ).execute({ id, organizationId });
  return row ? presentCustomer(row) : undefined;
}

const byIdInOrganization = (id: string | SQLWrapper, organizationId: string | SQLWrapper) =>
  and(eq(customers.id, id), eq(customers.organizationId, organizationId));
