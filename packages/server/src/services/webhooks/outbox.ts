import { randomUUID } from 'node:crypto';
import { subscriptionKeysFor, type WebhookEventName } from '@partner-api/contract';
import { type SQL, sql } from 'drizzle-orm';
import type { Queryable } from '../../db/client.ts';
import { run } from '../../db/query.ts';

export type EmittedEvent = {
  organizationId: string;
  event: WebhookEventName;
  data: Record<string, unknown>;
  /** Chosen by a caller that answers with it (POST /webhooks/test); a fresh UUID otherwise. */
  eventId?: string;
};

/**
 * The transactional outbox (docs/webhooks.md, Events). `emit` runs on the caller's transaction, so
 * an event exists exactly when the change that caused it commits. With WEBHOOKS_PREVIEW off it is
 * `NO_EVENTS` and writes nothing: today's contract delivers no events.
 */
export interface EventOutbox {
  readonly enabled: boolean;
  /** Writes the event and, when the organization's ACTIVE webhook subscribes to it, its delivery. */
  emit(q: Queryable, event: EmittedEvent): Promise<void>;
  /**
   * `emit`'s writes as two CTEs (`event_row`, `event_delivery`) of a caller's statement, written only
   * for each row of `source` (e.g. `from claim`: plugins/idempotency.ts, respondCreated). The caller
   * reports the write with `emitted` once its statement has run.
   */
  emission(event: EmittedEvent, source: SQL): SQL;
  emitted(event: WebhookEventName): void;
}

export const NO_EVENTS: EventOutbox = {
  enabled: false,
  emit: async () => {},
  emission: () => {
    throw new Error('no webhook events while WEBHOOKS_PREVIEW is off');
  },
  emitted: () => {},
};

/** `emitted` (metrics): called for each event written, in its transaction (a rollback still counted). */
export function createOutbox(hooks: { emitted?: (event: WebhookEventName) => void } = {}): EventOutbox {
  // The event, and its delivery when the organization's webhook is subscribed
  // (subscriptions && ['ALL', domain, event]: the spec's combination rules are a union).
  const emission = ({ organizationId, event, data, eventId = randomUUID() }: EmittedEvent, source: SQL) =>
    sql`event_row as (
  insert into webhook_events (id, organization_id, event, data)
  select ${eventId}::text, ${organizationId}::text, ${event}::text, ${JSON.stringify(data)}::jsonb ${source}
  returning id, organization_id
), event_delivery as (
  insert into webhook_deliveries (id, event_id, webhook_id, organization_id, state)
  select gen_random_uuid()::text, e.id, w.id, w.organization_id, 'PENDING'
    from event_row e join webhooks w on w.organization_id = e.organization_id
   where w.status = 'ACTIVE'
     and w.subscriptions && ${sql.param(subscriptionKeysFor(event))}::text[]
)`;
  const emitted = (event: WebhookEventName) => hooks.emitted?.(event);
  return {
    enabled: true,
    emission,
    emitted,
    async emit(q, event) {
      await run(q, sql`with ${emission(event, sql``)} select 1`);
      emitted(event.event);
    },
  };
}
