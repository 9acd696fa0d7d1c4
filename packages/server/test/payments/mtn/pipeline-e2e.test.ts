import type { AddressInfo } from 'node:net';
import { type FakeMtn, startFakeMtn } from '@partner-api/fakes';
import { buildTestApp, type TestApp } from '@partner-api/testkit/app.ts';
import { sql } from 'drizzle-orm';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { one, rows } from '../../../src/db/query.ts';
import { money } from '../../../src/lib/money.ts';
import { createTransaction } from '../../../src/services/payments/create-transaction.ts';
import type { PaymentAdapter } from '../../../src/services/payments/pipeline/adapter.ts';
import { callbackPipelineFor, pipelineDeps } from '../../../src/services/payments/pipeline/start.ts';
import { runPipelineOnce } from '../../../src/services/payments/pipeline/worker.ts';
import { createMtnPaymentAdapter } from '../../../src/services/payments/providers/mtn/adapter.ts';
import { mtnCallbackRoutes } from '../../../src/services/payments/providers/mtn/routes.ts';
import { mtnReferenceId } from '../../../src/services/payments/providers/mtn/settings.ts';
import { placeQueuedBuy } from '../pipeline/support.ts';
import { mtnTestConfig } from './harness.ts';

const log = { info: () => {}, warn: () => {}, error: () => {} };

/**
 * The real pipeline on PGlite (not the shared PostgreSQL: the adapter name `mtn` is not per suite)
 * driving the MTN adapter against the fake, whose callbacks reach the real callback routes.
 */
