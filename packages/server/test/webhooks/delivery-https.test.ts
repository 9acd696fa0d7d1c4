import { computeContentDigest, WEBHOOK_EVENTS, WEBHOOK_SIGNATURE_LABEL } from '@partner-api/contract';
import { describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { createPartner, signedInject } from '@partner-api/testkit/partner.ts';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { run } from '../../src/db/query.ts';
import { REASON_FAILING, REASON_GONE } from '../../src/services/webhooks/delivery.ts';
import { queueStats } from '../../src/services/webhooks/delivery-store.ts';
import { waitFor } from '../ussd/support.ts';
import {
  attemptsOf,
  createWebhook,
  type DeliveryApp,
  deliveriesOf,
  emitEvent,
  type PublishedKey,
  type Script,
  startDeliveryApp,
  verifyBoth,
  webhookRow,
} from './delivery-support.ts';

/**
 * Delivery to a real HTTPS receiver, in process, on each store, on a database of the suite's own
 * (startDeliveryApp says why). Fast retries (WEBHOOK_BACKOFF_BASE_MS) and a short timeout keep the
 * suite quick; no assertion is on timing.
 */
describeStores('webhook delivery over HTTPS on %s', (store) => {
  let d: DeliveryApp;
  let t: TestApp;
  let key: PublishedKey;

  beforeAll(async () => {
    d = await startDeliveryApp(store, 'webhook_delivery', {
      WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_WORKER_INTERVAL_MS: '50',
      WEBHOOK_BACKOFF_BASE_MS: '100',
      WEBHOOK_BACKOFF_MAX_MS: '300',
      WEBHOOK_TIMEOUT_MS: '1500',
    });
    t = d.t;
    key = (await t.app.inject({ method: 'GET', url: '/v1/webhooks/key' })).json();
  }, 60_000);
  afterAll(() => d?.close());

  const receiver = (script?: Script) => d.receiver(script);
  const db = () => t.ctx.database.db;
  const delivered = (eventId: string) =>
    waitFor(
      async () => {
        const [d] = await deliveriesOf(db(), eventId);
        return d?.state === 'DELIVERED' ? d : undefined;
      },
      30_000,
      `delivery of ${eventId}`,
    );

  const disabled = (webhookId: string, what: string) =>
    waitFor(
      async () => {
        const w = await webhookRow(db(), webhookId);
        return w?.status === 'DEACTIVED' ? w : undefined;
      },
      30_000,
      what,
    );

  it('POSTs the envelope, signed with the published key, verified by ours and an independent library', async () => {
    const r = await receiver();
    const { organizationId } = await createWebhook(db(), r.url);
    const data = { id: 'cus_1', firstName: 'Amina', lastName: 'Otieno' };
    const before = Math.floor(Date.now() / 1000);
    const eventId = await emitEvent(db(), t.ctx.events, organizationId, 'CUSTOMER.CREATED', data);
    await delivered(eventId);

    expect(r.received).toHaveLength(1);
    const got = r.received[0]!;
    expect(got.method).toBe('POST');
    expect(got.path).toBe('/hooks');
    const envelope = JSON.parse(got.body);
    expect(Object.keys(envelope)).toEqual(['eventId', 'event', 'createdAt', 'data']);
    expect(envelope).toEqual({ eventId, event: 'CUSTOMER.CREATED', createdAt: expect.any(Number), data });
    expect(envelope.createdAt).toBeGreaterThanOrEqual(before - 1);
    // The headers the issue lists.
    expect(got.headers['content-type']).toBe('application/json');
    expect(got.headers['content-digest']).toBe(computeContentDigest(got.body, 'sha-512'));
    expect(got.headers['webhook-id']).toBe(eventId);
    expect(Number(got.headers['webhook-timestamp'])).toBeGreaterThanOrEqual(before - 1);
    const input = got.headers['signature-input']!;
    expect(input).toMatch(
      new RegExp(
        `^${WEBHOOK_SIGNATURE_LABEL}=\\("@method" "@target-uri" "content-type" "content-digest" "webhook-id" "webhook-timestamp"\\)`,
      ),
    );
    expect(input).toContain(`keyid="${key.keyId}"`);
    expect(input).toMatch(/;created=\d+/);
    expect(input).toMatch(/;expires=\d+/);
    expect(got.headers.signature).toMatch(new RegExp(`^${WEBHOOK_SIGNATURE_LABEL}=:[A-Za-z0-9+/=]+:$`));
    expect(await verifyBoth(got, r.url, key)).toEqual({ ours: true, independent: true });
    // A byte changed in the body: the digest no longer matches (the recipe must be able to fail).
    const tampered = { ...got, body: got.body.replace('Amina', 'Amino') };
    expect((await verifyBoth(tampered, r.url, key)).ours).toBe(false);
    // Signed for this URL only.
    expect((await verifyBoth(got, `${r.url}x`, key)).independent).toBe(false);

    const attempts = await attemptsOf(db(), eventId);
    expect(attempts).toEqual([
      { httpStatus: 200, latencyMs: expect.any(Number), error: null, at: expect.any(String) },
    ]);
    const metrics = await t.ctx.metrics.registry.getSingleMetricAsString('webhook_delivery_attempts_total');
    expect(metrics).toMatch(/outcome="success"} [1-9]/);
  });

  it('a CUSTOMER.CREATED from POST /v1/customers arrives, as GET /v1/customers/{id} answers', async () => {
    const r = await receiver();
    const partner = await createPartner(t);
    await createWebhook(db(), r.url, ['CUSTOMER'], partner.organizationId);
    const created = await signedInject(t.app, partner, {
      method: 'POST',
      url: '/v1/customers',
      body: { firstName: 'Amina', lastName: 'Otieno', msisdn: '254712000001' },
    });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().data.id as string;
    await waitFor(async () => (r.received.length >= 1 ? true : undefined), 30_000, 'the delivery');
    const fetched = await signedInject(t.app, partner, { method: 'GET', url: `/v1/customers/${id}` });
    const [envelope] = r.envelopes();
    expect(envelope).toMatchObject({ event: 'CUSTOMER.CREATED', data: fetched.json().data });
    expect(await verifyBoth(r.received[0]!, r.url, key)).toEqual({ ours: true, independent: true });
  });

  it('through the API: POST /v1/webhooks, its WEBHOOK.CREATED, a resend, the history', async () => {
    const r = await receiver();
    const partner = await createPartner(t);
    const call = (method: 'GET' | 'POST', url: string, body?: unknown) =>
      signedInject(t.app, partner, { method, url, body });
    const created = await call('POST', '/v1/webhooks', { url: r.url, subscriptions: ['CUSTOMER'] });
    expect(created.statusCode, created.body).toBe(201);
    await waitFor(async () => (r.received.length >= 1 ? true : undefined), 20_000, 'WEBHOOK.CREATED');
    const [first] = r.envelopes();
    expect(first).toMatchObject({
      event: 'WEBHOOK.CREATED',
      data: { webhookId: created.json().data.webhookId },
    });

    const resent = await call('POST', `/v1/webhooks/events/${first!.eventId}/resend`);
    expect(resent.statusCode, resent.body).toBe(202);
    await waitFor(async () => (r.received.length >= 2 ? true : undefined), 20_000, 'the resend');
    expect(r.envelopes().map((e) => e.eventId)).toEqual([first!.eventId, first!.eventId]);
    expect(r.received[1]!.body).toBe(r.received[0]!.body);
    for (const x of r.received)
      expect(await verifyBoth(x, r.url, key)).toEqual({ ours: true, independent: true });

    const history = await waitFor(async () => {
      const res = await call('GET', '/v1/webhooks/events?status=DELIVERED');
      const record = res.json().data.find((e: { eventId: string }) => e.eventId === first!.eventId);
      return record?.attempts.length === 2 ? record : undefined;
    });
    expect(history.attempts).toEqual([
      { at: expect.any(Number), httpStatus: 200, latencyMs: expect.any(Number), error: null },
      { at: expect.any(Number), httpStatus: 200, latencyMs: expect.any(Number), error: null },
    ]);
  });

  it('every event type reaches the receiver, each signed and verified', async () => {
    const r = await receiver();
    const { organizationId } = await createWebhook(db(), r.url, ['ALL']);
    const ids = new Map<string, string>();
    for (const event of WEBHOOK_EVENTS)
      ids.set(await emitEvent(db(), t.ctx.events, organizationId, event, { id: `x-${event}` }), event);
    await waitFor(async () => (r.received.length >= WEBHOOK_EVENTS.length ? true : undefined), 30_000);
    expect(new Map(r.envelopes().map((e) => [e.eventId, e.event]))).toEqual(ids);
    for (const x of r.received)
      expect(await verifyBoth(x, r.url, key)).toEqual({ ours: true, independent: true });
  });

  it('retries a receiver that fails (500), times out or redirects (302) until it succeeds, same eventId', async () => {
    const script = (index: number) => {
      if (index === 0) return { status: 500, body: 'boom\n'.repeat(2000) };
      if (index === 1) return 'hang' as const;
      if (index === 2) return { status: 302, headers: { location: '/elsewhere' } };
      return { status: 204 };
    };
    const r = await receiver(script);
    const { organizationId, webhookId } = await createWebhook(db(), r.url);
    const eventId = await emitEvent(db(), t.ctx.events, organizationId);
    await delivered(eventId);

    // Every request is the same event; the redirect was not followed (nothing asked for /elsewhere).
    expect(r.received.length).toBeGreaterThanOrEqual(4);
    expect(new Set(r.envelopes().map((e) => e.eventId))).toEqual(new Set([eventId]));
    expect(new Set(r.received.map((x) => x.headers['webhook-id']))).toEqual(new Set([eventId]));
    expect(r.received.every((x) => x.path === '/hooks')).toBe(true);
    // Each attempt signed afresh: every signature verifies (a stale one would fail the window later).
    for (const x of r.received) expect((await verifyBoth(x, r.url, key)).ours).toBe(true);

    const attempts = await attemptsOf(db(), eventId);
    const errors = attempts.map((a) => a.error);
    expect(errors.some((e) => e?.startsWith('HTTP 500: boom'))).toBe(true);
    // The body is quoted short, never whole.
    expect(Math.max(...errors.map((e) => e?.length ?? 0))).toBeLessThanOrEqual(300);
    expect(errors.some((e) => e?.startsWith('timeout'))).toBe(true);
    expect(errors).toContain('redirect (HTTP 302) not followed');
    expect(attempts.at(-1)).toMatchObject({ httpStatus: 204, error: null });
    expect(attempts.length).toBe((await deliveriesOf(db(), eventId))[0]!.attempts);
    // The success ended the failing streak.
    expect((await webhookRow(db(), webhookId))?.failingSince).toBeNull();
  });

  it('410 disables the webhook with the reason and gives up its pending deliveries', async () => {
    const r = await receiver(() => ({ status: 410, body: 'gone' }));
    const partner = await createPartner(t);
    const { organizationId, webhookId } = await createWebhook(db(), r.url, ['ALL'], partner.organizationId);
    const first = await emitEvent(db(), t.ctx.events, organizationId);
    const row = await disabled(webhookId, 'the webhook to be disabled');
    expect(row).toMatchObject({ disabledReason: REASON_GONE, disabledAt: expect.any(String) });
    // GET /v1/webhooks shows it, with the reason.
    const shown = await signedInject(t.app, partner, { method: 'GET', url: '/v1/webhooks' });
    expect(shown.statusCode).toBe(200);
    expect(shown.json().data).toMatchObject({
      webhookId,
      status: 'DEACTIVED',
      disabledReason: REASON_GONE,
      disabledAt: expect.any(Number),
    });
    expect((await deliveriesOf(db(), first))[0]).toMatchObject({ state: 'FAILED' });
    // Events after that: none is delivered to a DEACTIVED webhook (the outbox writes no delivery).
    const later = await emitEvent(db(), t.ctx.events, organizationId);
    await d.worker.settled();
    await d.worker.settled();
    expect(await deliveriesOf(db(), later)).toEqual([]);
    expect(r.received).toHaveLength(1);
  });

  it('a pending delivery of a webhook disabled meanwhile is given up, not sent', async () => {
    const r = await receiver(() => ({ status: 410 }));
    const { organizationId, webhookId } = await createWebhook(db(), r.url);
    // Two events before the worker sees either: both deliveries PENDING, one attempt disables.
    await d.worker.stop();
    const a = await emitEvent(db(), t.ctx.events, organizationId);
    const b = await emitEvent(db(), t.ctx.events, organizationId);
    const worker = d.startWorker();
    await waitFor(async () =>
      (await webhookRow(db(), webhookId))?.status === 'DEACTIVED' ? true : undefined,
    );
    await worker.settled();
    const states = [...(await deliveriesOf(db(), a)), ...(await deliveriesOf(db(), b))].map((d) => d.state);
    expect(states).toEqual(['FAILED', 'FAILED']);
    expect(r.received.length).toBeGreaterThanOrEqual(1);
    expect(r.received.length).toBeLessThanOrEqual(2);
  });

  it('a webhook whose deliveries have failed for 5 days is disabled with the reason', async () => {
    const r = await receiver(() => ({ status: 503 }));
    const partner = await createPartner(t);
    const { organizationId, webhookId } = await createWebhook(db(), r.url, ['ALL'], partner.organizationId);
    await run(
      db(),
      sql`update webhooks set failing_since = now() - interval '5 days 1 minute' where id = ${webhookId}`,
    );
    const eventId = await emitEvent(db(), t.ctx.events, organizationId);
    const row = await disabled(webhookId, 'the 5-day rule');
    expect(row.disabledReason).toBe(REASON_FAILING);
    const shown = await signedInject(t.app, partner, { method: 'GET', url: '/v1/webhooks' });
    expect(shown.json().data).toMatchObject({ status: 'DEACTIVED', disabledReason: REASON_FAILING });
    expect((await deliveriesOf(db(), eventId))[0]).toMatchObject({ state: 'FAILED', attempts: 1 });
  });

  it('4 days of failures do not disable it, and a success clears the streak', async () => {
    let failing = true;
    const r = await receiver(() => (failing ? { status: 500 } : { status: 200 }));
    const { organizationId, webhookId } = await createWebhook(db(), r.url);
    await run(
      db(),
      sql`update webhooks set failing_since = now() - interval '4 days' where id = ${webhookId}`,
    );
    const eventId = await emitEvent(db(), t.ctx.events, organizationId);
    await waitFor(async () => ((await attemptsOf(db(), eventId)).length >= 1 ? true : undefined));
    expect((await webhookRow(db(), webhookId))?.status).toBe('ACTIVE');
    failing = false;
    await delivered(eventId);
    expect(await webhookRow(db(), webhookId)).toMatchObject({ status: 'ACTIVE', failingSince: null });
  });

  it('sends to the webhook current URL at each attempt', async () => {
    const old = await receiver(() => ({ status: 500 }));
    const now = await receiver();
    const { organizationId, webhookId } = await createWebhook(db(), old.url);
    const eventId = await emitEvent(db(), t.ctx.events, organizationId);
    await waitFor(async () => (old.received.length >= 1 ? true : undefined));
    await run(db(), sql`update webhooks set url = ${now.url} where id = ${webhookId}`);
    await delivered(eventId);
    expect(now.envelopes().map((e) => e.eventId)).toEqual([eventId]);
    expect((await verifyBoth(now.received[0]!, now.url, key)).ours).toBe(true);
  });

  it("an organization's events reach only its own webhook", async () => {
    const mine = await receiver();
    const theirs = await receiver();
    const a = await createWebhook(db(), mine.url);
    const b = await createWebhook(db(), theirs.url, ['REQUEST']);
    const ours = await emitEvent(db(), t.ctx.events, a.organizationId);
    // B's webhook is not subscribed to CUSTOMER: no delivery at all.
    const unsubscribed = await emitEvent(db(), t.ctx.events, b.organizationId, 'CUSTOMER.CREATED');
    const theirsId = await emitEvent(db(), t.ctx.events, b.organizationId, 'REQUEST.CREATED', {
      id: 'req_1',
    });
    await delivered(ours);
    await delivered(theirsId);
    expect(mine.envelopes().map((e) => e.eventId)).toEqual([ours]);
    expect(theirs.envelopes().map((e) => e.eventId)).toEqual([theirsId]);
    expect(await deliveriesOf(db(), unsubscribed)).toEqual([]);
  });

  it('metrics: events emitted, attempts and deliveries by outcome, latency, queue gauges', async () => {
    const r = await receiver(() => ({ status: 500 }));
    const { organizationId } = await createWebhook(db(), r.url);
    const eventId = await emitEvent(db(), t.ctx.events, organizationId, 'WEBHOOK.CREATED');
    await waitFor(async () => ((await attemptsOf(db(), eventId)).length >= 1 ? true : undefined));
    const stats = await queueStats(db(), new Date(Date.now() + 60_000));
    expect(stats.depth).toBeGreaterThanOrEqual(1);
    expect(stats.oldestSeconds).toBeGreaterThanOrEqual(60);
    expect(stats.disabled).toBeGreaterThanOrEqual(2); // the 410 and the 5-day tests above
    const text = await t.ctx.metrics.registry.metrics();
    expect(text).toMatch(/webhook_events_emitted_total\{event="WEBHOOK.CREATED"\} [1-9]/);
    expect(text).toMatch(/webhook_delivery_attempts_total\{outcome="http_error"\} [1-9]/);
    expect(text).toMatch(/webhook_delivery_attempts_total\{outcome="timeout"\} [1-9]/);
    expect(text).toMatch(/webhook_deliveries_total\{outcome="delivered"\} [1-9]/);
    expect(text).toMatch(/webhook_deliveries_total\{outcome="disabled"\} [1-9]/);
    expect(text).toMatch(/webhook_attempt_seconds_count [1-9]/);
    // The worker's first pass set the gauges.
    expect(text).toMatch(/webhook_queue_depth \d+/);
    expect(text).toMatch(/webhooks_disabled \d+/);
  });
});
