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
  /**
   * INVESTMENTS_PREVIEW is on too: the investments domains (ACCOUNT, ASSET, PORTFOLIO, REPORT) are
   * emitted and REQUEST.* carry the request resource (docs/investments.md, Events).
   */
  readonly investments: boolean;
  /** Writes the event and, when the organization's ACTIVE webhook subscribes to it, its delivery. */
  emit(q: Queryable, event: EmittedEvent): Promise<void>;
  /**
   * `emit`'s writes as two CTEs (`event_row`, `event_delivery`) of a caller's statement, written only
   * for each row of `source` (e.g. `from claim`: plugins/idempotency.ts, respondCreated). The caller
   * reports the write with `emitted` once its statement has run.
   */
  emission(event: EmittedEvent, source: SQL): SQL;
  emitted(event: WebhookEventName): void;
  /**
   * Writes the event once for every organization (with its delivery where subscribed), in one
   * statement: the events of what all organizations share, such as an instrument of the catalogue.
   */
  broadcast(q: Queryable, event: Omit<EmittedEvent, 'organizationId' | 'eventId'>): Promise<void>;
}

export const NO_EVENTS: EventOutbox = {
  enabled: false,
  investments: false,
  emit: async () => {},
  emission: () => {
    throw new Error('no webhook events while WEBHOOKS_PREVIEW is off');
  },
  emitted: () => {},
  broadcast: async () => {},
};

/** `emitted` (metrics): called for each event written, in its transaction (a rollback still counted). */
export function createOutbox(
  hooks: { emitted?: (event: WebhookEventName) => void; investments?: boolean } = {},
): EventOutbox {
  // The event, and its delivery when the organization's webhook is subscribed
  // (subscriptions && ['ALL', domain, event]: the spec's combination rules are a union).
  const emission = ({ organizationId, event, data, eventId = randomUUID() }: EmittedEvent, source: SQL) =>
    rowsAndDeliveries(
      event,
      sql`select ${eventId}::text, ${organizationId}::text, ${event}::text, ${JSON.stringify(data)}::jsonb ${source}`,
    );
  // `select` gives the events' rows (id, organization_id, event, data).
  const rowsAndDeliveries = (event: WebhookEventName, select: SQL) => sql`event_row as (
  insert into webhook_events (id, organization_id, event, data)
  ${select}
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
    investments: hooks.investments ?? false,
    emission,
    emitted,
    async emit(q, event) {
      await run(q, sql`with ${emission(event, sql``)} select 1`);
      emitted(event.event);
    },
    async broadcast(q, { event, data }) {
      const select = sql`select gen_random_uuid()::text, o.id, ${event}::text, ${JSON.stringify(data)}::jsonb
  from organizations o`;
      await run(q, sql`with ${rowsAndDeliveries(event, select)} select 1`);
      emitted(event);
    },
  };
}
