import { randomUUID } from 'node:crypto';
import { type SQL, sql } from 'drizzle-orm';
import type { Queryable } from '../../db/client.ts';
import { dateOf, dueAt, one, rows, run } from '../../db/query.ts';

/** A claimed delivery with what one attempt needs: the event and the webhook's current URL. */
export type ClaimedDelivery = {
  id: string;
  eventId: string;
  webhookId: string;
  organizationId: string;
  event: string;
  data: Record<string, unknown>;
  eventCreatedAt: Date;
  createdAt: Date;
  attempts: number;
  url: string;
  /** The lease this claim set: recording the outcome requires it still to be ours. */
  lease: string;
};

type ClaimedRow = Omit<ClaimedDelivery, 'eventCreatedAt' | 'createdAt' | 'lease'> & {
  eventCreatedAt: string;
  createdAt: string;
};

/**
 * Claims up to `limit` due deliveries: PENDING, due, not leased (or the lease ran out: the worker
 * that held it died), of an ACTIVE webhook. Each row goes to one claimer only (`for update skip
 * locked`) and carries a lease until `leaseUntil`; its attempt is counted at the claim, so a
 * delivery whose worker keeps dying still moves through its schedule. `organizations` narrows the
 * claim (tests only: see startWebhookWorker).
 */
export async function claimDueDeliveries(
  db: Queryable,
  input: { limit: number; now: Date; leaseUntil: Date; organizations?: readonly string[] },
): Promise<ClaimedDelivery[]> {
  const now = input.now.toISOString();
  const lease = input.leaseUntil.toISOString();
  const scope: SQL = input.organizations
    ? sql`and q.organization_id = any(${sql.param([...input.organizations])}::text[])`
    : sql``;
  const claimed = await rows<ClaimedRow>(
    db,
    sql`with claimed as (
  update webhook_deliveries d set locked_until = ${lease}::timestamptz, attempts = d.attempts + 1
    from (select q.id from webhook_deliveries q join webhooks w on w.id = q.webhook_id
      where q.state = 'PENDING' and ${dueAt(sql`q.next_attempt_at`, now)}
        and (q.locked_until is null or q.locked_until <= ${now}::timestamptz)
        and w.status = 'ACTIVE' ${scope}
      order by q.next_attempt_at limit ${input.limit} for update of q skip locked) due
   where d.id = due.id
  returning d.id, d.event_id, d.webhook_id, d.organization_id, d.attempts, d.created_at
)
select c.id, c.event_id as "eventId", c.webhook_id as "webhookId", c.organization_id as "organizationId",
  c.attempts, c.created_at::text as "createdAt", e.event, e.data, e.created_at::text as "eventCreatedAt",
  w.url
  from claimed c join webhook_events e on e.id = c.event_id join webhooks w on w.id = c.webhook_id`,
  );
  return claimed.map((r) => ({
    ...r,
    eventCreatedAt: dateOf(r.eventCreatedAt),
    createdAt: dateOf(r.createdAt),
    lease,
  }));
}

export type AttemptRecord = {
  at: Date;
  httpStatus: number | null;
  latencyMs: number;
  error: string | null;
};

/** Appends one attempt to the delivery's history (whatever happens to the delivery itself). */
export async function recordAttempt(q: Queryable, delivery: ClaimedDelivery, attempt: AttemptRecord) {
  await run(
    q,
    sql`insert into webhook_attempts (id, delivery_id, event_id, at, http_status, latency_ms, error)
values (${randomUUID()}, ${delivery.id}, ${delivery.eventId}, ${attempt.at.toISOString()}::timestamptz,
  ${attempt.httpStatus}, ${attempt.latencyMs}, ${attempt.error})`,
  );
}

/**
 * The common case in one statement (atomic without a transaction: one round trip, not five): the
 * attempt recorded, the delivery DELIVERED if the lease is still ours, the failing streak ended.
 * True when this worker settled it.
 */
export async function recordSuccess(
  q: Queryable,
  delivery: ClaimedDelivery,
  attempt: AttemptRecord,
  now: Date,
): Promise<boolean> {
  const row = await one<{ settled: number }>(
    q,
    sql`with attempt as (
  insert into webhook_attempts (id, delivery_id, event_id, at, http_status, latency_ms, error)
  values (${randomUUID()}, ${delivery.id}, ${delivery.eventId}, ${attempt.at.toISOString()}::timestamptz,
    ${attempt.httpStatus}, ${attempt.latencyMs}, null)
), settled as (
  update webhook_deliveries set state = 'DELIVERED', delivered_at = ${now.toISOString()}::timestamptz,
    locked_until = null, last_error = null
  where id = ${delivery.id} and state = 'PENDING' and locked_until = ${delivery.lease}::timestamptz
  returning id
), streak as (
  update webhooks set failing_since = null where id = ${delivery.webhookId} and failing_since is not null
)
select count(*)::int as settled from settled`,
  );
  return (row?.settled ?? 0) === 1;
}

