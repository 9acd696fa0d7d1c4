import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { sql } from 'drizzle-orm';
import { drizzle as drizzleNodePg } from 'drizzle-orm/node-postgres';
import { migrate as migrateNodePg } from 'drizzle-orm/node-postgres/migrator';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import { SERVER_FILES } from '../lib/package-paths.ts';
import { createBreaker, poolGuard } from './breaker.ts';
import { NamingPGlite } from './pglite.ts';
import { createPool } from './pool.ts';
import * as schema from './schema.ts';

export type Schema = typeof schema;
/** One type for both drivers: repository code never knows which store it runs on. */
export type Db = PgDatabase<PgQueryResultHKT, Schema>;
export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];
/** Anything a query can run on: the database or an open transaction. */
export type Queryable = Db | Tx;

export interface Database {
  db: Db;
  /**
   * Runs `work` on one connection, held throughout and without a transaction: statements that need
   * no transaction between them, but should not each queue for a connection of their own while the
   * request holds what the first one read (plugins/idempotency.ts, `respondInStatements`). `work`
   * must use only the `db` it is given, or it could wait for a second connection while holding one.
   * `outsideTransaction` tells whether no transaction block is open on that connection now, so that
   * a statement sent next commits on its own (services/idempotency/store.ts, `claimInsert`).
   */
  onOneConnection<T>(work: (db: Db, outsideTransaction: () => boolean) => Promise<T>): Promise<T>;
  kind: 'pglite' | 'postgres';
  ping(): Promise<void>;
  close(): Promise<void>;
}

export const MIGRATIONS = SERVER_FILES.migrations;
/** Serialises migrations when several instances start at once on one PostgreSQL. */
const MIGRATION_LOCK_ID = 7_246_100;

export type StoreOptions = {
  databaseUrl?: string;
  dataDir?: string;
  poolSize?: number;
  /** An in-memory store starts from this dump of a migrated store (`dumpDataDir`) instead of initdb. */
  template?: Blob;
};

/** `databaseUrl` → node-postgres pool; otherwise PGlite under `dataDir` (or in memory when dataDir is 'memory://'). */
export async function openDatabase(options: StoreOptions): Promise<Database> {
  if (options.databaseUrl) return openPostgres(options.databaseUrl, options.poolSize ?? 10);
  return openPglite(options.dataDir ?? 'memory://', options.template);
}

async function openPostgres(url: string, max: number): Promise<Database> {
  const breaker = createBreaker(url);
  const pool = createPool(
    {
      connectionString: url,
      max,
      connectionTimeoutMillis: 3000,
      idleTimeoutMillis: 30_000,
      // A dependency that is reachable but stuck must become a 503, never a hang.
      query_timeout: 10_000,
      // A statement whose client is gone (a cut connection, a killed process) is cancelled within
      // half a second, even while it waits on a lock, instead of running on to its commit
      // (PostgreSQL 14+; plugins/idempotency.ts, respondCreated).
      options: '-c client_connection_check_interval=500',
    },
    poolGuard(breaker, isDatabaseUnavailable),
  );
  // An idle client losing its server must not crash the process; the next query reports it.
  pool.on('error', () => {});
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_ID]);
    await migrateNodePg(drizzleNodePg(client, { schema }), { migrationsFolder: MIGRATIONS });
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_ID]).catch(() => {});
    client.release();
  }
  const db = drizzleNodePg(pool, { schema }) as unknown as Db;
  return {
    db,
    async onOneConnection(work) {
      const connection = await pool.connect();
      try {
        // Without the schema: building its relational config costs ~35 µs a call, and no query here
        // uses the relational API (`db.query`); with it, ~0.1 µs.
        return await work(
          drizzleNodePg(connection) as unknown as Db,
          () => connection.getTransactionStatus() === 'I',
        );
      } finally {
        connection.release();
      }
    },
    kind: 'postgres',
    ping: async () => void (await db.execute(sql`select 1`)),
    close: () => {
      breaker.stop();
      return pool.end();
    },
  };
}

async function openPglite(dataDir: string, template?: Blob): Promise<Database> {
  const memory = dataDir.startsWith('memory://');
  let target = dataDir;
  if (!memory) {
    target = path.resolve(dataDir, 'pglite');
    mkdirSync(target, { recursive: true });
  }
  // The migrations still run on a template's copy, finding nothing left to apply.
  const client = await NamingPGlite.open(target, {
    extensions: { pg_trgm },
    ...(memory && template ? { loadDataDir: template } : {}),
  });
  const db = drizzlePglite(client, { schema });
  await migratePglite(db, { migrationsFolder: MIGRATIONS });
  return {
    db: db as unknown as Db,
    // One connection is all PGlite has. While another request's transaction is open this answers
    // false, which only costs that claim its asynchronous commit.
    onOneConnection: (work) => work(db as unknown as Db, () => !client.isInTransaction()),
    kind: 'pglite',
    ping: async () => void (await client.query('select 1')),
    close: () => client.close(),
  };
}

const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'ETIMEDOUT', 'ECONNRESET', 'EPIPE']);

/** True when an error means the database cannot be reached (→ 503), not that a query was wrong. */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (let e: unknown = error; e instanceof Error; e = (e as { cause?: unknown }).cause) {
    const code = (e as { code?: string }).code ?? '';
    // Node's http "aborted": a client cut its own request body off; the database is not involved.
    if (code === 'ECONNRESET' && e.message === 'aborted') return false;
    if (UNAVAILABLE_CODES.has(code) || code.startsWith('08') || code === '57P01' || code === '57P03')
      return true;
    if (
      /Connection terminated|timeout exceeded when trying to connect|Query read timeout|Client has encountered a connection error/i.test(
        e.message,
      )
    )
      return true;
  }
  return false;
}
