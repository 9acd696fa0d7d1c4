import { type SQL, sql } from 'drizzle-orm';
import type { Queryable } from '../../db/client.ts';
import { one, run } from '../../db/query.ts';

/** A lock held by a crashed request expires after this long by default (docs/decisions.md, Idempotency). */
export const LOCK_SECONDS = 60;

export type Claim = { credentialId: string; key: string };
export type StoredResponse = { status: number; body: string; headers: Record<string, string> };

export type ClaimOutcome =
  | { kind: 'claimed' }
  | { kind: 'replay'; response: StoredResponse }
  | { kind: 'in_progress' }
  | { kind: 'mismatch' };

/**
 * Claims a key atomically: the primary key decides the race, never a check-then-insert. A record
 * past its retention, or a lock left by a crashed request, is taken over by a conditional update.
 */
export async function claimKey(
  db: Queryable,
  claim: Claim,
  fingerprint: string,
  ttlSeconds: number,
  lockSeconds: number = LOCK_SECONDS,
): Promise<ClaimOutcome> {
  const match = sql`credential_id = ${claim.credentialId} and key = ${claim.key}`;
  const lockUntil = sql`now() + make_interval(secs => ${lockSeconds})`;
  const expiresAt = sql`now() + make_interval(secs => ${ttlSeconds})`;
  // The common case, once per mutating request: the primary key decides.
  const inserted = await one<{ key: string }>(
    db,
    sql`insert into idempotency_keys (credential_id, key, fingerprint, locked_until, expires_at)
  values (${claim.credentialId}, ${claim.key}, ${fingerprint}, ${lockUntil}, ${expiresAt})
  on conflict do nothing returning key`,
  );
  if (inserted) return { kind: 'claimed' };

  const expired = await one<{ key: string }>(
    db,
    sql`update idempotency_keys set fingerprint = ${fingerprint}, locked_until = ${lockUntil},
  expires_at = ${expiresAt}, response_status = null, response_body = null, response_headers = null,
  created_at = now() where ${match} and expires_at <= now() returning key`,
  );
  if (expired) return { kind: 'claimed' };

  const row = await one<{
    fingerprint: string;
    responseStatus: number | null;
    responseBody: string | null;
    responseHeaders: Record<string, string> | null;
  }>(
    db,
    sql`select fingerprint, response_status as "responseStatus", response_body as "responseBody",
  response_headers as "responseHeaders" from idempotency_keys where ${match}`,
  );
  if (!row) return claimKey(db, claim, fingerprint, ttlSeconds, lockSeconds); // deleted between our statements: try again
  if (row.fingerprint !== fingerprint) return { kind: 'mismatch' };
  if (row.responseStatus !== null) {
    return {
      kind: 'replay',
      response: {
        status: row.responseStatus,
        body: row.responseBody ?? '',
        headers: row.responseHeaders ?? {},
      },
    };
  }
  const takenOver = await one<{ key: string }>(
    db,
    sql`update idempotency_keys set locked_until = ${lockUntil} where ${match} and response_status is null
  and (locked_until is null or locked_until <= now()) returning key`,
  );
  return takenOver ? { kind: 'claimed' } : { kind: 'in_progress' };
}

/** Stores the response; run inside the mutation's own transaction so both commit or neither. */
export async function completeKey(db: Queryable, claim: Claim, response: StoredResponse): Promise<void> {
  await run(db, completion(claim, response));
}

/** completeKey's statement, to run as a CTE of the mutation's own statement (one round trip fewer). */
export function completion(claim: Claim, response: StoredResponse): SQL {
  return sql`update idempotency_keys set response_status = ${response.status},
  response_body = ${response.body}, response_headers = ${JSON.stringify(response.headers)}::jsonb,
  locked_until = null where credential_id = ${claim.credentialId} and key = ${claim.key}`;
}

/** Frees the key after a 5xx so that the partner's retry can run. */
export async function releaseKey(db: Queryable, claim: Claim): Promise<void> {
  await run(
    db,
    sql`delete from idempotency_keys where credential_id = ${claim.credentialId} and key = ${claim.key}
  and response_status is null`,
  );
}
