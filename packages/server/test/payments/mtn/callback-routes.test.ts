import { randomBytes, randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { type FakeMtn, startFakeMtn } from '@partner-api/fakes';
import { tempDataDir } from '@partner-api/testkit/app.ts';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.ts';
import { money } from '../../../src/lib/money.ts';
import { JSON_BODY_LIMIT } from '../../../src/plugins/body-parsing.ts';
import { createRuntime, type Runtime } from '../../../src/runtime.ts';
import type { CallbackPipeline, ClaimedOutcome } from '../../../src/services/payments/callback-pipeline.ts';
import type { PaymentAdapter, ProviderRequest } from '../../../src/services/payments/pipeline/adapter.ts';
import { createMtnPaymentAdapter } from '../../../src/services/payments/providers/mtn/adapter.ts';
import { mtnCallbackRoutes } from '../../../src/services/payments/providers/mtn/routes.ts';
import { type MtnConfig, mtnReferenceId } from '../../../src/services/payments/providers/mtn/settings.ts';
import { mtnTestConfig } from './harness.ts';

const TOKEN = randomBytes(24).toString('base64url');

/**
 * IN-MEMORY STAND-IN for the payment pipeline, as in the Daraja route test: it keeps requests in a
 * map and follows handleCallback's documented rule (query the adapter, apply only when the query's
 * final status equals the claim, report a contradiction). The adapter, the fake and the routes are real.
 */
function standInPipeline(adapter: () => PaymentAdapter) {
  const requests = new Map<string, ProviderRequest>();
  const final = new Map<string, string>();
  const calls = { handled: [] as [string, ClaimedOutcome, string][], unmatched: [] as string[] };
  let failLookups = false;
  const pipeline: CallbackPipeline = {
    async findRequestByProviderId(adapterName, key, value) {
      expect(adapterName).toBe('mtn');
      if (failLookups) throw new Error('store down');
      const found = [...requests.values()].find((r) => r.providerIds[key] === value);
      return found && { id: found.id, transactionId: found.transactionId };
    },
    async handleCallback({ requestId, claimed, exchange }) {
      expect(JSON.stringify(exchange)).not.toContain(TOKEN);
      const request = requests.get(requestId)!;
      const verdict = await (async () => {
        if (final.has(requestId)) return 'already-final' as const;
        const answer = await adapter().query(request);
        if (answer.kind !== 'final') return 'unconfirmed' as const;
        if (answer.status !== claimed.status) return 'contradicted' as const;
        final.set(requestId, answer.status);
        return 'applied' as const;
      })();
      calls.handled.push([requestId, claimed, verdict]);
      return verdict;
    },
    async recordQueryAnswer() {
      throw new Error('MTN has no asynchronous query answers');
    },
    async recordUnmatched(_adapter, exchange, reason) {
      expect(JSON.stringify(exchange)).not.toContain(TOKEN);
      calls.unmatched.push(reason);
    },
  };
  return { pipeline, requests, calls, failLookups: (on: boolean) => (failLookups = on) };
}

async function startRoutes(settings: MtnConfig, pipeline: CallbackPipeline) {
  const config = loadConfig({ DATA_DIR: tempDataDir(), LOG_LEVEL: 'silent' });
  const ctx = await createRuntime(config, { storePath: 'memory://', rateLimitPrefix: randomUUID() });
  const app = Fastify({ logger: false });
  await app.register(mtnCallbackRoutes, { prefix: '/v1', ctx, settings, pipeline });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  return { app, ctx, url };
}

const metric = async (ctx: Runtime, outcome: string) => {
  const values = (await ctx.metrics.paymentCallbacks.get()).values;
  return values.find((v) => v.labels.outcome === outcome)?.value ?? 0;
};

describe.each(['POST', 'PUT'] as const)('MTN callback routes (%s), end to end with the fake', (method) => {
  let fake: FakeMtn;
  let app: FastifyInstance;
  let ctx: Runtime;
  let url: string;
  let mtn: PaymentAdapter;
  let standIn: ReturnType<typeof standInPipeline>;

  beforeAll(async () => {
    fake = await startFakeMtn({ callbackDelayMs: 20, callbackMethod: method });
    standIn = standInPipeline(() => mtn);
    const placeholder = mtnTestConfig(fake.url, 'http://127.0.0.1:1', { callbackToken: TOKEN });
    const started = await startRoutes(placeholder, standIn.pipeline);
    ({ app, ctx, url } = started);
    mtn = createMtnPaymentAdapter({ ...placeholder, callbackBaseUrl: `${url}/v1/payments/callbacks/mtn` });
  });
  afterAll(async () => {
    await fake.close();
    await app.close();
    await ctx.close();
  });
  beforeEach(() => {
    standIn.calls.handled.length = 0;
    standIn.calls.unmatched.length = 0;
  });

  async function send(operation: 'COLLECT' | 'DISBURSE', amount: string, msisdn = '+46733123499') {
    const request: ProviderRequest = {
      id: `cm${randomBytes(12).toString('hex').slice(0, 23)}`,
      transactionId: `cm${randomBytes(12).toString('hex').slice(0, 23)}`,
      operation,
      amount: money(amount, 'EUR'),
      msisdn,
      providerIds: {},
      attempts: 0,
      createdAt: new Date(),
    };
    const sent = await mtn.send(request);
    if (sent.kind !== 'accepted') throw new Error(`${sent.kind}: ${sent.reason}`);
    const stored = { ...request, providerIds: sent.providerIds };
    standIn.requests.set(request.id, stored);
    return stored;
  }
  /** Waits until `count` callbacks sent after index `from` have been answered by our route. */
  async function answered(from: number, count = 1) {
    const deadline = Date.now() + 5000;
    while (fake.callbacks.slice(from).filter((c) => c.status !== null).length < count) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${count} callback(s)`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }
  const post = (path: string, body: string) =>
    fetch(`${url}${path}`, { method, headers: { 'content-type': 'application/json' }, body });

  it('a paid request-to-pay: matched by the path, confirmed by the status query, applied; empty 200', async () => {
    const before = fake.callbacks.length;
    const r = await send('COLLECT', '100');
    await answered(before);
    expect(fake.callbacks.at(-1)).toMatchObject({ method, status: 200 });
    expect(standIn.calls.handled).toEqual([
      [r.id, { status: 'SUCCESS', receipt: expect.stringMatching(/^\d+$/) }, 'applied'],
    ]);
  });

  it('a callback sent twice is applied once', async () => {
    const before = fake.callbacks.length;
    const r = await send('COLLECT', '6002');
    await answered(before, 2);
    expect(standIn.calls.handled.map(([id, , v]) => [id, v])).toEqual([
      [r.id, 'applied'],
      [r.id, 'already-final'],
    ]);
  });

  it('a forged callback (the status says otherwise) is contradicted: nothing applied', async () => {
    const before = fake.callbacks.length;
    const r = await send('COLLECT', '6004');
    await answered(before);
    expect(standIn.calls.handled).toEqual([
      [r.id, expect.objectContaining({ status: 'SUCCESS' }), 'contradicted'],
    ]);
    expect(await metric(ctx, 'contradicted')).toBeGreaterThan(0);
  });

  it('a rejected prompt claims CANCELLED with its reason, confirmed; a sandbox number FAILED', async () => {
    let before = fake.callbacks.length;
    await send('COLLECT', '1032');
    await answered(before);
    expect(standIn.calls.handled[0]).toEqual([
      expect.any(String),
      { status: 'CANCELLED', reason: expect.stringMatching(/^MTN APPROVAL_REJECTED: /) },
      'applied',
    ]);
    before = fake.callbacks.length;
    await send('COLLECT', '100', '46733123455');
    await answered(before);
    expect(standIn.calls.handled[1]?.[1]).toEqual({
      status: 'FAILED',
      reason: expect.stringMatching(/^MTN PAYER_NOT_FOUND: /),
    });
    expect(standIn.calls.handled[1]?.[2]).toBe('applied');
  });

  it('a transfer callback is confirmed by the transfer status', async () => {
    const before = fake.callbacks.length;
    const r = await send('DISBURSE', '500');
    await answered(before);
    expect(fake.callbacks.at(-1)?.body).toHaveProperty('payee');
    expect(standIn.calls.handled).toEqual([
      [r.id, expect.objectContaining({ status: 'SUCCESS' }), 'applied'],
    ]);
  });

  it('a wrong token, or a reference that is not a UUID, is the unknown route: 404, nothing handled', async () => {
    const ref = randomUUID();
    for (const path of [
      `/v1/payments/callbacks/mtn/${'x'.repeat(TOKEN.length)}/${ref}`,
      `/v1/payments/callbacks/mtn/${TOKEN.slice(1)}/${ref}`,
      `/v1/payments/callbacks/mtn/${TOKEN}/not-a-uuid`,
    ]) {
      const res = await post(path, '{"status":"SUCCESSFUL"}');
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({ error: expect.any(String) });
    }
    expect(standIn.calls.handled).toEqual([]);
    expect(standIn.calls.unmatched).toEqual([]);
  });

  it('under the right token: a malformed body, an unknown reference, ids that disagree get 200, recorded', async () => {
    const malformed = await post(`/v1/payments/callbacks/mtn/${TOKEN}/${randomUUID()}`, '{"status":"PAID"');
    expect(malformed.status).toBe(200);
    expect(await malformed.text()).toBe('');
    const unknown = await post(
      `/v1/payments/callbacks/mtn/${TOKEN}/${randomUUID()}`,
      '{"status":"SUCCESSFUL"}',
    );
    expect(unknown.status).toBe(200);
    // A real request's reference with another request's externalId: refused, never handled.
    const before = fake.callbacks.length;
    const r = await send('COLLECT', '6001');
    const body = JSON.stringify({ status: 'SUCCESSFUL', externalId: 'cmsomeoneelse', amount: '6001' });
    const disagree = await post(`/v1/payments/callbacks/mtn/${TOKEN}/${mtnReferenceId(r.id)}`, body);
    expect(disagree.status).toBe(200);
    expect(fake.callbacks.length).toBe(before);
    // An unknown reference is looked up again for 2 s (a send's commit may lag): past the 1.5 s ack.
    const deadline = Date.now() + 5000;
    while (standIn.calls.unmatched.length < 3 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    expect(standIn.calls.unmatched).toHaveLength(3);
    expect(standIn.calls.unmatched).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^malformed: body: not JSON/),
        expect.stringMatching(/^unmatched referenceId /),
        expect.stringMatching(/^externalId cmsomeoneelse is not that of the request/),
      ]),
    );
    expect(standIn.calls.handled).toEqual([]);
  }, 15_000);

  it('a body over the size limit under the right token gets the empty 200, counted malformed', async () => {
    const before = await metric(ctx, 'malformed');
    const res = await post(
      `/v1/payments/callbacks/mtn/${TOKEN}/${randomUUID()}`,
      `"${'x'.repeat(JSON_BODY_LIMIT + 10)}"`,
    );
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('');
    expect(await metric(ctx, 'malformed')).toBe(before + 1);
  });

  it('a store that fails still answers 200 (reconciliation settles it later)', async () => {
    standIn.failLookups(true);
    try {
      const res = await post(`/v1/payments/callbacks/mtn/${TOKEN}/${randomUUID()}`, '{"status":"FAILED"}');
      expect(res.status).toBe(200);
      expect(await metric(ctx, 'error')).toBeGreaterThan(0);
    } finally {
      standIn.failLookups(false);
    }
  });
});

describe('MTN callback routes: source allowlist', () => {
  it('a source outside MTN_CALLBACK_ALLOWED_IPS gets 403 and nothing is handled', async () => {
    const standIn = standInPipeline(() => {
      throw new Error('not reached');
    });
    const settings = mtnTestConfig('http://127.0.0.1:1', 'http://127.0.0.1:1', {
      callbackToken: TOKEN,
      callbackAllowedIps: ['203.0.113.0/24'],
    });
    const { app, ctx, url } = await startRoutes(settings, standIn.pipeline);
    try {
      const res = await fetch(`${url}/v1/payments/callbacks/mtn/${TOKEN}/${randomUUID()}`, {
        method: 'POST',
        body: '{"status":"SUCCESSFUL"}',
      });
      expect(res.status).toBe(403);
      expect(standIn.calls.unmatched).toEqual([]);
    } finally {
      await app.close();
      await ctx.close();
    }
  });
});
