import type { Customer } from '@partner-api/contract';
import { sql } from 'drizzle-orm';
import type { Queryable } from '../../db/client.ts';
import { coalescedReader } from '../../db/query.ts';
import { type CustomerRow, customerColumns, presentCustomer } from './present.ts';

type Key = { organizationId: string; id: string };

/** A customer by id within an organization; an id is a CUID, so the pair joins without ambiguity. */
const keyOf = ({ organizationId, id }: Key) => `${organizationId}/${id}`;

/**
 * Reads customers by id, the turn's reads in one statement (db/query.ts, `coalescedReader`). Each
 * read matches both the id and the organization: another organization's customer is not found.
 */
export function customerReader(db: Queryable) {
  const read = coalescedReader<Key, CustomerRow>(
    db,
    (keys) => sql`select ${customerColumns} from customers
      where (id, organization_id) in (select * from unnest(${sql.param(keys.map((k) => k.id))}::text[],
        ${sql.param(keys.map((k) => k.organizationId))}::text[]))`,
    keyOf,
    keyOf,
  );
  /** undefined both when the id does not exist and when it belongs to another organization. */
  return async (key: Key): Promise<Customer | undefined> => {
    const row = await read(key);
    return row && presentCustomer(row);
  };
}
