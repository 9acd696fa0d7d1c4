import type { Webhook } from '@partner-api/contract';
import { sql } from 'drizzle-orm';
import { dateOf } from '../../db/query.ts';

/** A webhook as WEBHOOK_COLUMNS selects it: timestamps as text (README, "Data access"). */
export type WebhookRow = {
  id: string;
  organizationId: string;
  url: string;
  subscriptions: string[];
  status: Webhook['status'];
  disabledReason: string | null;
  disabledAt: string | null;
  /** The first failed attempt of the current failing streak (the console shows it; not in the API). */
  failingSince: string | null;
  createdAt: string;
  updatedAt: string;
};

/** The select (or returning) list of a WebhookRow, table aliased `w`. */
export const WEBHOOK_COLUMNS = sql.raw(`w.id, w.organization_id as "organizationId", w.url, w.subscriptions,
  w.status, w.disabled_reason as "disabledReason", w.disabled_at::text as "disabledAt",
  w.failing_since::text as "failingSince", w.created_at::text as "createdAt", w.updated_at::text as "updatedAt"`);

/** Unix seconds of a timestamp selected as text (the spec's Webhook times are integers). */
export const unixOf = (text: string) => Math.floor(dateOf(text).getTime() / 1000);

/** The data of WEBHOOK.CREATED and WEBHOOK.UPDATED: exactly the spec's fields. */
export function webhookEventData(row: WebhookRow) {
  return {
    webhookId: row.id,
    status: row.status,
    url: row.url,
    subscriptions: row.subscriptions,
    createdAt: unixOf(row.createdAt),
    updatedAt: unixOf(row.updatedAt),
  };
}

/** The Webhook resource: the spec's fields, then why and when it was deactivated. */
export function presentWebhook(row: WebhookRow): Webhook {
  return {
    ...webhookEventData(row),
    disabledReason: row.disabledReason,
    disabledAt: row.disabledAt === null ? null : unixOf(row.disabledAt),
  };
}
