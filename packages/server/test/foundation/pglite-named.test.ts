/**
 * The embedded store names its repeated statements (db/pglite.ts): each is parsed and planned once per
 * session, then only bound and executed, and those asked for outside a transaction in one loop turn
 * run together in one protocol call. Results, errors and transactions must be exactly PGlite's.
 */
import { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/client.ts';
import { NamingPGlite } from '../../src/db/pglite.ts';
import { one, rows } from '../../src/db/query.ts';
import { atTurnEnd, turnEnding } from '../../src/db/turn.ts';

/** Counts the protocol calls into the engine: what "one call for the turn" is about. */
class CountingPGlite extends NamingPGlite {
  calls = 0;
  override execProtocolStream(...args: Parameters<NamingPGlite['execProtocolStream']>) {
    this.calls++;
    return super.execProtocolStream(...args);
  }
}

describe('NamingPGlite: named prepared statements on the embedded store', () => {
  let named: CountingPGlite;
  let plain: PGlite;
  const setup = `create table accounts (id text primary key, owner text not null, balance numeric(12,2) not null,
    opened timestamptz not null default '2026-01-01T00:00:00Z', tags text[] not null default '{}', meta jsonb)`;

  beforeAll(async () => {
    named = new CountingPGlite('memory://', {});
    await named.waitReady;
    plain = await PGlite.create('memory://');
    for (const db of [named, plain]) await db.exec(setup);
  });
  afterAll(async () => {
    await named?.close();
    await plain?.close();
  });

  const prepared = async () =>
    (await named.query<{ name: string }>('select name from pg_prepared_statements order by name')).rows.map(
      (r) => r.name,
    );

  it('answers what PGlite answers, with typed parameters and results, from a statement prepared once', async () => {
    const insert =
      'insert into accounts (id, owner, balance, tags, meta) values ($1, $2, $3, $4, $5) returning *';
    const select = 'select id, owner, balance, opened, tags, meta from accounts where owner = $1 order by id';
    for (const db of [named, plain]) {
      await db.query(insert, ['a1', 'Amina', '10.50', ['x', 'y'], { tier: 1 }]);
      await db.query(insert, ['a2', 'Amina', 7, [], null]);
    }
    for (const options of [undefined, { rowMode: 'array' as const }]) {
      const ours = await named.query(select, ['Amina'], options);
      const theirs = await plain.query(select, ['Amina'], options);
      expect(ours.rows).toEqual(theirs.rows);
      expect(ours.fields).toEqual(theirs.fields);
    }
    expect(await prepared()).toHaveLength(2);
    await named.query(select, ['Nobody']);
    expect(await prepared()).toHaveLength(2); // the second call did not prepare again
  });

  it('a query’s own parsers win over the session’s, as in PGlite, also when the same options come again', async () => {
    // drizzle's way: its own parsers (timestamps kept as text) on one options object it reuses.
    const options = { rowMode: 'array' as const, parsers: { 1184: (value: string) => `raw ${value}` } };
    const select = 'select opened, balance, tags from accounts where id = $1';
    for (let i = 0; i < 2; i++) {
      const ours = await named.query(select, ['a1'], options);
      expect(ours.rows).toEqual((await plain.query(select, ['a1'], options)).rows);
      expect(ours.rows).toEqual([['raw 2026-01-01 00:00:00+00', '10.50', ['x', 'y']]]);
    }
    // Without them, the session's parsers alone (a Date).
    expect((await named.query(select, ['a1'])).rows).toEqual((await plain.query(select, ['a1'])).rows);
    // An array type PGlite learns after the options were first used is parsed too.
    for (const db of [named, plain]) {
      await db.exec(`create type mood as enum ('calm', 'busy')`);
      await db.refreshArrayTypes();
    }
    const moods = `select array['calm', 'busy']::mood[] as moods, opened from accounts where id = $1`;
    const ours = await named.query(moods, ['a1'], options);
    expect(ours.rows).toEqual((await plain.query(moods, ['a1'], options)).rows);
    expect(ours.rows).toEqual([[['calm', 'busy'], 'raw 2026-01-01 00:00:00+00']]);
  });

  it('a failing statement throws PGlite’s error with its code, and the session goes on', async () => {
    const insert = 'insert into accounts (id, owner, balance) values ($1, $2, $3)';
    await named.query(insert, ['dup', 'Ben', 1]);
    await expect(named.query(insert, ['dup', 'Ben', 1])).rejects.toMatchObject({ code: '23505' });
    await expect(named.query(insert, ['b2', null, 1])).rejects.toMatchObject({ code: '23502' });
    expect(
      (await named.query('select count(*)::int as n from accounts where owner = $1', ['Ben'])).rows,
    ).toEqual([{ n: 1 }]);
  });

  it('inside a transaction: named statements commit together, or roll back together on an error', async () => {
    const insert = 'insert into accounts (id, owner, balance) values ($1, $2, $3)';
    await named.transaction(async (tx) => {
      await tx.query(insert, ['t1', 'Chao', 1]);
      await tx.query(insert, ['t2', 'Chao', 2]);
    });
    await expect(
      named.transaction(async (tx) => {
        await tx.query(insert, ['t3', 'Chao', 3]);
        await tx.query(insert, ['t1', 'Chao', 1]); // duplicate: the whole transaction rolls back
      }),
    ).rejects.toMatchObject({ code: '23505' });
    const owned = await named.query<{ id: string }>('select id from accounts where owner = $1 order by id', [
      'Chao',
    ]);
    expect(owned.rows.map((r) => r.id)).toEqual(['t1', 't2']);
    expect(named.isInTransaction()).toBe(false);
  });

  it('the statements of one turn run in one call, in the order asked, each its own transaction', async () => {
    const insert = 'insert into accounts (id, owner, balance) values ($1, $2, $3) returning id';
    const count = 'select count(*)::int as n from accounts where owner = $1';
    await named.query(insert, ['turn0', 'Dede', 0]); // both statements prepared before the count
    await named.query(count, ['Dede']);
    const before = named.calls;
    const asked = [
      named.query(insert, ['turn1', 'Dede', 1]),
      named.query(count, ['Dede']), // sees turn1, asked before it
      named.query(insert, ['turn1', 'Dede', 9]), // a duplicate: fails alone, at its own Sync
      named.query(insert, ['turn2', 'Dede', 2]), // still runs, and commits
      named.query(count, ['Dede']),
    ];
    const settled = await Promise.allSettled(asked);
    expect(named.calls - before).toBe(1);
    expect(settled.map((s) => s.status)).toEqual([
      'fulfilled',
      'fulfilled',
      'rejected',
      'fulfilled',
      'fulfilled',
    ]);
    expect((settled[2] as PromiseRejectedResult).reason).toMatchObject({ code: '23505' });
    const value = (i: number) => (settled[i] as PromiseFulfilledResult<{ rows: unknown[] }>).value.rows;
    expect(value(0)).toEqual([{ id: 'turn1' }]);
    expect(value(1)).toEqual([{ n: 2 }]);
    expect(value(3)).toEqual([{ id: 'turn2' }]);
    expect(value(4)).toEqual([{ n: 3 }]);
    expect(named.isInTransaction()).toBe(false);
  });

  it('a statement that cannot be prepared or bound fails alone; the rest of its turn runs', async () => {
    const insert = 'insert into accounts (id, owner, balance) values ($1, $2, $3) returning id';
    const settled = await Promise.allSettled([
      named.query(insert, ['alone1', 'Ebo', 1]),
      named.query('select nonsense from nowhere where id = $1', ['x']), // fails to prepare
      named.query(insert, ['alone2', 'Ebo', { toString: 'not a function' }]), // fails to serialise
      named.query(insert, ['alone3', 'Ebo', 3]),
    ]);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'fulfilled']);
    expect((settled[1] as PromiseRejectedResult).reason).toMatchObject({ code: '42P01' });
    const owned = await named.query<{ id: string }>('select id from accounts where owner = $1 order by id', [
      'Ebo',
    ]);
    expect(owned.rows.map((r) => r.id)).toEqual(['alone1', 'alone3']);
  });

  it('a statement asked while a transaction is open runs after it, and outside it', async () => {
    const insert = 'insert into accounts (id, owner, balance) values ($1, $2, $3)';
    let outside: Promise<unknown> | undefined;
    await expect(
      named.transaction(async (tx) => {
        await tx.query(insert, ['tx1', 'Femi', 1]);
        outside = named.query(insert, ['out1', 'Femi', 1]); // waits for the transaction to end
        await new Promise((resolve) => setTimeout(resolve, 20));
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    await outside;
    const owned = await named.query<{ id: string }>('select id from accounts where owner = $1 order by id', [
      'Femi',
    ]);
    expect(owned.rows.map((r) => r.id)).toEqual(['out1']);
  });

  it('a statement asked by turn-end work runs in that check phase, not a loop iteration later', async () => {
    const select = 'select count(*)::int as n from accounts where owner = $1';
    await named.query(select, ['Gift']); // prepared
    const seen: string[] = [];
    await new Promise<void>((done) => {
      atTurnEnd(() => {
        expect(turnEnding()).toBe(true);
        // Queued before the statement is asked: it runs in the next check phase.
        setImmediate(() => {
          seen.push('next check phase');
          done();
        });
        void Promise.resolve()
          .then(() => expect(turnEnding()).toBe(true)) // still, in the task's microtasks
          .then(() => named.query(select, ['Gift']))
          .then(() => seen.push('statement answered'));
      });
    });
    expect(seen).toEqual(['statement answered', 'next check phase']);
    expect(turnEnding()).toBe(false);
  });

  it('through drizzle, as the service runs it (templates, one(), rows(), transactions)', async () => {
    const db = drizzle(named) as unknown as Db; // as db/client.ts opens it
    await db.transaction(async (tx) => {
      await tx.execute(sql`insert into accounts (id, owner, balance) values (${'d1'}, ${'Dara'}, ${'2.25'})`);
    });
    expect(
      await one<{ balance: string }>(db, sql`select balance::text from accounts where id = ${'d1'}`),
    ).toEqual({ balance: '2.25' });
    expect(await rows<{ id: string }>(db, sql`select id from accounts where owner = ${'Dara'}`)).toEqual([
      { id: 'd1' },
    ]);
  });
});
