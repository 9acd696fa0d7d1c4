import { POSTGRES_SKIP_REASON } from '@partner-api/testkit/app.ts';
import { countingStatements } from '@partner-api/testkit/counting-db.ts';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, openDatabase } from '../../src/db/client.ts';
import { coalescedReader, dateOf, one, rows, run } from '../../src/db/query.ts';

const DATABASE_URL = process.env.DATABASE_URL;
if (!DATABASE_URL) console.info(`db/query.ts on PostgreSQL: ${POSTGRES_SKIP_REASON}`);
const stores = DATABASE_URL ? (['pglite', 'postgres'] as const) : (['pglite'] as const);

/** README, "Data access": a `sql` template's row reads the same JS values on both stores. */
describe.each(stores)('db/query.ts on %s', (store) => {
  let database: Database;
  beforeAll(async () => {
    database = await openDatabase(store === 'postgres' ? { databaseUrl: DATABASE_URL } : {});
  });
  afterAll(async () => {
    await database?.close();
  });

  // A bare int8 differs (PGlite: number, node-postgres: string): select it `::int` or `::text`.
  it('numerics and bigints as strings, booleans, integers, json, arrays and nulls as JS values', async () => {
    const row = await one<Record<string, unknown>>(
      database.db,
      sql`select ${'1000.5'}::numeric(18, 2) as amount, 28.5::numeric(20, 4) as price, 9::int8::text as big,
  (select count(*) from (values (1), (2)) v)::int as counted,
  7::int as n, true as flag, '{"a": [1]}'::jsonb as doc, array['x', 'y']::text[] as list,
  null::text as nothing, ${'x'}::text as text`,
    );
    expect(row).toEqual({
      amount: '1000.50',
      price: '28.5000',
      big: '9',
      counted: 2,
      n: 7,
      flag: true,
      doc: { a: [1] },
      list: ['x', 'y'],
      nothing: null,
      text: 'x',
    });
  });

  it('a timestamp selected as text reads as the same instant', async () => {
    const at = '2026-03-01T08:15:30.123Z';
    const row = await one<{ at: string; none: string | null }>(
      database.db,
      sql`select ${at}::timestamptz::text as at, null::timestamptz::text as none`,
    );
    expect(dateOf(row!.at).toISOString()).toBe(at);
    expect(dateOf(row!.none)).toBeNull();
  });

  it('rows, one and run inside a transaction: the count of changed rows, nothing when no row', async () => {
    const found = await database.db.transaction(async (tx) => {
      await run(tx, sql`create temporary table q_probe (id int) on commit drop`);
      const changed = await run(tx, sql`insert into q_probe values (1), (2), (3)`);
      const all = await rows<{ id: number }>(tx, sql`select id from q_probe where id > ${1} order by id`);
      const none = await one<{ id: number }>(tx, sql`select id from q_probe where id = ${9}`);
      return { changed, all, none };
    });
    expect(found).toEqual({ changed: 3, all: [{ id: 2 }, { id: 3 }], none: undefined });
  });

  type Pair = { n: number; label: string };
  const pairs = (keys: number[]) =>
    sql`select n, 'row ' || n as label from unnest(${sql.param(keys)}::int[]) as k(n) where n < 100`;

  it('coalescedReader: the reads of one turn in one statement, each answered its own row', async () => {
    const { q, count } = countingStatements(database.db);
    const read = coalescedReader<number, Pair>(q, pairs, String, (row) => String(row.n));
    // Asked in one turn: 3 twice, and 500, which the statement finds no row for.
    const turn = await Promise.all([read(1), read(3), read(3), read(500), read(2)]);
    expect(turn).toEqual([
      { n: 1, label: 'row 1' },
      { n: 3, label: 'row 3' },
      { n: 3, label: 'row 3' },
      undefined,
      { n: 2, label: 'row 2' },
    ]);
    expect(count()).toBe(1);
    // The next turn is a statement of its own.
    expect(await read(7)).toEqual({ n: 7, label: 'row 7' });
    expect(count()).toBe(2);
  });

  it('coalescedReader: a failed statement fails every read of its turn, and only that turn', async () => {
    const { q, count } = countingStatements(database.db);
    let fail = true;
    const read = coalescedReader<number, Pair>(
      q,
      (keys) =>
        fail ? sql`select n from no_such_table where n = any(${sql.param(keys)}::int[])` : pairs(keys),
      String,
      (row) => String(row.n),
    );
    const turn = await Promise.allSettled([read(1), read(2)]);
    expect(turn.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(count()).toBe(1);
    fail = false;
    expect(await read(1)).toEqual({ n: 1, label: 'row 1' });
  });

  it('coalescedReader: a statement that cannot be built, or rows that cannot be keyed, fail the turn', async () => {
    const unbuildable = coalescedReader<number, Pair>(
      database.db,
      () => {
        throw new Error('no statement');
      },
      String,
      (row) => String(row.n),
    );
    const unkeyable = coalescedReader<number, Pair>(database.db, pairs, String, () => {
      throw new Error('no key');
    });
    const turn = await Promise.allSettled([unbuildable(1), unkeyable(1)]);
    expect(turn).toEqual([
      { status: 'rejected', reason: new Error('no statement') },
      { status: 'rejected', reason: new Error('no key') },
    ]);
  });
});
