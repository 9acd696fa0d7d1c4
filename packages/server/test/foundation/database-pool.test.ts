import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/db/rows.ts';
import { buildTestApp, POSTGRES_SKIP_REASON, type TestApp } from '../support/app.ts';

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
        const rows = rowsOf<{ pid: number }>(
          await t.ctx.database.db.execute(sql`select pg_backend_pid() as pid, pg_sleep(0.2)`),
        );
        return rows[0]!.pid;
      }),
    );
    expect(new Set(pids).size).toBe(3);
  });
});
