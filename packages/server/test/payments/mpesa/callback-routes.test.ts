import { randomBytes, randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { type FakeDaraja, startFakeDaraja } from '@partner-api/fakes';
import { tempDataDir } from '@partner-api/testkit/app.ts';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../../src/app.ts';
import { loadConfig } from '../../../src/config.ts';
import { money } from '../../../src/lib/money.ts';
import { createRuntime, type Runtime } from '../../../src/runtime.ts';
import type { CallbackPipeline, ClaimedOutcome } from '../../../src/services/payments/callback-pipeline.ts';
import type {
  PaymentAdapter,
  ProviderRequest,
  QueryResult,
} from '../../../src/services/payments/pipeline/adapter.ts';
import { createDarajaPaymentAdapter } from '../../../src/services/payments/providers/mpesa/adapter.ts';
import { CALLBACK_ACK } from '../../../src/services/payments/providers/mpesa/callbacks.ts';
import { createMpesaAdapter } from '../../../src/services/payments/providers/mpesa/client.ts';
import { testConfig } from './harness.ts';

/**
 * IN-MEMORY STAND-IN for the payment pipeline, so that these tests exercise the routes alone. It
 * keeps requests in a map and follows the documented rule of handleCallback: query the adapter,
 * apply only when the query's final status equals the claim, report a contradiction. The real
 * pipeline's callbacks are tested in `payments/pipeline/`.
 */
function standInPipeline(adapter: () => PaymentAdapter) {
  const requests = new Map<string, ProviderRequest>();
  const final = new Map<string, string>();
  const calls: {
    handled: [string, ClaimedOutcome, string][];
    answers: [string, QueryResult][];
    unmatched: string[];
  } = { handled: [], answers: [], unmatched: [] };
  const queues = new Map<string, Promise<unknown>>();
  const handle: CallbackPipeline['handleCallback'] = async ({ requestId, claimed, exchange }) => {
    expect(exchange.path).not.toContain(TOKEN);
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
  };
  const pipeline: CallbackPipeline = {
    async findRequestByProviderId(adapterName, key, value) {
      expect(adapterName).toBe('mpesa');
      // B2C: OriginatorConversationID is our request id, so it matches even before any id was saved.
      const found = [...requests.values()].find(
        (r) => r.providerIds[key] === value || (key === 'originatorConversationId' && r.id === value),
      );
      return found && { id: found.id, transactionId: found.transactionId };
    },
    handleCallback(input) {
      // One callback of a request at a time, as the real pipeline's row lock makes it.
      const next = (queues.get(input.requestId) ?? Promise.resolve()).then(() => handle(input));
      queues.set(
        input.requestId,
        next.catch(() => {}),
      );
      return next;
    },
    async recordQueryAnswer(requestId, result) {
      calls.answers.push([requestId, result]);
    },
    async recordUnmatched(_adapter, exchange, reason) {
      expect(exchange.path).not.toContain(TOKEN);
      calls.unmatched.push(reason);
    },
  };
  return { pipeline, requests, calls };
}

const TOKEN = randomBytes(24).toString('base64url');
const MPESA_ENV = {
  MPESA_CONSUMER_KEY: 'fake-consumer-key',
  MPESA_CONSUMER_SECRET: 'fake-consumer-secret',
  MPESA_SHORTCODE: '174379',
  MPESA_PASSKEY: 'unused-here',
  MPESA_B2C_SHORTCODE: '600992',
  MPESA_INITIATOR_NAME: 'testapi',
  MPESA_SECURITY_CREDENTIAL: 'fake-security-credential',
  MPESA_CALLBACK_TOKEN: TOKEN,
};

async function startApp(env: Record<string, string>, pipeline: CallbackPipeline) {
  const config = loadConfig({ DATA_DIR: tempDataDir(), LOG_LEVEL: 'silent', ...MPESA_ENV, ...env });
  const ctx = await createRuntime(config, { storePath: 'memory://', rateLimitPrefix: randomUUID() });
  ctx.callbackPipeline = pipeline;
  const app = await buildApp(ctx, { logger: false });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  return { app, ctx, url };
}

const path = (kind: string, token = TOKEN) => `/v1/payments/callbacks/daraja/${token}/${kind}`;

describe('Daraja callback routes, end to end with the fake (pipeline stand-in)', () => {
  let fake: FakeDaraja;
  let app: FastifyInstance;
  let ctx: Runtime;
  let daraja: PaymentAdapter;
  let standIn: ReturnType<typeof standInPipeline>;

  beforeAll(async () => {
    fake = await startFakeDaraja({ callbackDelayMs: 20, lateCallbackMs: 300 });
    standIn = standInPipeline(() => daraja);
    const started = await startApp({ RATE_LIMIT_GLOBAL: '6/60s' }, standIn.pipeline);
    app = started.app;
    ctx = started.ctx;
    const config = testConfig(fake.url, `${started.url}/v1/payments/callbacks/daraja`, {
      callbackToken: TOKEN,
    });
    daraja = createDarajaPaymentAdapter(createMpesaAdapter(config), { reconcileAfterMs: 1000 });
  });
  afterAll(async () => {
    await fake.close();
    await app.close();
    await ctx.close();
  });
  beforeEach(() => {
    standIn.calls.handled.length = 0;
    standIn.calls.answers.length = 0;
    standIn.calls.unmatched.length = 0;
  });

  const newRequest = (operation: 'COLLECT' | 'DISBURSE', amount: string): ProviderRequest => ({
    id: randomUUID(),
    transactionId: `cm${randomBytes(12).toString('hex').slice(0, 23)}`,
    operation,
    amount: money(amount, 'KES'),
    msisdn: '254708374149',
    providerIds: {},
    attempts: 0,
    createdAt: new Date(),
  });
  async function send(operation: 'COLLECT' | 'DISBURSE', amount: string) {
    const request = newRequest(operation, amount);
    const sent = await daraja.send(request);
    if (sent.kind !== 'accepted') throw new Error(`${sent.kind}: ${sent.reason}`);
    const stored = { ...request, providerIds: sent.providerIds };
    standIn.requests.set(request.id, stored);
    return stored;
  }
  const callbacksSoFar = () => fake.callbacks.length;
  /** Waits until `count` callbacks of `kind` sent after index `from` have been answered by our route. */
  async function answered(kind: string, from: number, count = 1) {
    const deadline = Date.now() + 5000;
    const done = () => fake.callbacks.slice(from).filter((c) => c.kind === kind && c.status !== null);
    while (done().length < count) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${count} ${kind} callback(s)`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  it('an STK callback is matched, confirmed by the query and applied; Daraja gets the ack', async () => {
    const before = callbacksSoFar();
    const r = await send('COLLECT', '100.00');
    await answered('stk', before);
    expect(fake.callbacks.at(-1)).toMatchObject({ kind: 'stk', status: 200 });
    expect(standIn.calls.handled).toEqual([
      [r.id, { status: 'SUCCESS', receipt: expect.stringMatching(/^[A-Z0-9]{10}$/) }, 'applied'],
    ]);
  });

  it('a callback sent twice is applied once', async () => {
    const before = callbacksSoFar();
    const r = await send('COLLECT', '6002.00');
    await answered('stk', before, 2);
    // The two are handled concurrently: whichever finishes first, one applies and one finds it final.
    expect(standIn.calls.handled.map(([id, , v]) => `${id} ${v}`).sort()).toEqual([
      `${r.id} already-final`,
      `${r.id} applied`,
    ]);
  });

  it('a forged callback (the query says otherwise) is contradicted: nothing applied', async () => {
    const before = callbacksSoFar();
    const r = await send('COLLECT', '6004.00');
    await answered('stk', before);
    expect(standIn.calls.handled).toEqual([
      [r.id, { status: 'SUCCESS', receipt: expect.any(String) }, 'contradicted'],
    ]);
  });

  it('a cancelled prompt: claimed CANCELLED, confirmed', async () => {
    const before = callbacksSoFar();
    await send('COLLECT', '1032.00');
    await answered('stk', before);
    expect(standIn.calls.handled[0]?.[1]).toMatchObject({
      status: 'CANCELLED',
      reason: expect.stringMatching(/^M-Pesa 1032/),
    });
    expect(standIn.calls.handled[0]?.[2]).toBe('applied');
  });

  it('a B2C Result is unconfirmed until Transaction Status answers on status-result', async () => {
    const before = callbacksSoFar();
    const r = await send('DISBURSE', '500.00');
    // The Result, then the Transaction Status answer the stand-in's query asked for.
    await answered('status-result', before);
    expect(standIn.calls.handled).toEqual([
      [r.id, { status: 'SUCCESS', receipt: expect.any(String) }, 'unconfirmed'],
    ]);
    expect(standIn.calls.answers).toEqual([
      [
        r.id,
        {
          kind: 'final',
          status: 'SUCCESS',
          receipt: expect.any(String),
          // What Daraja's record says moved (checked against ours when a receipt is in dispute).
          evidence: { amount: '500' },
          exchanges: [expect.any(Object)],
        },
      ],
    ]);
  });

  describe('the process dies after Daraja accepted, before the answer was saved', () => {
    it('a payout: the retry with the same id is refused as a duplicate (paid once), the Result still matches', async () => {
      const before = callbacksSoFar();
      const paidBefore = fake.processed('b2c-payment');
      const request = newRequest('DISBURSE', '700.00');
      // Saved before sending (the pipeline's commit), then the answer is lost with the process.
      standIn.requests.set(request.id, request);
      expect((await daraja.send(request)).kind).toBe('accepted');
      const retried = await daraja.send({ ...request, attempts: 1 });
      expect(retried).toMatchObject({
        kind: 'accepted',
        providerIds: { originatorConversationId: request.id },
      });
      expect(fake.processed('b2c-payment')).toBe(paidBefore + 1);
      await answered('b2c-result', before);
      expect(standIn.calls.handled[0]?.[0]).toBe(request.id);
    });

    it('a collection: Daraja takes no id of ours, so the callback matches nothing; it is recorded, not applied', async () => {
      const before = callbacksSoFar();
      const request = newRequest('COLLECT', '100.00');
      standIn.requests.set(request.id, request);
      expect((await daraja.send(request)).kind).toBe('accepted');
      await answered('stk', before);
      expect(standIn.calls.handled).toEqual([]);
      expect(standIn.calls.unmatched).toEqual([expect.stringMatching(/^unmatched checkoutRequestId ws_CO_/)]);
      // Its query cannot be made either: the pipeline must not prompt again (docs/payments.md).
      expect(await daraja.query(request)).toMatchObject({ kind: 'unknown' });
    });
  });

  it('a B2C QueueTimeOut is handed over as PENDING (not an outcome)', async () => {
    const before = callbacksSoFar();
    const r = await send('DISBURSE', '6006.00');
    await answered('b2c-timeout', before);
    expect(standIn.calls.handled[0]?.slice(0, 2)).toEqual([
      r.id,
      { status: 'PENDING', reason: expect.any(String) },
    ]);
  });

  it("is not in the partners' OpenAPI document", async () => {
    const doc = (await app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
    expect(Object.keys(doc.paths).filter((p: string) => p.includes('callbacks'))).toEqual([]);
  });

  it('every body under the right token gets 200 and the ack, however malformed; none reaches a verdict', async () => {
    const bodies: [string, string | Buffer, string][] = [
      ['stk', 'not json', 'application/json'],
      ['stk', '[]', 'application/json'],
      ['stk', '', 'application/json'],
      ['stk', '{"Body":{"stkCallback":{"ResultCode":0}}}', 'text/plain'],
      ['b2c-result', '{"Result":{}}', 'application/json'],
      ['b2c-timeout', 'x=1', 'application/x-www-form-urlencoded'],
      [
        'status-result',
        '{"Result":{"ResultType":0,"ResultCode":0,"ResultDesc":"ok","OriginatorConversationID":"a","ConversationID":"b"}}',
        'application/json',
      ],
      ['status-timeout', '{}', 'application/json'],
      ['stk', Buffer.alloc(200_000, 'a'), 'application/json'],
      [
        'stk',
        '{"Body":{"stkCallback":{"MerchantRequestID":"m","CheckoutRequestID":"ws_CO_nobody","ResultCode":1032,"ResultDesc":"x"}}}',
        'application/json',
      ],
    ];
    for (const [kind, payload, type] of bodies) {
      const res = await app.inject({
        method: 'POST',
        url: path(kind),
        headers: { 'content-type': type },
        payload,
      });
      expect(res.statusCode, `${kind} ${String(payload).slice(0, 40)}`).toBe(200);
      expect(res.json()).toEqual(CALLBACK_ACK);
    }
    // Only late callbacks of the earlier tests' own requests may arrive meanwhile.
    for (const [id] of [...standIn.calls.handled, ...standIn.calls.answers])
      expect(standIn.requests.has(id)).toBe(true);
    expect(standIn.calls.unmatched).toHaveLength(bodies.length - 1); // the oversized one never reached a parser
  });

  it('a wrong token or kind is the unknown route 404, and is rate limited like one', async () => {
    const unknown = await app.inject({ method: 'POST', url: '/v1/no/such/route', payload: {} });
    // One character off, never the right token itself (a random token ends in 'x' one time in 64).
    for (const url of [
      path('stk', `${TOKEN.slice(0, -1)}${TOKEN.endsWith('x') ? 'y' : 'x'}`),
      path('stk', 'short'),
      path('mpesa'),
    ]) {
      const res = await app.inject({ method: 'POST', url, payload: {} });
      expect(res.statusCode).toBe(unknown.statusCode);
      expect(res.body).toBe(unknown.body);
      expect(res.body).toBe('{"error":"Not Found"}');
    }
    // The global limit is 6 a minute here: the right token has its own budget (6000 a minute by
    // default), a wrong one spends the global one.
    for (let i = 0; i < 8; i++) {
      const ok = await app.inject({ method: 'POST', url: path('stk'), payload: {} });
      expect(ok.statusCode).toBe(200);
      expect(ok.headers['ratelimit-limit']).toBe('6000');
    }
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++)
      statuses.push(
        (await app.inject({ method: 'POST', url: path('stk', 'wrong'), payload: {} })).statusCode,
      );
    expect(statuses).toContain(429);
    expect((await app.inject({ method: 'POST', url: path('stk'), payload: {} })).statusCode).toBe(200);
  });
});

describe('Daraja callback routes: their own rate limit', () => {
  it("the right token is limited by PROVIDER_CALLBACK_RATE_LIMIT per source, apart from the partners' budget", async () => {
    const pipeline = standInPipeline(() => {
      throw new Error('no adapter needed');
    });
    const { app } = await startApp(
      { RATE_LIMIT_GLOBAL: '100/60s', PROVIDER_CALLBACK_RATE_LIMIT: '5/60s' },
      pipeline.pipeline,
    );
    try {
      const statuses: number[] = [];
      let refused: { headers: Record<string, unknown>; body: string } | undefined;
      for (let i = 0; i < 7; i++) {
        const res = await app.inject({ method: 'POST', url: path('stk'), payload: {} });
        statuses.push(res.statusCode);
        if (res.statusCode === 429) refused = res;
      }
      expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429]);
      expect(JSON.parse(refused!.body)).toEqual({
        error: 'Too Many Requests',
        message: 'Too many provider callbacks from this address; try again shortly.',
      });
      expect(refused!.headers['retry-after']).toBeDefined();
      // The partners' budget was not spent by the callbacks.
      const other = await app.inject({ method: 'GET', url: '/v1/no/such/route' });
      expect(other.headers['ratelimit-remaining']).toBe('99');
    } finally {
      await app.close();
    }
  });
});

describe('Daraja callback routes: the source allowlist', () => {
  it('answers 403 outside the allowlist under the right token, 404 under a wrong one', async () => {
    const pipeline = standInPipeline(() => {
      throw new Error('never asked');
    });
    const { app, ctx } = await startApp(
      { MPESA_CALLBACK_ALLOWED_IPS: '196.201.214.0/24' },
      pipeline.pipeline,
    );
    try {
      const outside = await app.inject({ method: 'POST', url: path('stk'), payload: {} });
      expect(outside.statusCode).toBe(403);
      expect(outside.json()).toEqual({ error: 'Forbidden' });
      const wrong = await app.inject({ method: 'POST', url: path('stk', 'nope'), payload: {} });
      expect(wrong.statusCode).toBe(404);
      const inside = await app.inject({
        method: 'POST',
        url: path('stk'),
        payload: {},
        remoteAddress: '196.201.214.200',
      });
      expect(inside.statusCode).toBe(200);
    } finally {
      await app.close();
      await ctx.close();
    }
  });

  it('are not registered without M-Pesa configured', async () => {
    const config = loadConfig({ DATA_DIR: tempDataDir(), LOG_LEVEL: 'silent' });
    const ctx = await createRuntime(config, { storePath: 'memory://', rateLimitPrefix: randomUUID() });
    ctx.callbackPipeline = standInPipeline(() => {
      throw new Error('never asked');
    }).pipeline;
    const app = await buildApp(ctx, { logger: false });
    try {
      expect((await app.inject({ method: 'POST', url: path('stk'), payload: {} })).statusCode).toBe(404);
    } finally {
      await app.close();
      await ctx.close();
    }
  });
});
