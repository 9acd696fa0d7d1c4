import { createId } from '@partner-api/contract';
import { sql } from 'drizzle-orm';
import type { Queryable } from '../../../db/client.ts';
import { dateOf, dueAt, one, rows, run } from '../../../db/query.ts';
import { money } from '../../../lib/money.ts';
import type { ExchangeRecord } from '../providers/outcome.ts';
import type { ProviderRequest } from './adapter.ts';

export type RequestState = 'QUEUED' | 'SENDING' | 'AWAITING' | 'UNCERTAIN' | 'OPERATOR' | 'DONE';

/** A provider request with what the adapter needs from its transaction. */
export type LoadedRequest = ProviderRequest & {
  adapter: string;
  organizationId: string;
  state: RequestState;
  lockedUntil: string | null;
  transactionStatus: 'PENDING' | 'SUCCESS' | 'FAILED' | 'CANCELLED';
  claimed: Record<string, unknown> | null;
  /** When the call that could move money was about to leave (null: never sent, or queued again). */
  dispatchedAt: string | null;
};

type Selected = Omit<LoadedRequest, 'amount' | 'createdAt'> & {
  amount: string;
  currency: string;
  createdAt: string;
};

/** A request's columns (`r`) with its transaction's (`t`). */
const COLUMNS = sql`r.id, r.transaction_id as "transactionId", r.organization_id as "organizationId",
  r.adapter, r.operation, r.state, r.attempts, r.provider_ids as "providerIds", r.claimed,
  r.locked_until::text as "lockedUntil", r.created_at::text as "createdAt",
  r.dispatched_at::text as "dispatchedAt",
  t.amount::text as amount, t.currency, t.msisdn, t.status as "transactionStatus"`;
const SELECT = sql`select ${COLUMNS} from provider_requests r join transactions t on t.id = r.transaction_id`;

const toLoaded = ({ amount, currency, createdAt, ...rest }: Selected): LoadedRequest => ({
  ...rest,
  amount: money(amount, currency),
  createdAt: dateOf(createdAt),
});

export async function loadRequest(
  q: Queryable,
  id: string,
  lock = false,
): Promise<LoadedRequest | undefined> {
  const row = await one<Selected>(
    q,
    lock ? sql`${SELECT} where r.id = ${id} for update of r` : sql`${SELECT} where r.id = ${id}`,
  );
  return row && toLoaded(row);
}

/** A request as its claim left it (SENDING, leased), with the state it had before. */
export type ClaimedRequest = LoadedRequest & { previousState: RequestState };

/**
 * Claims up to `limit` due requests of one adapter for this worker: each row is taken by one claimer
 * only (`for update skip locked`), marked SENDING with a lease until `leaseUntil`, and returned as
 * `loadRequest` would read it then, with the state it had. `awaiting`: the reconciliation sweep's
 * rows (AWAITING and due); else the worker's (QUEUED or UNCERTAIN and due, or SENDING whose lease
 * ran out: a process died mid-call). `onlyWithLock`: claim nothing unless this statement's
 * transaction wins that advisory lock (`pg_try_advisory_xact_lock`), held until it commits. One
 * statement: run it on its own, not inside a transaction, or the lock is held until that ends.
 */
export async function claimDue(
  q: Queryable,
  input: {
    adapter: string;
    limit: number;
    now: string;
    leaseUntil: string;
    awaiting: boolean;
    onlyWithLock?: number;
  },
): Promise<ClaimedRequest[]> {
  const due = input.awaiting
    ? sql`q.state = 'AWAITING' and ${dueAt(sql`q.next_attempt_at`, input.now)}`
    : sql`((q.state in ('QUEUED', 'UNCERTAIN') and ${dueAt(sql`q.next_attempt_at`, input.now)})
    or (q.state = 'SENDING' and q.locked_until <= ${input.now}::timestamptz))`;
  const locked = input.onlyWithLock !== undefined;
  const lock = locked
    ? sql`sweep as materialized (select pg_try_advisory_xact_lock(${input.onlyWithLock}) as won), `
    : sql``;
  const claimed = await rows<Selected & { previousState: RequestState }>(
    q,
    sql`with ${lock}due as (select q.id, q.state from provider_requests q${locked ? sql`, sweep` : sql``}
    where ${locked ? sql`sweep.won and ` : sql``}q.adapter = ${input.adapter} and ${due}
    order by q.next_attempt_at limit ${input.limit} for update of q skip locked),
  claimed as (update provider_requests r set state = 'SENDING', locked_until = ${input.leaseUntil}::timestamptz,
    updated_at = ${input.now}::timestamptz
    from due where r.id = due.id returning r.*, due.state as previous_state)
select ${COLUMNS}, r.previous_state as "previousState"
  from claimed r join transactions t on t.id = r.transaction_id
  order by r.next_attempt_at, r.created_at, r.id`,
  );
  return claimed.map(({ previousState, ...row }) => ({ ...toLoaded(row), previousState }));
}

