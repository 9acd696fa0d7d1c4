import { createHash, randomBytes } from 'node:crypto';
import { createId } from '@partner-api/contract';
import { sql } from 'drizzle-orm';
import type { Queryable } from '../../db/client.ts';
import { dateOf, one, run } from '../../db/query.ts';
import type { OperatorRole } from './accounts.ts';

/** What a console request knows of its session. */
export type ConsoleSession = {
  id: string;
  csrfToken: string;
  operator: { id: string; name: string; role: OperatorRole };
};

const tokenHash = (token: string) => createHash('sha256').update(token).digest('hex');
export const randomToken = () => randomBytes(32).toString('base64url');

/** A new session for a signed-in operator: the cookie's token (returned, never stored) and its CSRF token. */
export async function createSession(
  db: Queryable,
  operatorId: string,
  now: Date,
): Promise<{ token: string; csrfToken: string }> {
  const token = randomToken();
  const csrfToken = randomToken();
  const at = now.toISOString();
  await run(
    db,
    sql`insert into console_sessions (id, token_hash, operator_id, csrf_token, created_at, last_seen_at)
  values (${createId()}, ${tokenHash(token)}, ${operatorId}, ${csrfToken}, ${at}, ${at})`,
  );
  await run(db, sql`update operators set last_sign_in_at = ${at} where id = ${operatorId}`);
  return { token, csrfToken };
}

/**
 * The session of this cookie token, its idle time renewed; `expired` when it was idle for longer
 * than `idleMinutes` (it is ended then), undefined when there is none or its operator is deactivated.
 */
export async function findSession(
  db: Queryable,
  token: string,
  now: Date,
  idleMinutes: number,
): Promise<ConsoleSession | 'expired' | undefined> {
  const row = await one<{
    id: string;
    csrfToken: string;
    lastSeenAt: string;
    operatorId: string;
    name: string;
    role: OperatorRole;
  }>(
    db,
    sql`select s.id, s.csrf_token as "csrfToken", s.last_seen_at::text as "lastSeenAt", o.id as "operatorId", o.name, o.role
  from console_sessions s join operators o on o.id = s.operator_id
  where s.token_hash = ${tokenHash(token)} and o.is_active`,
  );
  if (!row) return undefined;
  if (now.getTime() - dateOf(row.lastSeenAt).getTime() > idleMinutes * 60_000) {
    await run(db, sql`delete from console_sessions where id = ${row.id}`);
    return 'expired';
  }
  await run(db, sql`update console_sessions set last_seen_at = ${now.toISOString()} where id = ${row.id}`);
  return {
    id: row.id,
    csrfToken: row.csrfToken,
    operator: { id: row.operatorId, name: row.name, role: row.role },
  };
}

export async function endSession(db: Queryable, id: string): Promise<void> {
  await run(db, sql`delete from console_sessions where id = ${id}`);
}
