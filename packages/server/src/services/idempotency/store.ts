import { type SQL, sql } from 'drizzle-orm';
import type { Queryable } from '../../db/client.ts';
import { one, run } from '../../db/query.ts';

/** A lock held by a crashed request expires after this long by default (docs/decisions.md, Idempotency). */
export const LOCK_SECONDS = 60;

export type Claim = { credentialId: string; key: string };
export type StoredResponse = { status: number; body: string; headers: Record<string, string> };

type KeyRecord = {
  fingerprint: string;
  responseStatus: number | null;
  responseBody: string | null;
  responseHeaders: Record<string, string> | null;
};

/** What an existing, unexpired record answers by itself: a 422, a replay, or nothing yet (in flight). */
function settledBy(
  row: KeyRecord,
  fingerprint: string,
): Extract<ClaimOutcome, { kind: 'mismatch' | 'replay' }> | undefined {
  if (row.fingerprint !== fingerprint) return { kind: 'mismatch' };
  if (row.responseStatus === null) return undefined;
  return {
    kind: 'replay',
    response: {
      status: row.responseStatus,
      body: row.responseBody ?? '',
      headers: row.responseHeaders ?? {},
    },
  };
}

export type ClaimOutcome =
  | { kind: 'claimed' }
  | { kind: 'replay'; response: StoredResponse }
  | { kind: 'in_progress' }
  | { kind: 'mismatch' };

/**
 * Claims a key atomically: the primary key decides the race, never a check-then-insert. A record
 * past its retention, or a lock left by a crashed request, is taken over by a conditional update.
 * `alone`: `db` runs each statement as its own transaction (`claimInsert`).
 */
export async function claimKey(
  db: Queryable,
  claim: Claim,
  fingerprint: string,
  ttlSeconds: number,
  lockSeconds: number = LOCK_SECONDS,
  alone = false,
): Promise<ClaimOutcome> {
  const match = sql`credential_id = ${claim.credentialId} and key = ${claim.key}`;
  const lockUntil = sql`now() + make_interval(secs => ${lockSeconds})`;
  const expiresAt = sql`now() + make_interval(secs => ${ttlSeconds})`;
  // The common case, once per mutating request: the primary key decides.
  const inserted = await one<{ key: string }>(
    db,
    claimInsert(claim, fingerprint, ttlSeconds, lockSeconds, alone),
  );
  if (inserted) return { kind: 'claimed' };

  const expired = await one<{ key: string }>(
    db,
    sql`update idempotency_keys set fingerprint = ${fingerprint}, locked_until = ${lockUntil},
  expires_at = ${expiresAt}, response_status = null, response_body = null, response_headers = null,
  created_at = now() where ${match} and expires_at <= now() returning key`,
  );
  if (expired) return { kind: 'claimed' };

  const row = await one<KeyRecord>(
    db,
    sql`select fingerprint, response_status as "responseStatus", response_body as "responseBody",
  response_headers as "responseHeaders" from idempotency_keys where ${match}`,
  );
  if (!row) return claimKey(db, claim, fingerprint, ttlSeconds, lockSeconds, alone); // deleted between our statements: try again
  const settled = settledBy(row, fingerprint);
  if (settled) return settled;
  const takenOver = await one<{ key: string }>(
    db,
    sql`update idempotency_keys set locked_until = ${lockUntil} where ${match} and response_status is null
  and (locked_until is null or locked_until <= now()) returning key`,
  );
  return takenOver ? { kind: 'claimed' } : { kind: 'in_progress' };
}

/**
 * The claim's common case: a new key's record, locked; returns the key when the primary key let it in.
 *
 * `alone`: the statement is a transaction of its own (autocommit), and its commit need not wait for
 * the WAL flush (`synchronous_commit` off for this transaction only; docs/decisions.md, "A claim's
 * commit"). It is visible to every other session at once, so a duplicate still gets its 409. Nothing
 * is answered on the claim alone: the request's answer is stored by a later, synchronous commit, and
 * flushing that commit's WAL flushes the claim's too, which comes before it. If the database
 * crashes before then, the claim is lost with the request, which was never answered, and the
 * retry claims the key afresh. Never inside a transaction block: its commit would not wait either.
 */
function claimInsert(
  claim: Claim,
  fingerprint: string,
  ttlSeconds: number,
  lockSeconds: number,
  alone: boolean,
): SQL {
  const source = alone ? sql` from (select set_config('synchronous_commit', 'off', true)) as alone` : sql``;
  return sql`insert into idempotency_keys (credential_id, key, fingerprint, locked_until, expires_at)
  select ${claim.credentialId}::text, ${claim.key}::text, ${fingerprint}::text,
    now() + make_interval(secs => ${lockSeconds}), now() + make_interval(secs => ${ttlSeconds})${source}
  on conflict do nothing returning key`;
}

