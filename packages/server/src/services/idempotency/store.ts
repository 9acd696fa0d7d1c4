import { and, eq, isNull, lte, or, sql } from 'drizzle-orm';
import { PgTransaction } from 'drizzle-orm/pg-core';
import type { Queryable } from '../../db/client.ts';
import { prepared } from '../../db/prepared.ts';
import { idempotencyKeys } from '../../db/schema.ts';

/** A lock held by a crashed request expires after this long by default (product.md, Idempotency). */
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
  const lockUntil = sql`now() + make_interval(secs => ${lockSeconds})`;
  const expiresAt = sql`now() + make_interval(secs => ${ttlSeconds})`;
  // The common case, once per mutating request: a prepared statement (db/prepared.ts).
  const inserted =
    db instanceof PgTransaction
      ? await db
          .insert(idempotencyKeys)
          .values({ ...claim, fingerprint, lockedUntil: lockUntil as never, expiresAt: expiresAt as never })
          .onConflictDoNothing()
          .returning({ key: idempotencyKeys.key })
      : await prepared(db, 'idempotency_claim', (root, name) =>
          root
            .insert(idempotencyKeys)
            .values({
              credentialId: sql.placeholder('credentialId'),
              key: sql.placeholder('key'),
              fingerprint: sql.placeholder('fingerprint'),
              lockedUntil: sql`now() + make_interval(secs => ${sql.placeholder('lockSeconds')})` as never,
              expiresAt: sql`now() + make_interval(secs => ${sql.placeholder('ttlSeconds')})` as never,
            })
            .onConflictDoNothing()
            .returning({ key: idempotencyKeys.key })
            .prepare(name),
        ).execute({ ...claim, fingerprint, lockSeconds, ttlSeconds });
  if (inserted.length > 0) return { kind: 'claimed' };

  const match = and(eq(idempotencyKeys.credentialId, claim.credentialId), eq(idempotencyKeys.key, claim.key));
  const expired = await db
    .update(idempotencyKeys)
    .set({
      fingerprint,
      lockedUntil: lockUntil as never,
      expiresAt: expiresAt as never,
      responseStatus: null,
      responseBody: null,
      responseHeaders: null,
      createdAt: sql`now()` as never,
    })
    .where(and(match, lte(idempotencyKeys.expiresAt, sql`now()`)))
    .returning({ key: idempotencyKeys.key });
  if (expired.length > 0) return { kind: 'claimed' };

  const [row] = await db.select().from(idempotencyKeys).where(match);
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
  const takenOver = await db
    .update(idempotencyKeys)
    .set({ lockedUntil: lockUntil as never })
    .where(
      and(
        match,
        isNull(idempotencyKeys.responseStatus),
        or(isNull(idempotencyKeys.lockedUntil), lte(idempotencyKeys.lockedUntil, sql`now()`)),
      ),
    )
    .returning({ key: idempotencyKeys.key });
  return takenOver.length > 0 ? { kind: 'claimed' } : { kind: 'in_progress' };
}

/** Stores the response; run inside the mutation's own transaction so both commit or neither. */
export async function completeKey(db: Queryable, claim: Claim, response: StoredResponse): Promise<void> {
  // Once per mutating request, inside its transaction: a statement written once (drizzle's query
  // builder would assemble it anew each time), named and prepared per connection by db/pool.ts
  await db.execute(sql`update idempotency_keys set response_status = ${response.status},
  response_body = ${response.body}, response_headers = ${JSON.stringify(response.headers)}::jsonb,
  locked_until = null where credential_id = ${claim.credentialId} and key = ${claim.key}`);
}

/** Frees the key after a 5xx so that the partner's retry can run. */
export async function releaseKey(db: Queryable, claim: Claim): Promise<void> {
  await db
    .delete(idempotencyKeys)
    .where(
      and(
        eq(idempotencyKeys.credentialId, claim.credentialId),
        eq(idempotencyKeys.key, claim.key),
        isNull(idempotencyKeys.responseStatus),
      ),
    );
}
