import type { Db } from './client.ts';

const byDatabase = new WeakMap<Db, Map<string, unknown>>();

/**
 * A drizzle prepared statement for the hottest queries, built once per database: drizzle's query
 * builder costs about 100 µs of CPU per query here (the prepared execution about 30 µs), and on
 * node-postgres the statement is named, so each pooled connection parses and plans it once.
 * Only for the database itself: a transaction runs on one client and must build its own queries.
 */
export function prepared<T>(db: Db, name: string, build: (db: Db, name: string) => T): T {
  let statements = byDatabase.get(db);
  if (!statements) {
    statements = new Map();
    byDatabase.set(db, statements);
  }
  let statement = statements.get(name) as T | undefined;
  if (statement === undefined) {
    statement = build(db, name);
    statements.set(name, statement);
  }
  return statement;
}
