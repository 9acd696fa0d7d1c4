import { randomUUID } from 'node:crypto';
import type { WebhookEventRecord, WebhookEventsQuery } from '@partner-api/contract';
import { type SQL, sql } from 'drizzle-orm';
import type { Queryable, Tx } from '../../db/client.ts';
import { one, rows, run } from '../../db/query.ts';
import type { EventOutbox } from './outbox.ts';
import { unixOf, webhookEventData } from './present.ts';
import { findWebhook } from './registration.ts';

/** How far back GET /webhooks/events looks (the issue: 30 days of events). */
export const EVENT_HISTORY_DAYS = 30;

type EventRow = {
  eventId: string;
  event: string;
  createdAt: string;
  data: Record<string, unknown>;
  status: WebhookEventRecord['status'];
};
type AttemptRow = {
  eventId: string;
  at: string;
  httpStatus: number | null;
  latencyMs: number;
  error: string | null;
};

/**
 * The organization's events of the last 30 days, newest first, each with the state of its latest
 * delivery (NOT_SUBSCRIBED when it has none: the webhook did not subscribe to it, or there was no
 * webhook) and every attempt of every delivery, oldest first. `status` filters on that state.
 */
export async function listEvents(q: Queryable, organizationId: string, query: WebhookEventsQuery) {
  const latest = sql`left join lateral (
    select d.state from webhook_deliveries d where d.event_id = e.id
     order by d.created_at desc, d.id desc limit 1
  ) d on true`;
  const conditions: SQL[] = [
    sql`e.organization_id = ${organizationId}`,
    sql`e.created_at > now() - make_interval(days => ${EVENT_HISTORY_DAYS})`,
  ];
  if (query.status) conditions.push(sql`d.state = ${query.status}`);
  const where = sql.join(conditions, sql` and `);
  const [page, count] = await Promise.all([
    rows<EventRow>(
      q,
      sql`select e.id as "eventId", e.event, e.created_at::text as "createdAt", e.data,
  coalesce(d.state, 'NOT_SUBSCRIBED') as status
  from webhook_events e ${latest} where ${where}
  order by e.created_at desc, e.id desc limit ${query.limit} offset ${(query.page - 1) * query.limit}`,
    ),
    one<{ total: number }>(
      q,
      sql`select count(*)::int as total from webhook_events e ${latest} where ${where}`,
    ),
  ]);
  const attempts =
    page.length === 0
      ? []
      : await rows<AttemptRow>(
          q,
          sql`select a.event_id as "eventId", a.at::text as at, a.http_status as "httpStatus",
  a.latency_ms as "latencyMs", a.error from webhook_attempts a
  where a.event_id = any(${sql.param(page.map((e) => e.eventId))}::text[]) order by a.at, a.id`,
        );
  const total = count?.total ?? 0;
  return {
    data: page.map(
      (e): WebhookEventRecord => ({
        eventId: e.eventId,
        event: e.event,
        createdAt: unixOf(e.createdAt),
        data: e.data,
        status: e.status,
        attempts: attempts
          .filter((a) => a.eventId === e.eventId)
          .map((a) => ({
            at: unixOf(a.at),
            httpStatus: a.httpStatus,
            latencyMs: a.latencyMs,
            error: a.error,
          })),
      }),
    ),
    pagination: { page: query.page, limit: query.limit, total, totalPages: Math.ceil(total / query.limit) },
  };
}

export type Refusal = 'no-webhook' | 'deactivated' | 'no-event';

/**
 * POST /webhooks/test: a fresh WEBHOOK.CREATED with the webhook's current data, delivered to it
 * (every webhook is subscribed to WEBHOOK.CREATED by name).
 */
export async function sendTestEvent(
  tx: Tx,
  events: EventOutbox,
  organizationId: string,
): Promise<{ eventId: string } | Refusal> {
  const webhook = await findWebhook(tx, organizationId);
  if (!webhook) return 'no-webhook';
  if (webhook.status !== 'ACTIVE') return 'deactivated';
  const eventId = randomUUID();
  await events.emit(tx, {
    organizationId,
    event: 'WEBHOOK.CREATED',
    data: webhookEventData(webhook),
    eventId,
  });
  return { eventId };
}

/**
 * A new PENDING delivery of one of the organization's events to its webhook: the same eventId (the
 * receiver deduplicates on it), whatever the subscriptions say (the partner asked for it by id).
 */
export async function resendEvent(
  tx: Tx,
  organizationId: string,
  eventId: string,
): Promise<{ eventId: string; deliveryId: string } | Refusal> {
  const event = await one<{ id: string }>(
    tx,
    sql`select id from webhook_events where id = ${eventId} and organization_id = ${organizationId}`,
  );
  if (!event) return 'no-event';
  const webhook = await findWebhook(tx, organizationId);
  if (!webhook) return 'no-webhook';
  if (webhook.status !== 'ACTIVE') return 'deactivated';
  const deliveryId = randomUUID();
  await run(
    tx,
    sql`insert into webhook_deliveries (id, event_id, webhook_id, organization_id, state)
  values (${deliveryId}, ${event.id}, ${webhook.id}, ${organizationId}, 'PENDING')`,
  );
  return { eventId: event.id, deliveryId };
}
