import { type SQL, sql } from 'drizzle-orm';
import type { Queryable } from './client.ts';
import { atTurnEnd } from './turn.ts';

/**
 * The one way this service writes a query (README, "Data access"): a drizzle `sql` template, its
 * row type declared where it is written, run on the database or an open transaction. Both drivers
 * answer an object with `rows`, which drizzle's shared type does not say: the only cast is here.
 * Timestamps, numerics and bigints arrive as strings on both stores; select what the caller needs.
 */
export async function rows<Row>(q: Queryable, query: SQL): Promise<Row[]> {
  return ((await q.execute(query)) as unknown as { rows: Row[] }).rows;
}

/** The first row, or undefined when there is none. */
export async function one<Row>(q: Queryable, query: SQL): Promise<Row | undefined> {
  return (await rows<Row>(q, query))[0];
}

/**
 * A function that runs a one-row read: `reader(db)`, or a request's first read with its idempotency
 * claim folded in (plugins/idempotency.ts, `respondClaimingWithRead`).
 */
export type Read = <Row>(query: SQL) => Promise<Row | undefined>;

/** `one` on `q`, as a `Read`. */
export const reader =
  (q: Queryable): Read =>
  (query) =>
    one(q, query);

/** A statement run for its effect: the number of rows it changed (both drivers say `rowCount`). */
export async function run(q: Queryable, query: SQL): Promise<number> {
  const result = (await q.execute(query)) as unknown as { rowCount?: number | null };
  return Number(result.rowCount ?? 0);
}

/** A timestamp selected as `column::text` (the same text on both stores), as a Date. */
export function dateOf(text: string): Date;
export function dateOf(text: string | null): Date | null;
export function dateOf(text: string | null): Date | null {
  return text === null ? null : new Date(text);
}

/**
 * `column` is due at the JavaScript clock reading `now` (an ISO string, milliseconds). A reading of
 * X ms stands for an instant in [X, X + 1 ms), while PostgreSQL writes `default now()` in
 * microseconds: a row queued at X + 0.6 ms, committed, and then nudged into a pass that read X, is
 * due. Compared with `<=` X it waited for the next poll instead (docs/performance.md, "Webhook
 * delivery"). Values written from the same clock (whole milliseconds) compare as
 * with `<=`; the bound stays a constant, so the queue's index on `next_attempt_at` still serves it.
 */
export function dueAt(column: SQL, now: string): SQL {
  return sql`${column} < ${now}::timestamptz + interval '1 millisecond'`;
}

/**
 * The `set` list of an update from a patch: `column = value` for each field it carries (undefined
 * leaves the column alone, null clears it). `columns` names the column of every field.
 */
export function assignments<Patch extends object>(
  patch: Patch,
  columns: { [K in keyof Required<Patch>]: SQL },
): SQL[] {
  return (Object.keys(columns) as (keyof Patch)[])
    .filter((field) => patch[field] !== undefined)
    .map((field) => sql`${columns[field]} = ${sql.param(patch[field])}`);
}

/**
 * Reads of one row by key, coalesced per event-loop turn: every key asked for during a turn is read
 * by one statement, `statement(keys)`, sent when the turn ends (`atTurnEnd`, the check phase, after
 * the requests that the turn's I/O resumed have all asked). Each caller gets the row whose key
 * (`keyOf`) is the one it asked for, or undefined; keys asked twice share a row. A failed statement
 * fails every read of its turn, as each would have failed alone.
 *
 * Exact as a read of its own: the statement is sent after every read it answers was asked, so it
 * sees everything committed before any of them asked (docs/performance.md, "The signed
 * GET"). Under load, one statement and one round trip serve a turn's requests instead of one each.
 */
export function coalescedReader<Key, Row>(
  q: Queryable,
  statement: (keys: Key[]) => SQL,
  keyOf: (key: Key) => string,
  rowKey: (row: Row) => string,
): (key: Key) => Promise<Row | undefined> {
  type Waiter = { resolve: (row: Row | undefined) => void; reject: (error: unknown) => void };
  let turn: Map<string, { key: Key; waiters: Waiter[] }> | undefined;

  // Never rejects: whatever fails (building the statement, running it, keying its rows) fails
  // the turn's reads instead of escaping the check phase; a read already answered stays answered.
  const flush = async () => {
    const batch = turn!;
    turn = undefined;
    try {
      const found = await rows<Row>(q, statement(Array.from(batch.values(), (entry) => entry.key)));
      const byKey = new Map(found.map((row) => [rowKey(row), row]));
      for (const [key, entry] of batch) for (const w of entry.waiters) w.resolve(byKey.get(key));
    } catch (error) {
      for (const entry of batch.values()) for (const w of entry.waiters) w.reject(error);
    }
  };

  return (key) =>
    new Promise<Row | undefined>((resolve, reject) => {
      if (turn === undefined) {
        turn = new Map();
        atTurnEnd(flush);
      }
      const id = keyOf(key);
      const entry = turn.get(id);
      if (entry) entry.waiters.push({ resolve, reject });
      else turn.set(id, { key, waiters: [{ resolve, reject }] });
    });
}
