import { randomBytes } from 'node:crypto';
import {
  FAKE_AIRTEL_ENV,
  FAKE_MTN_ENV,
  type FakeAirtel,
  type FakeMtn,
  startFakeAirtel,
  startFakeMtn,
} from '@partner-api/fakes';
import { POSTGRES_SKIP_REASON, type TestApp } from '@partner-api/testkit/app.ts';
import { createPartner, type Partner } from '@partner-api/testkit/partner.ts';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rows } from '../../src/db/query.ts';
import { upsertStocks } from '../../src/services/stocks/upsert.ts';
import {
  insertCustomer,
  insertHolding,
  orderRow,
  refOf,
  type UssdData,
  ussdClient,
  waitFor,
} from '../ussd/support.ts';
import {
  buyThroughUssd,
  CALLBACK_TOKEN,
  type Production,
  requestStateOf,
  settledSide,
  startProduction,
  statusOf,
  transactionRow,
} from './mpesa/production.ts';

if (!process.env.DATABASE_URL) console.warn(`production on three providers: ${POSTGRES_SKIP_REASON}`);

const MTN_TOKEN = `m${randomBytes(20).toString('hex')}`;
const AIRTEL_TOKEN = `a${randomBytes(20).toString('hex')}`;
const AIRTEL_HMAC_KEY = 'airtel-portal-callback-key';
const MAX_PENDING_SECONDS = 10;

type Provider = {
  name: 'M-Pesa' | 'Airtel' | 'MTN';
  /** A fresh number on the provider's network. */
  msisdn(): string;
  currency: 'KES' | 'UGX';
  prompt: () => number;
  payout: () => number;
  queuePrompt(scenario: string): void;
  queuePayout(scenario: string): void;
};

/**
 * Production as it goes live in three markets at once, on PostgreSQL: Safaricom (Daraja fake) and
 * Airtel Kenya (Airtel fake, KES) for Kenyan numbers, MTN Uganda (MTN fake, mtnuganda, UGX) for
 * Ugandan ones. Customers of each buy, sell and cancel through USSD; each provider's own failure
 * modes end in the right final status with one prompt or payout per order, counted at its fake.
 */
