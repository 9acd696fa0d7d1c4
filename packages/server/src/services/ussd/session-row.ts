import { sql } from 'drizzle-orm';
import type { Tx } from '../../db/client.ts';
import { one, run } from '../../db/query.ts';
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

/**
 * Locks a session row for the rest of the transaction (SELECT ... FOR UPDATE) and reads it: a
 * statement written once, not assembled by the query builder on every move.
 */
export async function lockSession(tx: Tx, sessionId: string): Promise<LockedSession | undefined> {
  return one<LockedSession>(
    tx,
    sql`select organization_id as "organizationId",
  customer_id as "customerId", state, context, is_active as "isActive",
  (extract(epoch from expires_at) * 1000)::float8 as "expiresAtMs"
  from ussd_sessions where id = ${sessionId} for update`,
  );
}

/** A new session on its first screen (active: a first screen is never an end state). */
export async function insertSession(
  tx: Tx,
  row: { id: string; organizationId: string; customerId: string; expiresAt: Date },
  screen: UssdScreen,
): Promise<void> {
  const context = JSON.stringify(screen.context);
  await run(
    tx,
    sql`insert into ussd_sessions (id, organization_id, customer_id, state, context, expires_at)
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
): Promise<void> {
  const context = JSON.stringify(screen.context);
  await run(
    tx,
    sql`update ussd_sessions set state = ${screen.state}, context = ${context}::jsonb,
  is_active = ${!screen.menu.isEndState}, expires_at = ${times.expiresAt.toISOString()}::timestamptz,
  updated_at = ${times.now.toISOString()}::timestamptz
  where id = ${sessionId}`,
  );
}
