import {
  createId,
  normalizeSubscriptions,
  unknownSubscriptions,
  type ValidationDetail,
  type Webhook,
  WebhookValidationMessage,
} from '@partner-api/contract';
import { sql } from 'drizzle-orm';
import type { Queryable, Tx } from '../../db/client.ts';
import { one } from '../../db/query.ts';
import type { EventOutbox } from './outbox.ts';
import { presentWebhook, WEBHOOK_COLUMNS, type WebhookRow, webhookEventData } from './present.ts';
import { checkWebhookUrl, type Lookup } from './target.ts';

/** What POST and PUT /webhooks store, after `checkWebhookInput`. */
export type WebhookInput = { url?: string; subscriptions?: string[] };

/**
 * The rules the body's shape cannot say: the URL's target rule (https, no userinfo, a DNS host
 * resolving to public addresses; target.ts) under field `url`, and one detail per unknown
 * subscription name, field `subscriptions[i]`. On success, what to store: the URL as the WHATWG
 * parser writes it (what deliveries will request and sign as @target-uri) and the names
 * normalised (duplicates dropped, WEBHOOK.CREATED always present).
 */
export async function checkWebhookInput(
  input: WebhookInput,
  options: { allowPrivate: boolean; lookup: Lookup },
): Promise<{ ok: true; value: WebhookInput } | { ok: false; details: ValidationDetail[] }> {
  const details: ValidationDetail[] = [];
  const value: WebhookInput = {};
  if (input.url !== undefined) {
    const target = await checkWebhookUrl(input.url, options);
    if (target.ok) value.url = target.url.href;
    else details.push({ field: 'url', message: target.message });
  }
  if (input.subscriptions !== undefined) {
    for (const { index, name } of unknownSubscriptions(input.subscriptions)) {
      details.push({
        field: `subscriptions[${index}]`,
        message: WebhookValidationMessage.unknownSubscription(name),
      });
    }
    value.subscriptions = normalizeSubscriptions(input.subscriptions);
  }
  return details.length > 0 ? { ok: false, details } : { ok: true, value };
}

/** The organization's webhook (one at most), or undefined. */
export async function findWebhook(q: Queryable, organizationId: string): Promise<WebhookRow | undefined> {
  return one<WebhookRow>(
    q,
    sql`select ${WEBHOOK_COLUMNS} from webhooks w where w.organization_id = ${organizationId}`,
  );
}

/**
 * Creates the organization's webhook, ACTIVE, and writes its WEBHOOK.CREATED in the same
 * transaction: the webhook is already subscribed, so the event is its first delivery (the spec's
 * connection test). undefined when the organization has one already (one per organization).
 */
export async function createWebhook(
  tx: Tx,
  events: EventOutbox,
  organizationId: string,
  input: Required<WebhookInput>,
): Promise<Webhook | undefined> {
  const row = await one<WebhookRow>(
    tx,
    sql`insert into webhooks as w (id, organization_id, url, subscriptions, status)
  values (${createId()}, ${organizationId}, ${input.url}, ${sql.param(input.subscriptions)}::text[], 'ACTIVE')
  on conflict (organization_id) do nothing
  returning ${WEBHOOK_COLUMNS}`,
  );
  if (!row) return undefined;
  await events.emit(tx, { organizationId, event: 'WEBHOOK.CREATED', data: webhookEventData(row) });
  return presentWebhook(row);
}

/**
 * Changes the URL and/or the subscriptions (which replace the stored list) and re-activates a
 * DEACTIVED webhook: the partner has fixed their receiver, so the reason and the failing streak
 * are cleared. Writes WEBHOOK.UPDATED, delivered to the webhook as it now is. undefined when the
 * organization has none.
 */
export async function updateWebhook(
  tx: Tx,
  events: EventOutbox,
  organizationId: string,
  input: WebhookInput,
): Promise<Webhook | undefined> {
  const row = await one<WebhookRow>(
    tx,
    sql`update webhooks w set url = coalesce(${input.url ?? null}::text, w.url),
  subscriptions = coalesce(${sql.param(input.subscriptions ?? null)}::text[], w.subscriptions),
  status = 'ACTIVE', disabled_reason = null, disabled_at = null, failing_since = null,
  updated_at = ${new Date().toISOString()}::timestamptz
  where w.organization_id = ${organizationId}
  returning ${WEBHOOK_COLUMNS}`,
  );
  if (!row) return undefined;
  await events.emit(tx, { organizationId, event: 'WEBHOOK.UPDATED', data: webhookEventData(row) });
  return presentWebhook(row);
}
