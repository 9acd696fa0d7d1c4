import type { Db, Queryable } from '../../server/src/db/client.ts';

/**
 * `db`, counting the statements run through its `execute` (each still runs on the real store):
 * for a test that says how many statements a piece of code sends.
 */
export function countingStatements(db: Queryable): { q: Db; count: () => number } {
  let sent = 0;
  const q = {
    execute: (query: Parameters<Queryable['execute']>[0]) => {
      sent += 1;
      return db.execute(query);
    },
  } as unknown as Db;
  return { q, count: () => sent };
}
