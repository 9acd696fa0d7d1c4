import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { type FakeAirtel, startFakeAirtel } from '@partner-api/fakes';
import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { createPartner } from '@partner-api/testkit/partner.ts';
import { sql } from 'drizzle-orm';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { one, rows } from '../../../src/db/query.ts';
import { placeSell } from '../../../src/services/orders/life.ts';
import type { CallbackPipeline } from '../../../src/services/payments/callback-pipeline.ts';
import { callbackPipelineFor, pipelineDeps } from '../../../src/services/payments/pipeline/start.ts';
import type { PipelineDeps } from '../../../src/services/payments/pipeline/types.ts';
import { runPipelineOnce } from '../../../src/services/payments/pipeline/worker.ts';
import { createAirtelPaymentAdapter } from '../../../src/services/payments/providers/airtel/adapter.ts';
import { CALLBACK_ACK } from '../../../src/services/payments/providers/airtel/callbacks.ts';
import { callbackHash } from '../../../src/services/payments/providers/airtel/crypto.ts';
import { airtelCallbackRoutes } from '../../../src/services/payments/providers/airtel/routes.ts';
import {
  type AirtelSettings,
  callbackUrl,
} from '../../../src/services/payments/providers/airtel/settings.ts';
import { ensureCatalog, insertCustomer, insertHolding } from '../../ussd/support.ts';
import { placeQueuedBuy } from '../pipeline/support.ts';
import { testConfig } from './harness.ts';

const TOKEN = randomBytes(24).toString('base64url');
const HMAC_KEY = 'portal-callback-private-key';
const RECONCILE_MS = 300;
const TIP_MS = 1500;
const silent = { info: () => {}, warn: () => {}, error: () => {} };
const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));
const path = (token = TOKEN, ref?: string) => `/v1/payments/callbacks/airtel/${token}${ref ? `/${ref}` : ''}`;

let msisdnSeq = 100_000;
/** A fresh Kenyan Airtel number (25473…). */
const airtelNumber = () => `254733${String(msisdnSeq++).padStart(6, '0')}`;