describe('MTN on the real pipeline: buy collections end to end', () => {
  let t: TestApp;
  let fake: FakeMtn;
  let routes: FastifyInstance;

  beforeEach(async () => {
    t = await buildTestApp('pglite', { SANDBOX_SETTLE_MS: '0' });
    // Uganda, routed by the number; test-only: in the catalog's currency (KES), so the fake takes KES.
    fake = await startFakeMtn({ targetEnvironment: 'mtnuganda', currency: 'KES', callbackDelayMs: 30 });
    // The pipeline reads the registry when it is made: the adapter is bound once the routes listen.
    let mtn: PaymentAdapter | undefined;
    t.ctx.registry = (network, country) =>
      network === 'MTN_MOMO' && (!country || country === 'UG') ? mtn : undefined;
    routes = Fastify({ logger: false });
    const settings = mtnTestConfig(fake.url, 'http://127.0.0.1:1', {
      targetEnvironment: 'mtnuganda',
      currency: 'KES',
      countryCode: '256',
      country: 'UG',
    });
    await routes.register(mtnCallbackRoutes, {
      prefix: '/v1',
      ctx: t.ctx,
      settings,
      pipeline: callbackPipelineFor(t.ctx, log),
    });
    await routes.listen({ host: '127.0.0.1', port: 0 });
    const url = `http://127.0.0.1:${(routes.server.address() as AddressInfo).port}`;
    mtn = createMtnPaymentAdapter({ ...settings, callbackBaseUrl: `${url}/v1/payments/callbacks/mtn` });
  });
  afterEach(async () => {
    await fake.close();
    await routes.close();
    await t.close();
  });

  const status = async (transactionId: string) =>
    (
      await one<{ status: string }>(
        t.ctx.database.db,
        sql`select status from transactions where id = ${transactionId}`,
      )
    )?.status;
  async function until(check: () => Promise<boolean>, timeoutMs = 5000) {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error('timed out');
      await new Promise((r) => setTimeout(r, 25));
    }
  }
  const answered = (count: number) =>
    until(async () => fake.callbacks.filter((c) => c.status !== null).length >= count);

  it('the callback, confirmed by the status query, pays the collection; a repeat changes nothing', async () => {
    fake.queue('request-to-pay', 'duplicate-callback');
    const transactionId = await placeQueuedBuy(t, '256772000101', '500');
    await runPipelineOnce(pipelineDeps(t.ctx, log));
    await answered(2);
    await until(async () => (await status(transactionId)) === 'SUCCESS');
    expect(fake.processed('request-to-pay')).toBe(1);
    const request = await one<{ id: string; providerIds: Record<string, string> }>(
      t.ctx.database.db,
      sql`select id, provider_ids as "providerIds" from provider_requests where transaction_id = ${transactionId}`,
    );
    expect(request!.providerIds).toEqual({
      referenceId: mtnReferenceId(request!.id),
      externalId: request!.id,
    });
    const kinds = await rows<{ kind: string }>(
      t.ctx.database.db,
      sql`select kind from provider_exchanges where provider_request_id = ${request!.id} order by at`,
    );
    expect(kinds.filter((k) => k.kind === 'callback')).toHaveLength(2);
  });

  it('a contradicting callback changes nothing; a rejected prompt ends CANCELLED', async () => {
    // By amount (MTN_MAGIC_AMOUNTS), not by the fake's queue: one pass sends both at once, in no
    // promised order.
    const forged = await placeQueuedBuy(t, '256772000102', '6004');
    const rejected = await placeQueuedBuy(t, '256772000103', '1032');
    await runPipelineOnce(pipelineDeps(t.ctx, log));
    await answered(2);
    await until(async () => (await status(rejected)) === 'CANCELLED');
    expect(await status(forged)).toBe('PENDING');
  });

  it('a send whose answer was lost: the paying callback adopts the request, the query confirms it', async () => {
    fake.queue('request-to-pay', 'reset');
    const transactionId = await placeQueuedBuy(t, '256772000104', '500');
    await runPipelineOnce(pipelineDeps(t.ctx, log));
    await answered(1);
    await until(async () => (await status(transactionId)) === 'SUCCESS');
    expect(fake.processed('request-to-pay')).toBe(1);
    // Only the adoption stores the reference here: the send's answer never came back.
    const request = await one<{ id: string; providerIds: Record<string, string> }>(
      t.ctx.database.db,
      sql`select id, provider_ids as "providerIds" from provider_requests where transaction_id = ${transactionId}`,
    );
    expect(request!.providerIds.referenceId).toBe(mtnReferenceId(request!.id));
    const notes = await rows<{ note: string | null }>(
      t.ctx.database.db,
      sql`select note from provider_exchanges where provider_request_id = ${request!.id} and kind = 'decision'`,
    );
    expect(notes.map((n) => n.note)).toEqual([
      expect.stringMatching(/^UNCERTAIN/),
      expect.stringMatching(/^callback confirmed by query/),
    ]);
  });

  /** A payout (OUTGOING) on a fresh buy whose collection is set aside, as a sell's proceeds would be. */
  async function queuedPayout(msisdn: string) {
    const collection = await placeQueuedBuy(t, msisdn, '500');
    const db = t.ctx.database.db;
    await db.execute(sql`update provider_requests set state = 'DONE' where transaction_id = ${collection}`);
    const order = await one<{ orderId: string; organizationId: string }>(
      db,
      sql`select order_id as "orderId", organization_id as "organizationId" from transactions where id = ${collection}`,
    );
    const ref = await db.transaction((tx) =>
      createTransaction({
        tx,
        deps: t.ctx,
        input: { ...order!, type: 'OUTGOING', amount: money('400.00', 'KES'), msisdn },
      }),
    );
    return ref.id;
  }

  it('a payout: the transfer callback, confirmed by the transfer status, settles it', async () => {
    const transactionId = await queuedPayout('256772000105');
    await runPipelineOnce(pipelineDeps(t.ctx, log));
    await answered(1);
    await until(async () => (await status(transactionId)) === 'SUCCESS');
    expect(fake.processed('transfer')).toBe(1);
    expect(fake.requests.find((r) => r.operation === 'transfer')?.body).toMatchObject({
      amount: '400',
      currency: 'KES',
      payee: { partyIdType: 'MSISDN', partyId: '256772000105' },
    });
  });

  it('a payout answered 500: queried (404, nothing done), sent again with the same reference, paid once', async () => {
    fake.queue('transfer', 'http-500');
    const transactionId = await queuedPayout('256772000106');
    await runPipelineOnce(pipelineDeps(t.ctx, log));
    expect(await status(transactionId)).toBe('PENDING');
    // Past the backoff: the worker queries first, then sends again.
    await runPipelineOnce({ ...pipelineDeps(t.ctx, log), clock: () => new Date(Date.now() + 60_000) });
    await answered(1);
    await until(async () => (await status(transactionId)) === 'SUCCESS');
    const transfers = fake.requests.filter((r) => r.operation === 'transfer');
    expect(transfers.map((r) => r.status)).toEqual([500, 202]);
    expect(new Set(transfers.map((r) => r.headers['x-reference-id'])).size).toBe(1);
    expect(fake.requests.filter((r) => r.operation === 'transfer-status').map((r) => r.status)).toContain(
      404,
    );
    expect(fake.processed('transfer')).toBe(1);
  });
});
