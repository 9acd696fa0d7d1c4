import { describeStores } from '@partner-api/testkit/app.ts';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { one } from '../../src/db/query.ts';
import { waitFor } from '../ussd/support.ts';
import {
  attemptsOf,
  createWebhook,
  type DeliveryApp,
  emitEvent,
  startDeliveryApp,
} from './delivery-support.ts';

const LEASE_SECONDS = 60;
const BACKOFF_BASE_MS = 1000;

/**
 * A delivery whose attempt the database refuses to record (the receiver got it, the write failed)
 * is handed back for the base backoff, not held for the whole lease: it is sent again within
 * seconds, recorded, and delivered. Own database: see startDeliveryApp.
 */
describeStores('a delivery whose record fails is handed back on %s', (store) => {
  let d: DeliveryApp;
  beforeAll(async () => {
    d = await startDeliveryApp(store, 'webhook_record_fails', {
      WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_WORKER_INTERVAL_MS: '100',
      WEBHOOK_LEASE_SECONDS: String(LEASE_SECONDS),
      WEBHOOK_BACKOFF_BASE_MS: String(BACKOFF_BASE_MS),
    });
  }, 60_000);
  afterAll(() => d?.close());

  it('is sent again a backoff later, far inside its lease, and then delivered once recorded', async () => {
    const { t } = d;
    const db = t.ctx.database.db;
    const r = await d.receiver();
    const { organizationId, webhookId } = await createWebhook(db, r.url);
    // The database refuses every attempt record of this webhook's deliveries until the trigger goes.
    const refuse = `refuse_${webhookId.toLowerCase()}`;
    await db.execute(
      sql.raw(`create function ${refuse}() returns trigger language plpgsql as $$ begin
  if (select webhook_id from webhook_deliveries where id = new.delivery_id) = '${webhookId}' then
    raise exception 'refused by the test';
  end if;
  return new;
end $$`),
    );
    await db.execute(
      sql.raw(
        `create trigger ${refuse} before insert on webhook_attempts for each row execute function ${refuse}()`,
      ),
    );
    let eventId: string;
    const row = () =>
      one<{ state: string; attempts: number; leftMs: number | null }>(
        db,
        sql`select state, attempts,
  (extract(epoch from (locked_until - now())) * 1000)::float8 as "leftMs"
  from webhook_deliveries where event_id = ${eventId}`,
      );
    try {
      eventId = await emitEvent(db, t.ctx.events, organizationId);
      // Sent once, its record refused, then handed back: the lease left is the backoff, not a minute.
      const handedBack = await waitFor(
        async () => {
          const current = await row();
          return r.received.length >= 1 && current?.leftMs != null && current.leftMs < LEASE_SECONDS * 500
            ? current
            : undefined;
        },
        10_000,
        'the delivery handed back',
      );
      expect(handedBack.state).toBe('PENDING');
      expect(handedBack.leftMs).toBeLessThanOrEqual(BACKOFF_BASE_MS);
      expect(await attemptsOf(db, eventId)).toEqual([]);
    } finally {
      await db.execute(sql.raw(`drop trigger ${refuse} on webhook_attempts`));
      await db.execute(sql.raw(`drop function ${refuse}()`));
    }
    const delivered = await waitFor(
      async () => {
        const current = await row();
        return current?.state === 'DELIVERED' ? current : undefined;
      },
      10_000,
      'the delivery delivered',
    );
    expect(delivered.attempts).toBe(2);
    expect(r.envelopes().map((e) => e.eventId)).toEqual([eventId, eventId]);
    const attempts = await attemptsOf(db, eventId);
    expect(attempts.map((a) => a.httpStatus)).toEqual([200]);
  });
});
