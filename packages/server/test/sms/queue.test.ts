import { randomInt } from 'node:crypto';
import { FAKE_AT_SMS_ENV, type FakeAtSmsApi, startFakeAtSms } from '@partner-api/fakes';
import { describeStores } from '@partner-api/testkit/app.ts';
import { ownDatabase } from '@partner-api/testkit/database.ts';
import { adminInject } from '@partner-api/testkit/helpers.ts';
import { type ListeningApp, listeningTestApp } from '@partner-api/testkit/listening.ts';
import { createPartner, type Partner } from '@partner-api/testkit/partner.ts';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { one, rows, run } from '../../src/db/query.ts';
import { startPayments } from '../../src/services/payments/pipeline/start.ts';
import type { PaymentWorker } from '../../src/services/payments/pipeline/worker.ts';
import { smsGatewayProvider } from '../../src/services/sms/gateway/index.ts';
import { listSms } from '../../src/services/sms/list.ts';
import { type SmsWorker, startSmsWorker } from '../../src/services/sms/worker.ts';
import { upsertStocks } from '../../src/services/stocks/upsert.ts';
import { ensureCatalog, insertCustomer, insertHolding, refOf, ussdClient, waitFor } from '../ussd/support.ts';

type Sms = {
  kind: string;
  state: string;
  text: string;
  msisdn: string;
  attempts: number;
  statusCode: number | null;
};

/**
 * The investor SMS queue end to end on each store: USSD orders and the sandbox payment simulator
 * cause the SMS in their own transactions; the worker sends them to the Africa's Talking fake over
 * HTTP; the fake's delivery reports come back to the listening app (docs/sms.md).
 */
