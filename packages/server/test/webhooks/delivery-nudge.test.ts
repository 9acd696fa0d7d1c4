import { describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { createPartner, signedInject } from '@partner-api/testkit/partner.ts';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { claimDueDeliveries } from '../../src/services/webhooks/delivery-store.ts';
import { waitFor } from '../ussd/support.ts';
import {
  createWebhook,
  type DeliveryApp,
  deliveriesOf,
  emitEvent,
  type Receiver,
  startDeliveryApp,
} from './delivery-support.ts';

/**
 * A mutation that emitted an event nudges the local worker after its commit: with a poll interval
 * of ten minutes, only the nudge can deliver within the test's wait. Own database: see
 * startDeliveryApp.
 */
describeStores('a committed mutation nudges the webhook worker on %s', (store) => {
  let d: DeliveryApp;
  let t: TestApp;
  let r: Receiver;

  beforeAll(async () => {
    d = await startDeliveryApp(store, 'webhook_nudge', {
      WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_WORKER_INTERVAL_MS: '600000',
    });
    t = d.t;
    r = await d.receiver();
    await d.worker.settled(); // the first pass, at start, is behind us
  }, 60_000);
  afterAll(() => d?.close());

  it('POST /v1/customers: its CUSTOMER.CREATED arrives without waiting for the poll', async () => {
    const partner = await createPartner(t);
    await createWebhook(t.ctx.database.db, r.url, ['ALL'], partner.organizationId);
    const created = await signedInject(t.app, partner, {
      method: 'POST',
      url: '/v1/customers',
      body: { firstName: 'Nudge', lastName: 'Test', msisdn: '254712000002' },
    });
    expect(created.statusCode, created.body).toBe(201);
    await waitFor(async () => (r.received.length >= 1 ? true : undefined), 20_000, 'the nudged delivery');
    expect(r.envelopes()[0]).toMatchObject({
      event: 'CUSTOMER.CREATED',
      data: { id: created.json().data.id },
    });
  });

  it('a delivery written within the millisecond a pass reads from its clock is claimed by that pass', async () => {
    // PostgreSQL writes `default now()` in microseconds, the clock reads whole milliseconds: a row
    // written 0.6 ms into the millisecond X, then nudged into a pass that read X, is due then.
    const { organizationId } = await createWebhook(t.ctx.database.db, r.url, ['ALL']);
    const eventId = await emitEvent(t.ctx.database.db, t.ctx.events, organizationId);
    const reading = new Date(Date.now() + 3_600_000);
    const claim = async (microseconds: number) => {
      await t.ctx.database.db.execute(
        sql`update webhook_deliveries set next_attempt_at = ${reading.toISOString()}::timestamptz
  + ${`${microseconds} microseconds`}::interval where event_id = ${eventId}`,
      );
      const claimed = await claimDueDeliveries(t.ctx.database.db, {
        limit: 10,
        now: reading,
        leaseUntil: new Date(reading.getTime() + 60_000),
        organizations: [organizationId],
      });
      return claimed.map((c) => c.eventId);
    };
    expect(await claim(1000)).toEqual([]); // the next millisecond: not due yet
    expect(await claim(600)).toEqual([eventId]);
    expect(await deliveriesOf(t.ctx.database.db, eventId)).toMatchObject([{ state: 'PENDING', attempts: 1 }]);
  });
});