describeStores('Airtel callback routes with the real pipeline on %s, end to end with the fake', (store) => {
  let t: TestApp;
  let fake: FakeAirtel;
  let routes: FastifyInstance;
  let deps: PipelineDeps;
  let settings: AirtelSettings;
  const verdicts: Array<{ requestId: string; verdict: string }> = [];

  beforeAll(async () => {
    t = await buildTestApp(store);
    fake = await startFakeAirtel({ callbackDelayMs: 50, tipMs: TIP_MS, callbackHmacKey: HMAC_KEY });
    settings = {
      ...testConfig(fake.url, 'http://placeholder/v1/payments/callbacks/airtel', {
        callbackToken: TOKEN,
        callbackHmacKey: HMAC_KEY,
      }),
      reconcileAfterMs: RECONCILE_MS,
      callbackAllowedIps: [],
    };
    const adapter = createAirtelPaymentAdapter(settings);
    t.ctx.registry = (network) => (network === 'AIRTEL_MONEY' ? adapter : undefined);
    deps = { ...pipelineDeps(t.ctx, silent), random: () => 0 };
    const real = callbackPipelineFor(t.ctx, silent);
    // The real pipeline; each verdict is noted for the assertions.
    const pipeline: CallbackPipeline = {
      ...real,
      async handleCallback(input) {
        const verdict = await real.handleCallback(input);
        verdicts.push({ requestId: input.requestId, verdict });
        return verdict;
      },
    };
    routes = Fastify({ logger: false });
    await routes.register(async (v1) => airtelCallbackRoutes(v1, { ctx: t.ctx, settings, pipeline }), {
      prefix: '/v1',
    });
    await routes.listen({ host: '127.0.0.1', port: 0 });
    const base = `http://127.0.0.1:${(routes.server.address() as AddressInfo).port}/v1/payments/callbacks/airtel`;
    // What the operator registers in Airtel's portal.
    fake.setCallbackUrl(callbackUrl({ ...settings, callbackBaseUrl: base }));
  });
  afterAll(async () => {
    await fake?.close();
    await routes?.close();
    await t?.close();
  });

  const db = () => t.ctx.database.db;
  const statusOf = async (transactionId: string) =>
    (await one<{ status: string; reason: string | null; receipt: string | null }>(
      db(),
      sql`select status, failure_reason as reason, provider_reference as receipt from transactions where id = ${transactionId}`,
    ))!;
  const requestOf = async (transactionId: string) =>
    (await one<{ id: string; state: string; providerIds: Record<string, string> }>(
      db(),
      sql`select id, state, provider_ids as "providerIds" from provider_requests where transaction_id = ${transactionId}`,
    ))!;
  /** A buy on a fresh Airtel number, sent by one worker pass (the push goes to the fake). */
  async function buy(amount: string) {
    const transactionId = await placeQueuedBuy(t, airtelNumber(), amount);
    await runPipelineOnce(deps);
    return { transactionId, requestId: (await requestOf(transactionId)).id };
  }
  async function until<T>(what: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 8000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    let value = await what();
    while (!ok(value) && Date.now() < deadline) {
      await settle(50);
      value = await what();
    }
    return value;
  }
  /** The transaction once it is no longer PENDING (callbacks drive it). */
  const settled = (transactionId: string) =>
    until(
      () => statusOf(transactionId),
      (s) => s.status !== 'PENDING',
    );
  /** The reconciliation sweep, once the request is due. */
  const reconcile = async () => {
    await settle(RECONCILE_MS);
    await runPipelineOnce(deps);
  };
  const verdictsOf = (requestId: string) =>
    verdicts.filter((v) => v.requestId === requestId).map((v) => v.verdict);

  it('a hashed callback without an amount is confirmed by enquiry and applied: one prompt, SUCCESS', async () => {
    const prompts = fake.processed('ussd-push');
    const { transactionId, requestId } = await buy('100');
    expect((await requestOf(transactionId)).providerIds).toEqual({ airtelTransactionId: requestId });
    expect(await settled(transactionId)).toMatchObject({
      status: 'SUCCESS',
    });
    expect(verdictsOf(requestId)).toEqual(['applied']);
    // The fake notes its callback once our route has answered it.
    const sent = (await until(
      async () =>
        fake.callbacks.find((c) => (c.body as { transaction: { id: string } }).transaction.id === requestId),
      (c) => c !== undefined,
    ))!;
    expect(sent.status).toBe(200);
    expect(sent.body).toEqual({
      transaction: expect.not.objectContaining({ amount: expect.anything() }),
      hash: expect.any(String),
    });
    expect(fake.processed('ussd-push')).toBe(prompts + 1);
  });

  it('a wrong hash is recorded, not used; the enquiry settles the order all the same', async () => {
    const { transactionId, requestId } = await buy('4004');
    await until(
      async () =>
        fake.callbacks.filter((c) => JSON.stringify(c.body).includes(requestId) && c.status === 200).length,
      (n) => n > 0,
    );
    expect(verdictsOf(requestId)).toEqual([]);
    expect((await statusOf(transactionId)).status).toBe('PENDING');
    const noted = await rows<{ note: string }>(
      db(),
      sql`select note from provider_exchanges where provider_request_id is null and note like ${`%hash mismatch for ${requestId}%`}`,
    );
    expect(noted).toHaveLength(1);
    await reconcile();
    expect((await statusOf(transactionId)).status).toBe('SUCCESS');
  });

  it('a callback that contradicts the enquiry changes nothing; the enquiry fails the order', async () => {
    const { transactionId, requestId } = await buy('6004');
    await until(
      async () => verdictsOf(requestId),
      (v) => v.length > 0,
    );
    expect(verdictsOf(requestId)).toEqual(['contradicted']);
    expect((await statusOf(transactionId)).status).toBe('PENDING');
    await reconcile();
    expect(await statusOf(transactionId)).toMatchObject({
      status: 'FAILED',
      reason: 'Airtel TF: Transaction failed',
    });
  });

  it('TIP for a while: the enquiry waits (PENDING), then the callback settles it', async () => {
    const { transactionId, requestId } = await buy('4001');
    await reconcile();
    expect((await statusOf(transactionId)).status).toBe('PENDING');
    expect((await requestOf(transactionId)).state).toBe('AWAITING');
    expect(await settled(transactionId)).toMatchObject({
      status: 'SUCCESS',
    });
    expect(verdictsOf(requestId)).toEqual(['applied']);
  });

  it('a 200 with success:false fails the collection at once, with no prompt', async () => {
    const prompts = fake.processed('ussd-push');
    const { transactionId } = await buy('4000');
    expect(await statusOf(transactionId)).toMatchObject({
      status: 'FAILED',
      reason: expect.stringContaining('DP00800001005'),
    });
    expect(fake.processed('ussd-push')).toBe(prompts);
  });

  it('a callback sent twice is applied once', async () => {
    const { transactionId, requestId } = await buy('6002');
    expect((await settled(transactionId)).status).toBe('SUCCESS');
    await until(
      async () => verdictsOf(requestId),
      (v) => v.length === 2,
    );
    expect(verdictsOf(requestId)).toEqual(['applied', 'already-final']);
  });

  it('a declined prompt ends CANCELLED', async () => {
    const { transactionId } = await buy('1032');
    expect(await settled(transactionId)).toMatchObject({
      status: 'CANCELLED',
    });
  });

  it('every body under the right token gets 200 and the ack; foreign or unknown ids change nothing', async () => {
    const { transactionId, requestId } = await buy('6001'); // settled by nothing but the enquiry
    const signed = (transaction: Record<string, unknown>) =>
      JSON.stringify({ transaction, hash: callbackHash(HMAC_KEY, JSON.stringify(transaction)) });
    const bodies: [string, string | Buffer, string][] = [
      [path(), 'not json', 'application/json'],
      [path(), '[]', 'application/json'],
      [path(), '', 'application/json'],
      [path(undefined, 'collection'), '{"transaction":{"id":"x","status_code":"XX"}}', 'text/plain'],
      // Daraja's body on Airtel's route.
      [path(), '{"Body":{"stkCallback":{"CheckoutRequestID":"ws_CO_1","ResultCode":0}}}', 'application/json'],
      // Well hashed, but naming our transaction id, not the id sent to Airtel; and an unknown id.
      [path(), signed({ id: transactionId, status_code: 'TS', airtel_money_id: 'X' }), 'application/json'],
      [path(), signed({ id: 'nobody0000', status_code: 'TF', message: 'x' }), 'application/json'],
      // No hash while one is required.
      [path(), JSON.stringify({ transaction: { id: requestId, status_code: 'TS' } }), 'application/json'],
      [path(), Buffer.alloc(200_000, 'a'), 'application/json'],
    ];
    for (const [url, payload, type] of bodies) {
      const res = await routes.inject({ method: 'POST', url, headers: { 'content-type': type }, payload });
      expect(res.statusCode, `${String(payload).slice(0, 60)}`).toBe(200);
      expect(res.json()).toEqual(CALLBACK_ACK);
    }
    expect(verdictsOf(requestId)).toEqual([]);
    expect((await statusOf(transactionId)).status).toBe('PENDING');
    await reconcile();
    expect((await statusOf(transactionId)).status).toBe('SUCCESS');
  });

  /** A sell of `units` (KES 40 each) by a fresh Airtel customer, sent by one worker pass. */
  async function sell(units: string) {
    const partner = await createPartner(t);
    const msisdn = airtelNumber();
    const customerId = await insertCustomer(t, partner, { msisdn });
    const stockId = (await ensureCatalog(t)).sell;
    await insertHolding(t, partner, customerId, stockId, units);
    const placed = await db().transaction((tx) =>
      placeSell(
        tx,
        { organizationId: partner.organizationId, customerId, msisdn, stockId, quantity: units },
        t.ctx,
      ),
    );
    const transactionId = placed.payments[0]!.id;
    await runPipelineOnce(deps);
    return { transactionId, requestId: (await requestOf(transactionId)).id };
  }

  it('a sell pays out once; the payout callback is confirmed by enquiry: SUCCESS with the receipt', async () => {
    const payouts = fake.processed('disbursement');
    const { transactionId, requestId } = await sell('25');
    expect(await settled(transactionId)).toMatchObject({
      status: 'SUCCESS',
      receipt: expect.stringMatching(/^disbursement-/),
    });
    expect(verdictsOf(requestId)).toEqual(['applied']);
    expect(fake.processed('disbursement')).toBe(payouts + 1);
    const sent = fake.requests.filter((r) => r.operation === 'disbursement').at(-1)!;
    expect(sent.body).toMatchObject({ transaction: { amount: 1000, id: requestId } });
  });

  it('a payout refused at once (200, success:false) goes to the operator; its confirmed TF makes it FAILED, never re-sent', async () => {
    const payouts = fake.processed('disbursement');
    fake.queue('disbursement', 'insufficient');
    const { transactionId, requestId } = await sell('10');
    expect(await requestOf(transactionId)).toMatchObject({ state: 'OPERATOR' });
    expect((await statusOf(transactionId)).status).toBe('PENDING');
    // Its TF callback names our request id (Airtel's transaction id is ours): confirmed by the
    // enquiry, the refusal is recorded as FAILED (not a guess); nothing is sent again.
    await until(
      async () => verdictsOf(requestId),
      (v) => v.length > 0,
    );
    await reconcile();
    expect((await statusOf(transactionId)).status).toBe('FAILED');
    expect(fake.processed('disbursement')).toBe(payouts + 1);
  });

  it('a wrong token or a bad label is the unknown route 404', async () => {
    for (const url of [
      path(`${TOKEN.slice(0, -1)}${TOKEN.endsWith('x') ? 'y' : 'x'}`),
      path('short'),
      path(undefined, 'a/b'),
      path(undefined, 'bad.label'),
    ]) {
      const res = await routes.inject({ method: 'POST', url, payload: {} });
      expect(res.statusCode, url).toBe(404);
      // Our guard's answer where the route matched (the full app's not-found handler does the same).
      if (!url.endsWith('a/b')) expect(res.json()).toEqual({ error: 'Not Found' });
    }
  });
});

describe('Airtel callback routes: the source allowlist', () => {
  it('answers 403 outside the allowlist under the right token, 404 under a wrong one', async () => {
    const t = await buildTestApp('pglite');
    const app = Fastify({ logger: false });
    const settings: AirtelSettings = {
      ...testConfig('http://127.0.0.1:9', 'http://x', { callbackToken: TOKEN }),
      reconcileAfterMs: 1000,
      callbackAllowedIps: ['10.1.0.0/16'],
    };
    await app.register(
      async (v1) =>
        airtelCallbackRoutes(v1, { ctx: t.ctx, settings, pipeline: callbackPipelineFor(t.ctx, silent) }),
      { prefix: '/v1' },
    );
    try {
      const outside = await app.inject({ method: 'POST', url: path(), payload: {} });
      expect(outside.statusCode).toBe(403);
      expect((await app.inject({ method: 'POST', url: path('nope'), payload: {} })).statusCode).toBe(404);
      const inside = await app.inject({
        method: 'POST',
        url: path(),
        payload: {},
        remoteAddress: '10.1.2.3',
      });
      expect(inside.statusCode).toBe(200);
      expect(inside.json()).toEqual(CALLBACK_ACK);
    } finally {
      await app.close();
      await t.close();
    }
  });
});