describeStores('investor SMS on %s', (store) => {
  let fake: FakeAtSmsApi;
  let t: ListeningApp;
  let ids: Awaited<ReturnType<typeof ensureCatalog>>;
  let payments: PaymentWorker;
  let worker: SmsWorker;
  let database: Awaited<ReturnType<typeof ownDatabase>>;
  const organizations = new Set<string>();

  beforeAll(async () => {
    fake = await startFakeAtSms({ reportDelayMs: 20 });
    // Its own PostgreSQL database: the shared one may hold other branches' migrations past this one's.
    database = await ownDatabase(store, 'sms_queue');
    t = await listeningTestApp(store, {
      ...database.env,
      ...FAKE_AT_SMS_ENV(fake),
      SANDBOX_SETTLE_MS: '100',
      SMS_BACKOFF_BASE_MS: '50',
      SMS_BACKOFF_MAX_MS: '100',
      SMS_MAX_ATTEMPTS: '3',
      SMS_WORKER_INTERVAL_MS: '50',
      PAYMENT_WORKER_INTERVAL_MS: '100',
    });
    fake.setCallbackUrl(t.ctx.config.sms!.callbackUrl);
    ids = await ensureCatalog(t);
    payments = startPayments(t.ctx, t.app.log);
    // Only this suite's organizations: the shared PostgreSQL holds other suites' SMS.
    worker = startSmsWorker(t.ctx, smsGatewayProvider.createGateway(t.ctx.config.sms!), t.app.log, {
      organizations,
    });
  });
  afterAll(async () => {
    await worker.stop();
    await payments.stop();
    await t.close();
    await fake.close();
    await database.drop();
  });

  async function customer(): Promise<{ partner: Partner; customerId: string; msisdn: string }> {
    // Signed for the listening app's PUBLIC_BASE_URL.
    const partner = { ...(await createPartner(t)), baseUrl: t.baseUrl };
    organizations.add(partner.organizationId);
    // A Safaricom number (0711…): the sandbox's payments serve it.
    const msisdn = `25471${randomInt(1_000_000, 9_999_999)}`;
    return { partner, customerId: await insertCustomer(t, partner, { msisdn }), msisdn };
  }
  const smsOf = (customerId: string) =>
    rows<Sms>(
      t.ctx.database.db,
      sql`select kind, state, text, msisdn, attempts, status_code as "statusCode" from sms_messages
  where customer_id = ${customerId} order by created_at, id`,
    );
  const received = (msisdn: string) =>
    fake.messages.filter((m) => m.to === `+${msisdn}`).map((m) => m.message);
  const settledSms = (customerId: string, kinds: string[], states = ['DELIVERED']) =>
    waitFor(
      async () => {
        const list = await smsOf(customerId);
        const done = kinds.every((k) => list.some((s) => s.kind === k && states.includes(s.state)));
        return done ? list : undefined;
      },
      15_000,
      `SMS ${kinds.join(', ')}`,
    );

  it('a sell: its confirmation and its payout, each sent once and delivered', async () => {
    const { partner, customerId, msisdn } = await customer();
    await insertHolding(t, partner, customerId, ids.sell, '10');
    const screen = await ussdClient(t, partner).walk(customerId, ['1', '8', 'ZZSELL', '1', '2', '3', '1']);
    const orderId = refOf(screen);
    const list = await settledSms(customerId, ['TRADE_SELL', 'PAYOUT']);
    const last4 = msisdn.slice(-4);
    expect(list.map((s) => s.text)).toEqual([
      `Sold 3 ZZSELL at KES 40 for KES 120.00, to be paid to your number ending ${last4}. Order ${orderId}.`,
      `KES 120.00 from order ${orderId} was paid to your number ending ${last4}.`,
    ]);
    expect(received(msisdn)).toEqual(list.map((s) => s.text));
    expect(list.every((s) => s.attempts === 1 && s.statusCode === 101)).toBe(true);
  });

  it("in the investor's language: the customer's own, else the organization's default", async () => {
    const sell = async (prepare: (c: Awaited<ReturnType<typeof customer>>) => Promise<void>) => {
      const c = await customer();
      await prepare(c);
      await insertHolding(t, c.partner, c.customerId, ids.sell, '10');
      const screen = await ussdClient(t, c.partner).walk(c.customerId, [
        '1',
        '8',
        'ZZSELL',
        '1',
        '2',
        '3',
        '1',
      ]);
      const orderId = refOf(screen);
      const list = await settledSms(c.customerId, ['TRADE_SELL', 'PAYOUT']);
      expect(received(c.msisdn)).toEqual(list.map((s) => s.text));
      return { texts: list.map((s) => s.text), orderId, last4: c.msisdn.slice(-4) };
    };
    const kiswahili = ({ orderId, last4 }: { orderId: string; last4: string }) => [
      `Umeuza 3 ZZSELL kwa bei ya KES 40, jumla KES 120.00, italipwa kwa nambari inayoishia ${last4}. Kumb. ${orderId}.`,
      `KES 120.00 za ombi ${orderId} zimelipwa kwa nambari yako inayoishia ${last4}.`,
    ];
    // The customer chose Kiswahili; their organization's default is English.
    const chose = await sell(async ({ customerId }) => {
      await run(t.ctx.database.db, sql`update customers set language = 'sw' where id = ${customerId}`);
    });
    expect(chose.texts).toEqual(kiswahili(chose));
    // The organization's default is Kiswahili, set by the operator; the customer chose none.
    const byDefault = await sell(async ({ partner }) => {
      const res = await adminInject(t, 'PATCH', `/admin/organizations/${partner.organizationId}`, {
        language: 'sw',
      });
      expect(res.statusCode, res.body).toBe(200);
    });
    expect(byDefault.texts).toEqual(kiswahili(byDefault));
  });

  it('a buy of whole units: its confirmation, and the refund of what they left unspent', async () => {
    const { partner, customerId, msisdn } = await customer();
    // An instrument of whole units only, of this test alone.
    const symbol = `ZZW${randomInt(100_000, 999_999)}`;
    await upsertStocks(
      t.ctx.database.db,
      [{ symbol, name: 'Whole Units Test', price: '25.0000', currency: 'KES' }],
      'replace',
    );
    await run(t.ctx.database.db, sql`update stocks set fractional = false where symbol = ${symbol}`);
    const screen = await ussdClient(t, partner).walk(customerId, ['1', '8', symbol, '1', '1', '110', '1']);
    const orderId = refOf(screen);
    const list = await settledSms(customerId, ['TRADE_BUY', 'REFUND']);
    expect(list.map((s) => s.text)).toEqual([
      `Bought 4 ${symbol} at KES 25, cost KES 100.00. Order ${orderId}.`,
      `KES 10.00 for order ${orderId} was refunded to your number ending ${msisdn.slice(-4)}.`,
    ]);
    expect(received(msisdn)).toEqual(list.map((s) => s.text));
  });

  it('a collection that failed: one SMS says so', async () => {
    const { partner, customerId, msisdn } = await customer();
    // The simulator fails an amount whose whole part ends in 01.
    const screen = await ussdClient(t, partner).walk(customerId, ['1', '8', 'ZZBUY', '1', '1', '101', '1']);
    const list = await settledSms(customerId, ['PAYMENT_FAILED']);
    expect(list.map((s) => s.text)).toEqual([
      `Your payment of KES 101.00 for order ${refOf(screen)} did not go through. Nothing was bought.`,
    ]);
    expect(received(msisdn)).toEqual([list[0]!.text]);
  });

  async function queued(kind: 'PAYOUT', eventKey: string) {
    const { partner, customerId, msisdn } = await customer();
    const queuedNow = await t.ctx.database.db.transaction((tx) =>
      t.ctx.sms.queue(tx, {
        organizationId: partner.organizationId,
        customerId,
        kind,
        eventKey,
        values: { amount: '5.00', currency: 'KES', order: 'cmtestorder', last4: msisdn.slice(-4) },
      }),
    );
    return { partner, customerId, msisdn, queuedNow };
  }

  it('one SMS per event key: queueing the same cause again writes nothing', async () => {
    const key = `test:${randomInt(1e9)}`;
    const first = await queued('PAYOUT', key);
    expect(first.queuedNow).toBe(true);
    const again = await t.ctx.database.db.transaction((tx) =>
      t.ctx.sms.queue(tx, {
        organizationId: first.partner.organizationId,
        customerId: first.customerId,
        kind: 'PAYOUT',
        eventKey: key,
        values: { amount: '5.00', currency: 'KES', order: 'x', last4: '0000' },
      }),
    );
    expect(again).toBe(false);
    await settledSms(first.customerId, ['PAYOUT']);
    expect(received(first.msisdn)).toHaveLength(1);
  });

  it('an SMS queued in a transaction that rolls back does not exist', async () => {
    const { partner, customerId } = await customer();
    const rolledBack = t.ctx.database.db.transaction(async (tx) => {
      const queuedNow = await t.ctx.sms.queue(tx, {
        organizationId: partner.organizationId,
        customerId,
        kind: 'PAYOUT',
        eventKey: `test:${randomInt(1e9)}`,
        values: { amount: '5.00', currency: 'KES', order: 'x', last4: '0000' },
      });
      expect(queuedNow).toBe(true);
      throw new Error('the cause failed');
    });
    await expect(rolledBack).rejects.toThrow('the cause failed');
    expect(await smsOf(customerId)).toEqual([]);
  });

  it.each([
    ['invalid-number', 403],
    ['insufficient-balance', 405],
    ['blacklisted', 406],
    ['dnd', 409],
  ] as const)(
    'a refusal (%s) is REFUSED with its code, never retried, and stands out for the operator',
    async (scenario, code) => {
      // Scenario by sticky setting for this one send, then back: the worker claims only this SMS.
      fake.setScenario(scenario);
      try {
        const { customerId, partner } = await queued('PAYOUT', `test:${randomInt(1e9)}`);
        const [sms] = await settledSms(customerId, ['PAYOUT'], ['REFUSED']);
        expect(sms).toMatchObject({ state: 'REFUSED', statusCode: code, attempts: 1 });
        await worker.settled();
        expect((await smsOf(customerId))[0]?.attempts).toBe(1);
        expect(await t.ctx.metrics.registry.metrics()).toMatch(
          /^sms_sends_total\{outcome="refused"\} [1-9]/m,
        );
        const listed = await listSms(t.ctx.database.db, {
          organizationId: partner.organizationId,
          limit: 10,
        });
        expect(listed).toMatchObject([{ state: 'REFUSED', attention: true, statusCode: code }]);
      } finally {
        fake.setScenario('normal');
      }
    },
  );

  it('a gateway 5xx is retried with backoff, then sent', async () => {
    fake.queue('gateway-error');
    const { customerId, msisdn } = await queued('PAYOUT', `test:${randomInt(1e9)}`);
    const [sms] = await settledSms(customerId, ['PAYOUT']);
    expect(sms).toMatchObject({ state: 'DELIVERED', attempts: 2 });
    expect(received(msisdn)).toHaveLength(1);
  });

  it('delivery reports: a Failed one is UNDELIVERED; an unknown id, a wrong number or a wrong token change nothing', async () => {
    fake.queue('failed-report');
    const { customerId } = await queued('PAYOUT', `test:${randomInt(1e9)}`);
    await settledSms(customerId, ['PAYOUT'], ['UNDELIVERED']);
    const row = await one<{ id: string; messageId: string; failureReason: string }>(
      t.ctx.database.db,
      sql`select id, gateway_message_id as "messageId", failure_reason as "failureReason" from sms_messages
  where customer_id = ${customerId}`,
    );
    expect(row?.failureReason).toBe('DeliveryFailure');
    const report = (path: string, form: Record<string, string>) =>
      t.app.inject({
        method: 'POST',
        url: path,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams(form).toString(),
      });
    const route = new URL(t.ctx.config.sms!.callbackUrl).pathname;
    // A forged Success with the right id but another number, and an unknown id: 200, not applied.
    const [forged, unknown] = await Promise.all([
      report(route, { id: row!.messageId, status: 'Success', phoneNumber: '+254700000000' }),
      report(route, { id: 'ATXid_unknown', status: 'Success', phoneNumber: '+254700000000' }),
    ]);
    expect(forged.statusCode).toBe(200);
    expect(unknown.statusCode).toBe(200);
    const wrongToken = await report('/v1/sms/callbacks/africastalking/not-the-token', {
      id: row!.messageId,
      status: 'Success',
    });
    expect(wrongToken.statusCode).toBe(404);
    expect((await smsOf(customerId))[0]?.state).toBe('UNDELIVERED');
  });

  it('an organization that turned investor SMS off gets none', async () => {
    const { partner, customerId } = await customer();
    const off = await t.admin.inject({
      method: 'PATCH',
      url: `/admin/organizations/${partner.organizationId}`,
      headers: { authorization: `Bearer ${t.ctx.secrets.adminToken}` },
      payload: { smsEnabled: false },
    });
    expect(off.statusCode, off.body).toBe(200);
    expect(off.json()).toMatchObject({ smsEnabled: false });
    await insertHolding(t, partner, customerId, ids.sell, '2');
    const screen = await ussdClient(t, partner).walk(customerId, ['1', '8', 'ZZSELL', '1', '2', '1', '1']);
    refOf(screen);
    expect(await smsOf(customerId)).toEqual([]);
  });

  it('GET /admin/sms filters by state, organization and customer; refuses an unknown state', async () => {
    const { partner, customerId } = await queued('PAYOUT', `test:${randomInt(1e9)}`);
    await settledSms(customerId, ['PAYOUT']);
    const get = (query: string) =>
      t.admin.inject({
        url: `/admin/sms?${query}`,
        headers: { authorization: `Bearer ${t.ctx.secrets.adminToken}` },
      });
    const listed = await get(
      `organizationId=${partner.organizationId}&customerId=${customerId}&state=DELIVERED`,
    );
    expect(listed.statusCode).toBe(200);
    expect(listed.json().data).toMatchObject([
      { customerId, kind: 'PAYOUT', state: 'DELIVERED', attention: false },
    ]);
    expect((await get(`organizationId=${partner.organizationId}&state=REFUSED`)).json().data).toEqual([]);
    const bad = await get('state=LOST');
    expect(bad.statusCode).toBe(400);
    const unauthenticated = await t.admin.inject({ url: '/admin/sms' });
    expect(unauthenticated.statusCode).toBe(401);
  });
});