export type StateChange = {
  state: RequestState;
  nextAttemptAt?: Date;
  attempts?: number;
  providerIds?: Record<string, string>;
  lastError?: string | null;
};

/**
 * Hands a claimed request back before its lease ends, when the pass that claimed it failed (the
 * database refused a write, the pool timed out): it stays SENDING, due again at `until`, and the
 * next pass takes it over as it would a dead holder's, querying the provider first. Only the lease
 * this pass set is cut: a request recorded or taken over meanwhile is left alone (false).
 */
export async function handBack(q: Queryable, id: string, lease: string, until: string): Promise<boolean> {
  const changed = await run(
    q,
    sql`update provider_requests set locked_until = ${until}::timestamptz
  where id = ${id} and state = 'SENDING' and locked_until = ${lease}::timestamptz`,
  );
  return changed > 0;
}

export async function setState(q: Queryable, id: string, change: StateChange, now: Date): Promise<void> {
  // Queued again (not sent, or never received): the next send is a first send.
  const dispatched = change.state === 'QUEUED' ? sql`null` : sql`dispatched_at`;
  await run(
    q,
    sql`update provider_requests set state = ${change.state}, locked_until = null, dispatched_at = ${dispatched},
  next_attempt_at = coalesce(${change.nextAttemptAt?.toISOString() ?? null}::timestamptz, next_attempt_at),
  attempts = coalesce(${change.attempts ?? null}::int, attempts),
  provider_ids = coalesce(${change.providerIds ? JSON.stringify(change.providerIds) : null}::jsonb, provider_ids),
  last_error = ${change.lastError === undefined ? sql`last_error` : change.lastError},
  updated_at = ${now.toISOString()}::timestamptz
  where id = ${id}`,
  );
}

/**
 * Marks a claimed request as about to be sent, with the ids of ours the provider will know it by
 * (MTN's X-Reference-Id), only while this worker's lease holds. False: the lease was lost (the
 * request was taken over or settled), and nothing may be sent.
 */
export async function markDispatched(
  q: Queryable,
  input: { id: string; lease: string; now: Date; ownIds?: Record<string, string> },
): Promise<boolean> {
  const changed = await run(
    q,
    sql`update provider_requests set dispatched_at = ${input.now.toISOString()}::timestamptz,
  provider_ids = provider_ids || ${JSON.stringify(input.ownIds ?? {})}::jsonb
  where id = ${input.id} and state = 'SENDING' and locked_until = ${input.lease}::timestamptz`,
  );
  return changed > 0;
}

const json = (value: unknown) => (value === undefined ? null : JSON.stringify(value));

/** Adds ids a provider gave us (e.g. the id of a status query whose answer comes by callback). */
export async function mergeProviderIds(q: Queryable, id: string, ids: Record<string, string>): Promise<void> {
  await run(
    q,
    sql`update provider_requests set provider_ids = provider_ids || ${JSON.stringify(ids)}::jsonb where id = ${id}`,
  );
}

/** Records the HTTP exchanges of one call (`kind` request, query or callback); their row ids. */
export async function recordExchanges(
  q: Queryable,
  request: { id: string; transactionId: string; providerIds: Record<string, string> },
  kind: 'request' | 'query' | 'callback',
  exchanges: ExchangeRecord[],
  /** A callback's claim, kept with it as it came. */
  claim?: Record<string, unknown>,
): Promise<string[]> {
  const ids: string[] = [];
  for (const e of exchanges) {
    const id = createId();
    ids.push(id);
    await run(
      q,
      sql`insert into provider_exchanges (id, provider_request_id, transaction_id, kind, operation, at,
  latency_ms, http_status, provider_ids, request_body, response_body, note, source_address, claim)
  values (${id}, ${request.id}, ${request.transactionId}, ${kind}, ${e.operation},
  ${e.startedAt.toISOString()}::timestamptz, ${Math.round(e.latencyMs)}, ${e.status},
  ${json(request.providerIds)}::jsonb, ${json(e.requestBody)}::jsonb, ${json(e.responseBody)}::jsonb, ${e.error},
  ${e.sourceAddress ?? null}, ${json(claim)}::jsonb)`,
    );
  }
  return ids;
}

/** A callback's standing once the provider answered about it (append-only otherwise). */
export async function markCallback(q: Queryable, exchangeId: string, confirmed: boolean): Promise<void> {
  await run(q, sql`update provider_exchanges set confirmed = ${confirmed} where id = ${exchangeId}`);
}

/** Records what the pipeline decided and why (kind 'decision'). */
export async function recordDecision(
  q: Queryable,
  request: { id: string; transactionId: string },
  operation: string,
  note: string,
  at: Date,
): Promise<void> {
  await run(
    q,
    sql`insert into provider_exchanges (id, provider_request_id, transaction_id, kind, operation, at, note)
  values (${createId()}, ${request.id}, ${request.transactionId}, 'decision', ${operation},
  ${at.toISOString()}::timestamptz, ${note})`,
  );
}