/**
 * A new key's claim and a one-row read in one autocommit statement (one round trip fewer than the
 * claim, then the read). The claim commits with the statement, as `claimKey`'s does, so a duplicate
 * sent later finds the key in flight (409). `row` is the read's row when `claimed`; when not, the key
 * has a record, and `claimKey` decides (replay, 422, 409, or an expired record taken over). `alone`:
 * as `claimKey`'s.
 */
export async function claimWithRead<Row>(
  db: Queryable,
  claim: Claim,
  fingerprint: string,
  ttlSeconds: number,
  lockSeconds: number,
  read: SQL,
  alone: boolean,
): Promise<{ claimed: boolean; row: Row | undefined }> {
  const got = await one<{ claimed__: boolean; present__: boolean | null } & Row>(
    db,
    sql`with claim as (${claimInsert(claim, fingerprint, ttlSeconds, lockSeconds, alone)})
select exists (select 1 from claim) as claimed__, r.* from (select 1) as one
left join (select true as present__, x.* from (${read}) as x) as r on true`,
  );
  const { claimed__: claimed, present__: present, ...row } = got!;
  return { claimed, row: present ? (row as Row) : undefined };
}

/** Stores the response; run inside the mutation's own transaction so both commit or neither. */
export async function completeKey(db: Queryable, claim: Claim, response: StoredResponse): Promise<void> {
  await run(db, completion(claim, response));
}

/**
 * completeKey's statement, to run as a CTE of the mutation's own statement (one round trip fewer);
 * `onlyIf` (a condition on the statement's other CTEs) stores the answer only when it holds.
 */
export function completion(claim: Claim, response: StoredResponse, onlyIf?: SQL): SQL {
  return sql`update idempotency_keys set response_status = ${response.status},
  response_body = ${response.body}, response_headers = ${JSON.stringify(response.headers)}::jsonb,
  locked_until = null where credential_id = ${claim.credentialId} and key = ${claim.key}${onlyIf ? sql` and ${onlyIf}` : sql``}`;
}

/** Frees the key after a 5xx so that the partner's retry can run. */
export async function releaseKey(db: Queryable, claim: Claim): Promise<void> {
  await run(
    db,
    sql`delete from idempotency_keys where credential_id = ${claim.credentialId} and key = ${claim.key}
  and response_status is null`,
  );
}

/**
 * The advisory-lock class of an idempotency key in flight (the two-int key space: never shared with
 * the single bigint locks of migrations, the seed and the payment sweep).
 */
const IN_FLIGHT_LOCK_CLASS = 0x1de7;

/** `ordinary`: decide with `claimKey` (an expired record, a lock to take over, a row not yet visible). */
export type OneStatementOutcome =
  | { kind: 'created' }
  | { kind: 'ordinary' }
  | Exclude<ClaimOutcome, { kind: 'claimed' }>;

/**
 * A create whose answer is known before it runs, in one autocommit statement (docs/performance.md,
 * "A signed create in one statement"): the key's record is inserted with its answer already in it,
 * and `writes` (CTEs that select `from claim`) run only when that insert did. A transaction-scoped
 * advisory lock on the key makes a duplicate sent while the statement runs answer `in_progress` (the
 * spec's 409) instead of waiting on the primary key. A key that already has a record is answered from
 * the record the same statement read (replay, mismatch, in flight), or left to `claimKey`.
 */
export async function createInOneStatement(
  db: Queryable,
  claim: Claim,
  fingerprint: string,
  ttlSeconds: number,
  answer: StoredResponse,
  writes: SQL,
): Promise<OneStatementOutcome> {
  const row = await one<{ got: boolean; claimed: boolean; locked: boolean | null } & Partial<KeyRecord>>(
    db,
    sql`with lock as (
  select pg_try_advisory_xact_lock(${IN_FLIGHT_LOCK_CLASS}, hashtext(${claim.credentialId}::text || ' ' || ${claim.key}::text)) as got
), claim as (
  insert into idempotency_keys (credential_id, key, fingerprint, locked_until, expires_at,
    response_status, response_body, response_headers)
  select ${claim.credentialId}::text, ${claim.key}::text, ${fingerprint}::text, null,
    now() + make_interval(secs => ${ttlSeconds}), ${answer.status}::int, ${answer.body}::text,
    ${JSON.stringify(answer.headers)}::jsonb
  from lock where got
  on conflict do nothing returning key
), ${writes}
select lock.got, exists (select 1 from claim) as claimed, k.fingerprint,
  k.response_status as "responseStatus", k.response_body as "responseBody",
  k.response_headers as "responseHeaders", k.locked_until > now() as locked
from lock left join idempotency_keys k on k.credential_id = ${claim.credentialId}::text
  and k.key = ${claim.key}::text and k.expires_at > now()`,
  );
  if (!row?.got) return { kind: 'in_progress' };
  if (row.claimed) return { kind: 'created' };
  if (row.fingerprint === undefined || row.fingerprint === null) return { kind: 'ordinary' };
  const settled = settledBy(row as KeyRecord, fingerprint);
  if (settled) return settled;
  return row.locked ? { kind: 'in_progress' } : { kind: 'ordinary' };
}
