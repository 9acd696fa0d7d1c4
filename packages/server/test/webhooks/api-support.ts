import type { TestApp } from '@partner-api/testkit/app.ts';
import { sql } from 'drizzle-orm';
import { rows } from '../../src/db/query.ts';

/** The app settings of the webhook API suites: the preview on, targets on this machine allowed. */
export const PREVIEW_ENV = { WEBHOOKS_PREVIEW: 'true', WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true' };

export type StoredEvent = { eventId: string; event: string; data: Record<string, unknown> };

/** Every event the outbox holds for one organization (tests make their own organizations). */
export function eventsOf(t: TestApp, organizationId: string): Promise<StoredEvent[]> {
  return rows<StoredEvent>(
    t.ctx.database.db,
    sql`select id as "eventId", event, data from webhook_events where organization_id = ${organizationId}
  order by created_at, id`,
  );
}

/** The events of one type, their data only. */
export async function dataOf(t: TestApp, organizationId: string, event: string) {
  return (await eventsOf(t, organizationId)).filter((e) => e.event === event).map((e) => e.data);
}

export const ISO_DATE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
