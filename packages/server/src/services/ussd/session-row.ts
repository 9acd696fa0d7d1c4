import { type SQL, sql } from 'drizzle-orm';
import type { Queryable, Tx } from '../../db/client.ts';
import { one, type Read, run } from '../../db/query.ts';
import { type SnapshotRow, snapshotColumns } from './load-data.ts';
import type { UssdScreen } from './types.ts';

export type LockedSession = {
  organizationId: string;
  customerId: string;
  state: string;
  context: Record<string, unknown>;
  isActive: boolean;
  /** `expires_at` in epoch milliseconds. */
  expiresAtMs: number;
};

/** The session row as `lockSession` and `readSession` read it, from the row (or CTE) named `u`. */
const SESSION_COLUMNS = sql`u.organization_id as "organizationId", u.customer_id as "customerId",
  u.state, u.context, u.is_active as "isActive",
  (extract(epoch from u.expires_at) * 1000)::float8 as "expiresAtMs"`;

/** A session as read with the move's snapshot (`snapshotColumns` of its owner), in one statement. */
export type SessionWithSnapshot = LockedSession & { snapshot: SnapshotRow };

function splitSnapshot<T extends SnapshotRow>(row: T) {
  const { customer, organization_name, language, stocks, holdings, open_orders, ...session } = row;
  return { ...session, snapshot: { customer, organization_name, language, stocks, holdings, open_orders } };
}

/**
 * Reads a session and its move's snapshot without locking anything, with the row's version (its
 * `xmin`): a move computed from it is written by `saveSessionIfUnchanged`, which writes only if no
 * other move committed on the session since (docs/performance.md, "Fewer statements, one
 * connection").
 */
export async function readSession(
  read: Read,
  sessionId: string,
): Promise<(SessionWithSnapshot & { version: string }) | undefined> {
  const row = await read<LockedSession & { version: string } & SnapshotRow>(
    sql`select ${SESSION_COLUMNS}, u.xmin::text as version,
  ${snapshotColumns(sql`u.organization_id`, sql`u.customer_id`)}
from ussd_sessions u where u.id = ${sessionId}`,
  );
  return row ? splitSnapshot(row) : undefined;
}

/**
 * Locks a session row for the rest of the transaction (SELECT ... FOR UPDATE) and reads it, together
 * with the move's snapshot (`snapshotColumns` of the session's owner): one round trip instead of
 * two. The snapshot is used only when the statement's snapshot already saw the version it locked.
 * A move that committed on this session while this statement waited for its lock makes `current`
 * false (the locked version is newer than the one the statement's snapshot sees); the caller then
 * reads the snapshot again in a statement of its own, which sees that commit.
 */
export async function lockSession(
  tx: Tx,
  sessionId: string,
): Promise<(SessionWithSnapshot & { current: boolean }) | undefined> {
  const row = await one<LockedSession & { current: boolean } & SnapshotRow>(
    tx,
    sql`with u as materialized (
  select organization_id, customer_id, state, context, is_active, expires_at, xmin::text as version
  from ussd_sessions where id = ${sessionId} for update
)
select ${SESSION_COLUMNS},
  u.version = (select xmin::text from ussd_sessions where id = ${sessionId}) as "current",
  ${snapshotColumns(sql`u.organization_id`, sql`u.customer_id`)}
from u`,
  );
  return row ? splitSnapshot(row) : undefined;
}

/** The request's stored answer (`StoreAnswer`) as a CTE of the session's write: one round trip. */
const withStored = (stored: SQL | undefined) => (stored ? sql`with stored as (${stored}) ` : sql``);

/** A new session on its first screen (active: a first screen is never an end state). */
export async function insertSession(
  db: Queryable,
  row: { id: string; organizationId: string; customerId: string; expiresAt: Date },
  screen: UssdScreen,
  stored?: SQL,
): Promise<void> {
  const context = JSON.stringify(screen.context);
  await run(
    db,
    sql`${withStored(stored)}insert into ussd_sessions (id, organization_id, customer_id, state, context, expires_at)
  values (${row.id}, ${row.organizationId}, ${row.customerId}, ${screen.state}, ${context}::jsonb,
  ${row.expiresAt.toISOString()}::timestamptz)`,
  );
}

/** The columns a move writes: the new screen (state and context), whether it is still active, its expiry. */
function screenAssignments(screen: UssdScreen, times: { expiresAt: Date; now: Date }): SQL {
  return sql`state = ${screen.state}, context = ${JSON.stringify(screen.context)}::jsonb,
  is_active = ${!screen.menu.isEndState}, expires_at = ${times.expiresAt.toISOString()}::timestamptz,
  updated_at = ${times.now.toISOString()}::timestamptz`;
}

/** Stores a session's new screen in the move's transaction, which holds the row's lock. */
export async function saveSession(
  tx: Tx,
  sessionId: string,
  screen: UssdScreen,
  times: { expiresAt: Date; now: Date },
  stored?: SQL,
): Promise<void> {
  await run(
    tx,
    sql`${withStored(stored)}update ussd_sessions set ${screenAssignments(screen, times)} where id = ${sessionId}`,
  );
}

/**
 * Stores a session's new screen if the row is still the `version` that `readSession` read, with the
 * request's stored answer, in one autocommit statement; false (and nothing written) when another move
 * committed on the session since. A move racing this statement makes it wait for that move's commit,
 * then re-check its condition against the new row (PostgreSQL's rule for an UPDATE under READ
 * COMMITTED), which fails: two moves never both apply to one version. `stored` is given the condition
 * its write must carry, so that the answer is stored only with the session's write.
 */
export async function saveSessionIfUnchanged(
  db: Queryable,
  session: { id: string; version: string },
  screen: UssdScreen,
  times: { expiresAt: Date; now: Date },
  stored?: (onlyIf: SQL) => SQL | undefined,
): Promise<boolean> {
  const answer = stored?.(sql`exists (select 1 from moved)`);
  const row = await one<{ saved: boolean }>(
    db,
    sql`with moved as (
  update ussd_sessions set ${screenAssignments(screen, times)}
  where id = ${session.id} and xmin::text = ${session.version} returning 1
)${answer ? sql`, stored as (${answer})` : sql``}
select exists (select 1 from moved) as saved`,
  );
  return row?.saved === true;
}
