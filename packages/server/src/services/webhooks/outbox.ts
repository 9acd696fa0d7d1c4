import { randomUUID } from 'node:crypto';
import { subscriptionKeysFor, type WebhookEventName } from '@partner-api/contract';
import { sql } from 'drizzle-orm';
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
}

export const NO_EVENTS: EventOutbox = {
  enabled: false,
  emit: async () => {},
};

/** `emitted` (metrics): called for each event written, in its transaction (a rollback still counted). */
export function createOutbox(hooks: { emitted?: (event: WebhookEventName) => void } = {}): EventOutbox {
  return {
    enabled: true,
    async emit(q, { organizationId, event, data, eventId = randomUUID() }) {
      // One statement: the event, and its delivery when the organization's webhook is subscribed
      // (subscriptions && ['ALL', domain, event]: the spec's combination rules are a union).
      await run(
        q,
        sql`with e as (
  insert into webhook_events (id, organization_id, event, data)
  values (${eventId}, ${organizationId}, ${event}, ${JSON.stringify(data)}::jsonb)
  returning id, organization_id
)
insert into webhook_deliveries (id, event_id, webhook_id, organization_id, state)
select gen_random_uuid()::text, e.id, w.id, w.organization_id, 'PENDING'
  from e join webhooks w on w.organization_id = e.organization_id
 where w.status = 'ACTIVE'
   and w.subscriptions && ${sql.param(subscriptionKeysFor(event))}::text[]`,
      );
      hooks.emitted?.(event);
    },
  };
}