describe.skipIf(!process.env.DATABASE_URL)('production on M-Pesa, Airtel Money and MTN MoMo', () => {
  let p: Production;
  let t: TestApp;
  let mtn: FakeMtn;
  let airtel: FakeAirtel;
  let seq = 100;
  const providers = {} as Record<Provider['name'], Provider>;

  beforeAll(async () => {
    mtn = await startFakeMtn({
      targetEnvironment: 'mtnuganda',
      currency: 'UGX',
      callbackDelayMs: 50,
      slowResponseMs: 4000,
    });
    airtel = await startFakeAirtel({ callbackHmacKey: AIRTEL_HMAC_KEY, tipMs: 2500, slowResponseMs: 4000 });
    p = await startProduction({
      MPESA_REQUEST_TIMEOUT_MS: '1500',
      ...FAKE_MTN_ENV(mtn.url, { targetEnvironment: 'mtnuganda', currency: 'UGX', callbackToken: MTN_TOKEN }),
      MTN_COUNTRY: 'UG',
      MTN_RECONCILE_AFTER_SECONDS: '1',
      MTN_REQUEST_TIMEOUT_MS: '1500',
      ...FAKE_AIRTEL_ENV(airtel.url),
      AIRTEL_CALLBACK_TOKEN: AIRTEL_TOKEN,
      AIRTEL_CALLBACK_HMAC_KEY: AIRTEL_HMAC_KEY,
      AIRTEL_RECONCILE_AFTER_SECONDS: '1',
      AIRTEL_REQUEST_TIMEOUT_MS: '1500',
      PAYMENT_BACKOFF_BASE_MS: '100',
      PAYMENT_BACKOFF_MAX_MS: '400',
      PAYMENT_MAX_ATTEMPTS: '4',
      PAYMENT_MAX_PENDING_SECONDS: String(MAX_PENDING_SECONDS),
    });
    t = p.t;
    // Airtel takes its callback URL in its portal, not per request.
    airtel.setCallbackUrl(`${p.listenerUrl}/v1/payments/callbacks/airtel/${AIRTEL_TOKEN}`);
    await upsertStocks(t.ctx.database.db, [
      { symbol: 'ZZUGBUY', name: 'Zulu Kampala Holdings', price: '500.0000', currency: 'UGX' },
      { symbol: 'ZZUGSELL', name: 'Zulu Entebbe Holdings', price: '500.0000', currency: 'UGX' },
    ]);
    const number = (prefix: string) => () => `${prefix}${String(seq++).padStart(5, '0')}`;
    providers['M-Pesa'] = {
      name: 'M-Pesa',
      msisdn: number('2547121'),
      currency: 'KES',
      prompt: () => p.fake.processed('stk-push'),
      payout: () => p.fake.processed('b2c-payment'),
      queuePrompt: (s) => p.fake.queue('stk-push', s as never),
      queuePayout: (s) => p.fake.queue('b2c-payment', s as never),
    };
    providers.Airtel = {
      name: 'Airtel',
      msisdn: number('2547331'),
      currency: 'KES',
      prompt: () => airtel.processed('ussd-push'),
      payout: () => airtel.processed('disbursement'),
      queuePrompt: (s) => airtel.queue('ussd-push', s as never),
      queuePayout: (s) => airtel.queue('disbursement', s as never),
    };
    providers.MTN = {
      name: 'MTN',
      msisdn: number('2567721'),
      currency: 'UGX',
      prompt: () => mtn.processed('request-to-pay'),
      payout: () => mtn.processed('transfer'),
      queuePrompt: (s) => mtn.queue('request-to-pay', s as never),
      queuePayout: (s) => mtn.queue('transfer', s as never),
    };
  }, 90_000);
  afterAll(async () => {
    await p?.close();
    await mtn?.close();
    await airtel?.close();
  });

  const customerOf = async (provider: Provider) => {
    const partner = await createPartner(t);
    const msisdn = provider.msisdn();
    return { partner, msisdn, customerId: await insertCustomer(t, partner, { msisdn }) };
  };
  const buyStock = (provider: Provider) => (provider.currency === 'UGX' ? 'ZZUGBUY' : 'ZZBUY');
  const stockId = async (symbol: string) =>
    (await rows<{ id: string }>(t.ctx.database.db, sql`select id from stocks where symbol = ${symbol}`))[0]!
      .id;

  /** Sells 3 units of `symbol` through USSD; the order id. */
  const sell = async (partner: Partner, customerId: string, symbol: string) => {
    const screen = await ussdClient(t, partner).walk(customerId, ['1', '8', symbol, '1', '2', '3', '1']);
    expect(screen.currentState, screen.ussdText).toBe('SELL_SUBMITTED');
    return refOf(screen);
  };

  it('/healthz lists each configured provider with its breaker', async () => {
    const health = (await t.app.inject({ method: 'GET', url: '/healthz' })).json();
    expect(Object.keys(health.payments.breakers).sort()).toEqual(['airtel', 'mpesa', 'mtn']);
    expect(health.payments.breakers.mtn).toBe('closed');
  });

  describe.each(['M-Pesa', 'Airtel', 'MTN'] as const)('a customer on %s', (name) => {
    it('buys to EXECUTED with one prompt, sells with one payout', async () => {
      const provider = providers[name];
      const { partner, customerId } = await customerOf(provider);
      const prompts = provider.prompt();
      const orderId = await buyThroughUssd(t, partner, customerId, '1000', buyStock(provider));
      expect(await settledSide(t, partner, orderId, 'payment')).toMatchObject({ status: 'SUCCESS' });
      expect(await orderRow(t, orderId)).toMatchObject({ status: 'EXECUTED' });
      expect(provider.prompt() - prompts).toBe(1);

      const symbol = provider.currency === 'UGX' ? 'ZZUGSELL' : 'ZZSELL';
      await insertHolding(t, partner, customerId, await stockId(symbol), '10.0000');
      const payouts = provider.payout();
      const sold = await sell(partner, customerId, symbol);
      const payout = await settledSide(t, partner, sold, 'disbursement');
      expect(payout).toMatchObject({
        status: 'SUCCESS',
        amount: provider.currency === 'UGX' ? '1500.00' : '120.00',
      });
      expect(provider.payout() - payouts).toBe(1);
    });

    it('cancels a paid buy whose stock was delisted and is refunded with one payout', async () => {
      const provider = providers[name];
      const { partner, customerId } = await customerOf(provider);
      const symbol = `ZZDL${name.slice(0, 3).toUpperCase().replace('-', '')}`;
      await upsertStocks(t.ctx.database.db, [
        { symbol, name: `Zulu Delisted ${name}`, price: '10.0000', currency: provider.currency },
      ]);
      // No callback: the sweep learns of the payment a second later, after the stock is delisted.
      provider.queuePrompt('no-callback');
      const orderId = await buyThroughUssd(t, partner, customerId, '500', symbol);
      await rows(t.ctx.database.db, sql`update stocks set is_active = false where symbol = ${symbol}`);
      expect(await settledSide(t, partner, orderId, 'payment')).toMatchObject({ status: 'SUCCESS' });
      expect(await orderRow(t, orderId)).toMatchObject({ status: 'PAID' });
      const payouts = provider.payout();
      let screen: UssdData = await ussdClient(t, partner).walk(customerId, ['2', '1', '1', '1']);
      expect(screen.currentState, screen.ussdText).toBe('CANCEL_REQUEST_CONFIRMATION');
      screen = (await ussdClient(t, partner).press(screen.sessionId, '1')).json().data;
      expect(screen.currentState).toBe('REQUEST_CANCELLED');
      expect(await settledSide(t, partner, orderId, 'disbursement')).toMatchObject({
        status: 'SUCCESS',
        amount: '500.00',
      });
      expect(provider.payout() - payouts).toBe(1);
    });
  });

  type Case = {
    provider: Provider['name'];
    scenario: string;
    status: 'SUCCESS' | 'FAILED' | 'CANCELLED';
    count: 0 | 1;
    /** The provider's callback is recorded against this request (matched by our own reference). */
    callbackMatched?: true;
  };
  const COLLECTIONS: Case[] = [
    // MTN: a callback sent once and never again; a 500 (nothing done, the status query's 404, then
    // the same reference sent again); FAILED with each reason; and the contract's modes.
    { provider: 'MTN', scenario: 'callback-once', status: 'SUCCESS', count: 1 },
    { provider: 'MTN', scenario: 'http-500', status: 'SUCCESS', count: 1 },
    // A 500 after MTN took the request: its callback names our X-Reference-Id, stored when the
    // request was dispatched, so it matches (before: "no request of ours", only the query settled it).
    { provider: 'MTN', scenario: 'http-500-accepted', status: 'SUCCESS', count: 1, callbackMatched: true },
    { provider: 'MTN', scenario: 'cancelled', status: 'CANCELLED', count: 1 },
    { provider: 'MTN', scenario: 'insufficient', status: 'FAILED', count: 1 },
    { provider: 'MTN', scenario: 'unreachable', status: 'FAILED', count: 1 },
    { provider: 'MTN', scenario: 'failed:PAYER_NOT_FOUND', status: 'FAILED', count: 1 },
    { provider: 'MTN', scenario: 'contradicting-callback', status: 'CANCELLED', count: 1 },
    { provider: 'MTN', scenario: 'duplicate-callback', status: 'SUCCESS', count: 1 },
    { provider: 'MTN', scenario: 'slow', status: 'SUCCESS', count: 1 },
    // Airtel: a 200 with success:false (nothing done); TIP for a while; a callback without an amount
    // (the default); a wrong hash (the enquiry settles it); and the contract's modes.
    { provider: 'Airtel', scenario: 'refused-200', status: 'FAILED', count: 0 },
    { provider: 'Airtel', scenario: 'long-tip', status: 'SUCCESS', count: 1 },
    { provider: 'Airtel', scenario: 'success', status: 'SUCCESS', count: 1 },
    { provider: 'Airtel', scenario: 'wrong-hash', status: 'SUCCESS', count: 1 },
    { provider: 'Airtel', scenario: 'cancelled', status: 'CANCELLED', count: 1 },
    { provider: 'Airtel', scenario: 'insufficient', status: 'FAILED', count: 1 },
    { provider: 'Airtel', scenario: 'contradicting-callback', status: 'FAILED', count: 1 },
    { provider: 'Airtel', scenario: 'duplicate-callback', status: 'SUCCESS', count: 1 },
    { provider: 'Airtel', scenario: 'reset', status: 'SUCCESS', count: 1 },
  ];

  it.each(COLLECTIONS)(
    '$provider collection meeting $scenario ends $status with $count prompt(s)',
    async (c) => {
      const provider = providers[c.provider];
      const { partner, customerId } = await customerOf(provider);
      const before = provider.prompt();
      provider.queuePrompt(c.scenario);
      const orderId = await buyThroughUssd(t, partner, customerId, '1000', buyStock(provider));
      const payment = await settledSide(t, partner, orderId, 'payment', (MAX_PENDING_SECONDS + 15) * 1000);
      expect([payment.status, (await transactionRow(t, payment.id))?.failureReason]).toEqual([
        c.status,
        c.status === 'SUCCESS' ? null : expect.any(String),
      ]);
      expect(await orderRow(t, orderId)).toMatchObject({
        status: c.status === 'SUCCESS' ? 'EXECUTED' : 'FAILED',
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(provider.prompt() - before).toBe(c.count);
      if (c.callbackMatched)
        await waitFor(
          async () =>
            (
              await rows<{ n: number }>(
                t.ctx.database.db,
                sql`select count(*)::int as n from provider_exchanges where transaction_id = ${payment.id} and kind = 'callback'`,
              )
            )[0]!.n > 0 || undefined,
          10_000,
          'the callback recorded against its request',
        );
    },
  );

  const PAYOUTS: Array<Case & { request: 'DONE' | 'OPERATOR' }> = [
    { provider: 'MTN', scenario: 'http-500', status: 'SUCCESS', count: 1, request: 'DONE' },
    { provider: 'MTN', scenario: 'callback-once', status: 'SUCCESS', count: 1, request: 'DONE' },
    // Failed at MTN: the customer is still owed, so the request stays with the operator.
    { provider: 'MTN', scenario: 'insufficient', status: 'FAILED', count: 1, request: 'OPERATOR' },
    { provider: 'Airtel', scenario: 'no-callback', status: 'SUCCESS', count: 1, request: 'DONE' },
    { provider: 'Airtel', scenario: 'duplicate-callback', status: 'SUCCESS', count: 1, request: 'DONE' },
  ];

  it.each(PAYOUTS)('$provider payout meeting $scenario ends $status with $count payout(s)', async (c) => {
    const provider = providers[c.provider];
    const { partner, customerId } = await customerOf(provider);
    const symbol = provider.currency === 'UGX' ? 'ZZUGSELL' : 'ZZSELL';
    await insertHolding(t, partner, customerId, await stockId(symbol), '10.0000');
    const before = provider.payout();
    provider.queuePayout(c.scenario);
    const orderId = await sell(partner, customerId, symbol);
    const payout = await settledSide(t, partner, orderId, 'disbursement', (MAX_PENDING_SECONDS + 15) * 1000);
    expect(payout.status).toBe(c.status);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(provider.payout() - before).toBe(c.count);
    expect(await requestStateOf(t, payout.id)).toMatchObject({ state: c.request });
  });

  it("a callback naming one provider's transaction, sent to another provider's route, changes nothing", async () => {
    const provider = providers.MTN;
    const { partner, customerId } = await customerOf(provider);
    provider.queuePrompt('pending');
    const orderId = await buyThroughUssd(t, partner, customerId, '1000', 'ZZUGBUY');
    const payment = (await statusOf(t, partner, orderId)).payment!;
    const [request] = await rows<{ id: string; providerIds: Record<string, string> }>(
      t.ctx.database.db,
      sql`select id, provider_ids as "providerIds" from provider_requests where transaction_id = ${payment.id}`,
    );
    const post = (path: string, body: unknown) =>
      fetch(`${p.listenerUrl}/v1/payments/callbacks/${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    // Airtel's shape naming the MTN request (its id is what an Airtel transaction id would be).
    const toAirtel = await post(AIRTEL_TOKEN, {
      transaction: { id: request!.id, message: 'Paid', status_code: 'TS', airtel_money_id: 'MP1' },
    });
    // Daraja's shape naming it, on Daraja's route.
    const toDaraja = await post(`daraja/${CALLBACK_TOKEN}/stk`, {
      Body: {
        stkCallback: {
          MerchantRequestID: request!.id,
          CheckoutRequestID: request!.providerIds.referenceId ?? request!.id,
          ResultCode: 0,
          ResultDesc: 'The service request is processed successfully.',
        },
      },
    });
    expect([toAirtel.status, toDaraja.status]).toEqual([404, 200]);
    const airtelRoute = await post(`airtel/${AIRTEL_TOKEN}`, {
      transaction: { id: request!.id, message: 'Paid', status_code: 'TS', airtel_money_id: 'MP1' },
    });
    expect(airtelRoute.status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect((await statusOf(t, partner, orderId)).payment).toMatchObject({ status: 'PENDING' });
    expect(await orderRow(t, orderId)).toMatchObject({ status: 'PENDING_PAYMENT' });
    const notes = await rows<{ note: string | null }>(
      t.ctx.database.db,
      sql`select note from provider_exchanges where provider_request_id is null and note like 'unmatched%'`,
    );
    expect(notes.length).toBeGreaterThanOrEqual(2);
  });
});