/** The delivery's next state after an attempt; applied only while this worker holds the lease. */
export type DeliveryChange =
  | { state: 'DELIVERED'; at: Date }
  | { state: 'PENDING'; nextAttemptAt: Date; lastError: string }
  | { state: 'FAILED'; lastError: string };

/** Applies `change` if the lease is still ours; false when another worker took the delivery over. */
export async function settleDelivery(
  q: Queryable,
  delivery: ClaimedDelivery,
  change: DeliveryChange,
): Promise<boolean> {
  const held = sql`id = ${delivery.id} and state = 'PENDING' and locked_until = ${delivery.lease}::timestamptz`;
  switch (change.state) {
    case 'DELIVERED':
      return (
        (await run(
          q,
          sql`update webhook_deliveries set state = 'DELIVERED', delivered_at = ${change.at.toISOString()}::timestamptz,
  locked_until = null, last_error = null where ${held}`,
        )) === 1
      );
    case 'PENDING':
      return (
        (await run(
          q,
          sql`update webhook_deliveries set next_attempt_at = ${change.nextAttemptAt.toISOString()}::timestamptz,
  locked_until = null, last_error = ${change.lastError} where ${held}`,
        )) === 1
      );
    case 'FAILED':
      return (
        (await run(
          q,
          sql`update webhook_deliveries set state = 'FAILED', locked_until = null, last_error = ${change.lastError}
  where ${held}`,
        )) === 1
      );
  }
}

/**
 * A failure starts the webhook's failing streak if none runs; returns when the streak began (locks
 * the webhook row: concurrent attempts of one webhook decide on disabling one at a time).
 */
export async function markFailing(q: Queryable, webhookId: string, now: Date): Promise<Date | undefined> {
  const row = await one<{ failingSince: string }>(
    q,
    sql`update webhooks set failing_since = coalesce(failing_since, ${now.toISOString()}::timestamptz)
  where id = ${webhookId} and status = 'ACTIVE' returning failing_since::text as "failingSince"`,
  );
  return row ? dateOf(row.failingSince) : undefined;
}

/**
 * Disables the webhook (DEACTIVED, with the reason and the time) if it is still ACTIVE at the URL
 * attempted (a PUT that changed it meanwhile wins), and gives up its pending deliveries: FAILED with
 * the reason. Resending or a PUT that re-activates it is the partner's move. True when disabled.
 */
export async function disableWebhook(
  q: Queryable,
  input: { webhookId: string; url: string; reason: string; now: Date },
): Promise<boolean> {
  const at = input.now.toISOString();
  const changed = await run(
    q,
    sql`update webhooks set status = 'DEACTIVED', disabled_reason = ${input.reason},
  disabled_at = ${at}::timestamptz, failing_since = null, updated_at = ${at}::timestamptz
  where id = ${input.webhookId} and status = 'ACTIVE' and url = ${input.url}`,
  );
  if (changed === 0) return false;
  await run(
    q,
    sql`update webhook_deliveries set state = 'FAILED', locked_until = null,
  last_error = ${`webhook disabled: ${input.reason}`}
  where webhook_id = ${input.webhookId} and state = 'PENDING'`,
  );
  return true;
}

/**
 * Hands a claimed delivery back before its lease ends, when recording its attempt failed (the
 * database refused a write, the pool timed out): still PENDING, due again at `until` instead of at
 * the lease's end. Only the lease this worker set is cut: a delivery recorded or taken over
 * meanwhile is left alone (false).
 */
export async function handBackDelivery(
  q: Queryable,
  delivery: ClaimedDelivery,
  until: Date,
): Promise<boolean> {
  const changed = await run(
    q,
    sql`update webhook_deliveries set locked_until = ${until.toISOString()}::timestamptz
  where id = ${delivery.id} and state = 'PENDING' and locked_until = ${delivery.lease}::timestamptz`,
  );
  return changed > 0;
}

/**
 * The queue's gauges: pending deliveries, the oldest one's age in seconds (a resend counts from the
 * resend), disabled webhooks. Across every organization.
 */
export async function queueStats(
  db: Queryable,
  now: Date,
): Promise<{ depth: number; oldestSeconds: number; disabled: number }> {
  const row = await one<{ depth: number; oldest: string | null; disabled: number }>(
    db,
    sql`select (select count(*)::int from webhook_deliveries where state = 'PENDING') as depth,
  (select min(created_at)::text from webhook_deliveries where state = 'PENDING') as oldest,
  (select count(*)::int from webhooks where status = 'DEACTIVED') as disabled`,
  );
  const oldest = row?.oldest ? dateOf(row.oldest).getTime() : undefined;
  return {
    depth: row?.depth ?? 0,
    oldestSeconds: oldest === undefined ? 0 : Math.max(0, (now.getTime() - oldest) / 1000),
    disabled: row?.disabled ?? 0,
  };
}
