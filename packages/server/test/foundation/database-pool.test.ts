import { buildTestApp, POSTGRES_SKIP_REASON, type TestApp } from '@partner-api/testkit/app.ts';
import { sql } from 'drizzle-orm';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { one, rows } from '../../src/db/query.ts';

const enabled = Boolean(process.env.DATABASE_URL);
if (!enabled) console.info(`DATABASE_POOL_SIZE: ${POSTGRES_SKIP_REASON}`);

/** DATABASE_POOL_SIZE bounds the connections one instance opens (docs/scaling.md, sizing). */
describe.skipIf(!enabled)('DATABASE_POOL_SIZE on PostgreSQL', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp('postgres', { DATABASE_POOL_SIZE: '3' });
  });
  afterAll(async () => {
    await t.close();
  });

  it('eight concurrent queries share three connections', async () => {
    const pids = await Promise.all(
      Array.from({ length: 8 }, async () => {
        const row = await one<{ pid: number }>(
          t.ctx.database.db,
          sql`select pg_backend_pid() as pid, pg_sleep(0.2)`,
        );
        return row!.pid;
      }),
    );
    expect(new Set(pids).size).toBe(3);
  });

  it('a repeated parameterised statement runs as a named prepared statement; no pg method is replaced', async () => {
    const { db } = t.ctx.database;
    const prepared = await db.transaction(async (tx) => {
      await one<{ n: number }>(tx, sql`select ${41}::int + 1 as n`);
      return rows<{ name: string; statement: string }>(
        tx,
        sql`select name, statement from pg_prepared_statements`,
      );
    });
    expect(prepared.find((p) => p.statement === 'select $1::int + 1 as n')?.name).toMatch(/^pa_\d+$/);
    // Naming and the breaker live in subclasses (db/pool.ts), never as own properties of pg objects.
    const pool = (db as unknown as { $client: pg.Pool }).$client;
    const client = await pool.connect();
    try {
      expect([Object.hasOwn(pool, 'connect'), Object.hasOwn(client, 'query')]).toEqual([false, false]);
    } finally {
      client.release();
    }
  });
});
