import { type SQL, sql } from 'drizzle-orm';
import type { Tx } from '../../db/client.ts';
import { one, run } from '../../db/query.ts';
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

/** The session row as `lockSession` reads it (the statement's select list). */
const SESSION_COLUMNS = sql`locked.organization_id as "organizationId", locked.customer_id as "customerId",
  locked.state, locked.context, locked.is_active as "isActive",
  (extract(epoch from locked.expires_at) * 1000)::float8 as "expiresAtMs"`;

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
): Promise<(LockedSession & { current: boolean; snapshot: SnapshotRow }) | undefined> {
  const row = await one<LockedSession & { current: boolean } & SnapshotRow>(
    tx,
    sql`with locked as materialized (
  select organization_id, customer_id, state, context, is_active, expires_at, xmin::text as version
  from ussd_sessions where id = ${sessionId} for update
)
select ${SESSION_COLUMNS},
  locked.version = (select xmin::text from ussd_sessions where id = ${sessionId}) as "current",
  ${snapshotColumns(sql`locked.organization_id`, sql`locked.customer_id`)}
from locked`,
  );
  if (!row) return undefined;
  const { customer, organization_name, stocks, holdings, open_orders, ...session } = row;
  return { ...session, snapshot: { customer, organization_name, stocks, holdings, open_orders } };
}

/** The request's stored answer (`StoreAnswer`) as a CTE of the session's write: one round trip. */
const withStored = (stored: SQL | undefined) => (stored ? sql`with stored as (${stored}) ` : sql``);

/** A new session on its first screen (active: a first screen is never an end state). */
export async function insertSession(
  tx: Tx,
  row: { id: string; organizationId: string; customerId: string; expiresAt: Date },
  screen: UssdScreen,
  stored?: SQL,
): Promise<void> {
  const context = JSON.stringify(screen.context);
  await run(
    tx,
    sql`${withStored(stored)}insert into ussd_sessions (id, organization_id, customer_id, state, context, expires_at)
  values (${row.id}, ${row.organizationId}, ${row.customerId}, ${screen.state}, ${context}::jsonb,
  ${row.expiresAt.toISOString()}::timestamptz)`,
  );
}

/** Stores a session's new screen (state and context), whether it is still active, and its new expiry. */
export async function saveSession(
  tx: Tx,
  sessionId: string,
  screen: UssdScreen,
  times: { expiresAt: Date; now: Date },
  stored?: SQL,
): Promise<void> {
  const context = JSON.stringify(screen.context);
  await run(
    tx,
    sql`${withStored(stored)}update ussd_sessions set state = ${screen.state}, context = ${context}::jsonb,
  is_active = ${!screen.menu.isEndState}, expires_at = ${times.expiresAt.toISOString()}::timestamptz,
  updated_at = ${times.now.toISOString()}::timestamptz
  where id = ${sessionId}`,
  );
}
