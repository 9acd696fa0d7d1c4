import { randomUUID } from 'node:crypto';
import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { rows, run } from '../../src/db/query.ts';
import { purgeExpired } from '../../src/services/housekeeping/purge.ts';
import { createWebhook, emitEvent } from './delivery-support.ts';

/**
 * 30 days of events are kept (GET /v1/webhooks/events lists that much). No worker runs here, so
 * the shared database is fine: the rows are this test's own organization's, set by hand.
 */
describeStores('webhook history purge on %s', (store) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp(store, { WEBHOOKS_PREVIEW: 'true' });
  });
  afterAll(() => t.close());

  it('deletes events older than 30 days with their deliveries and attempts, but not a pending one', async () => {
    const db = t.ctx.database.db;
    const { organizationId } = await createWebhook(db, 'https://hooks.example.com/in');
    const [old, pendingOld, recent] = [
      await emitEvent(db, t.ctx.events, organizationId),
      await emitEvent(db, t.ctx.events, organizationId),
      await emitEvent(db, t.ctx.events, organizationId),
    ];
    await run(
      db,
      sql`update webhook_events set created_at = now() - interval '30 days 1 minute'
  where id = any(${sql.param([old, pendingOld])}::text[])`,
    );
    await run(
      db,
      sql`update webhook_deliveries set state = 'DELIVERED' where event_id in (${old}, ${recent})`,
    );
    for (const eventId of [old, recent])
      await run(
        db,
        sql`insert into webhook_attempts (id, delivery_id, event_id, http_status, latency_ms)
  select ${randomUUID()}, id, event_id, 200, 12 from webhook_deliveries where event_id = ${eventId}`,
      );

    const counts = await purgeExpired(db);
    expect(counts.webhookEvents).toBeGreaterThanOrEqual(1);
    expect(counts.webhookDeliveries).toBeGreaterThanOrEqual(1);
    expect(counts.webhookAttempts).toBeGreaterThanOrEqual(1);
    const left = await rows<{ id: string }>(
      db,
      sql`select id from webhook_events where organization_id = ${organizationId} order by id`,
    );
    expect(left.map((r) => r.id).sort()).toEqual([pendingOld, recent].sort());
    const attempts = await rows<{ eventId: string }>(
      db,
      sql`select event_id as "eventId" from webhook_attempts where event_id in (${old}, ${recent})`,
    );
    expect(attempts.map((a) => a.eventId)).toEqual([recent]);

    // Once its delivery ends, the old pending event goes at the next purge.
    await run(db, sql`update webhook_deliveries set state = 'FAILED' where event_id = ${pendingOld}`);
    await purgeExpired(db);
    const after = await rows<{ id: string }>(
      db,
      sql`select id from webhook_events where organization_id = ${organizationId}`,
    );
    expect(after.map((r) => r.id)).toEqual([recent]);
  });
});
