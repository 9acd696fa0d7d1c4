import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { createPartner, type Partner } from '@partner-api/testkit/partner.ts';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { one, rows } from '../../../src/db/query.ts';
import { money } from '../../../src/lib/money.ts';
import { placeBuy } from '../../../src/services/orders/life.ts';
import {
  createTransaction,
  NoPaymentAdapterError,
} from '../../../src/services/payments/create-transaction.ts';
import type { AdapterRegistry } from '../../../src/services/payments/pipeline/adapter.ts';
import { createBreakers, providerFailed } from '../../../src/services/payments/pipeline/breaker.ts';
import {
  findRequestByProviderId,
  handleCallback,
} from '../../../src/services/payments/pipeline/callbacks.ts';
import type { PipelineDeps } from '../../../src/services/payments/pipeline/types.ts';
import { runPipelineOnce, SWEEP_LOCK_ID } from '../../../src/services/payments/pipeline/worker.ts';
import { ensureCatalog, insertCustomer } from '../../ussd/support.ts';
import { type CountingProvider, countingAdapter, startCountingProvider } from './counting-provider.ts';

const silent = { info: () => {}, warn: () => {}, error: () => {} };

type RequestRow = {
  id: string;
  state: string;
  attempts: number;
  providerIds: Record<string, string>;
  lastError: string | null;
};

describeStores('payment pipeline on %s', (store) => {
  let t: TestApp;
  let provider: CountingProvider;
  let stockId: string;
  let partner: Partner;
  let customerId: string;

  beforeAll(async () => {
    t = await buildTestApp(store);
    stockId = (await ensureCatalog(t)).buy;
    provider = await startCountingProvider();
    partner = await createPartner(t);
    customerId = await insertCustomer(t, partner, { msisdn: '254712000015' });
  });
  afterAll(async () => {
    await provider?.close();
    await t?.close();
  });

  /** A pipeline with its own adapter name (its requests only), a movable clock, small limits. */
  function pipeline(
    overrides: Partial<PipelineDeps['settings']> = {},
    adapterOptions: { timeoutMs?: number; reconcileAfterMs?: number } = {},
  ) {
    const adapter = countingAdapter(provider.url, {
      name: `count-${Math.random().toString(36).slice(2, 10)}`,
      reconcileAfterMs: 1000,
      ...adapterOptions,
    });
    let offset = 0;
    const deps: PipelineDeps = {
      db: t.ctx.database.db,
      log: silent,
      metrics: t.ctx.metrics,
      registry: () => adapter,
      events: t.ctx.events,
      clock: () => new Date(Date.now() + offset),
      settings: {
        ...t.ctx.config,
        PAYMENT_MAX_ATTEMPTS: 3,
        PAYMENT_BACKOFF_BASE_MS: 100,
        PAYMENT_BACKOFF_MAX_MS: 1000,
        PAYMENT_LEASE_SECONDS: 30,
        PAYMENT_MAX_PENDING_SECONDS: 600,
        ...overrides,
      },
      random: () => 0.99,
    };
    return {
      deps,
      adapter,
      /** Moves this pipeline's clock forward (backoff, reconcile delay, lease, maximum age). */
      advance: (ms: number) => {
        offset += ms;
      },
      run: () => runPipelineOnce(deps),
    };
  }

  async function buy(registry: AdapterRegistry, amount = '1000') {
    const placed = await t.ctx.database.db.transaction((tx) =>
      placeBuy(
        tx,
        { organizationId: partner.organizationId, customerId, msisdn: '254712000015', stockId, amount },
        { registry, events: t.ctx.events },
      ),
    );
    const transactionId = placed.payments[0]!.id;
    return { orderId: placed.orderId, transactionId, request: await requestOf(transactionId) };
  }

  /** A payout (OUTGOING) on a fresh buy order, queued as a sell's proceeds or a refund would be. */
  async function payout(registry: AdapterRegistry) {
    const placed = await buy(registry);
    await t.ctx.database.db.execute(
      sql`update provider_requests set state = 'DONE' where id = ${placed.request.id}`,
    );
    const ref = await t.ctx.database.db.transaction((tx) =>
      createTransaction({
        tx,
        deps: { registry, events: t.ctx.events },
        input: {
          organizationId: partner.organizationId,
          orderId: placed.orderId,
          type: 'OUTGOING',
          amount: money('400.00', 'KES'),
          msisdn: '254712000015',
        },
      }),
    );
    return { orderId: placed.orderId, transactionId: ref.id, request: await requestOf(ref.id) };
  }

  const requestOf = async (transactionId: string) => {
    const row = await one<RequestRow>(
      t.ctx.database.db,
      sql`select id, state, attempts, provider_ids as "providerIds", last_error as "lastError"
  from provider_requests where transaction_id = ${transactionId}`,
    );
    if (!row) throw new Error(`no provider request for ${transactionId}`);
    return row;
  };
  const transactionOf = async (transactionId: string) =>
    one<{ status: string; failureReason: string | null; orderStatus: string }>(
      t.ctx.database.db,
      sql`select t.status, t.failure_reason as "failureReason", o.status as "orderStatus"
  from transactions t join orders o on o.id = t.order_id where t.id = ${transactionId}`,
    );
  const exchangesOf = async (requestId: string) =>
    (
      await rows<{ kind: string; note: string | null }>(
        t.ctx.database.db,
        sql`select kind, note from provider_exchanges where provider_request_id = ${requestId} order by at, kind`,
      )
    ).map((e) => e.kind);
  const sendsOf = (requestId: string) =>
    provider.calls.filter((c) => c.op === 'send' && c.id === requestId).length;

  it('queues the request in the move transaction: a rolled-back move leaves none, and no adapter refuses', async () => {
    const p = pipeline();
    let orderId = '';
    await expect(
      t.ctx.database.db.transaction(async (tx) => {
        const placed = await placeBuy(
          tx,
          {
            organizationId: partner.organizationId,
            customerId,
            msisdn: '254712000015',
            stockId,
            amount: '1000',
          },
          p.deps,
        );
        orderId = placed.orderId;
        throw new Error('the move fails after the order');
      }),
    ).rejects.toThrow('the move fails');
    const left = await rows(
      t.ctx.database.db,
      sql`select r.id from provider_requests r join transactions x on x.id = r.transaction_id where x.order_id = ${orderId}`,
    );
    expect(left).toEqual([]);

    const committed = await buy(p.deps.registry);
    expect(committed.request).toMatchObject({ state: 'QUEUED', attempts: 0 });
    await expect(buy(() => undefined)).rejects.toThrow(NoPaymentAdapterError);
  });

  it('a buy in a currency the adapter does not move, or of a stock not listed, inserts nothing', async () => {
    const p = pipeline();
    const ugandan = { ...p.adapter, currency: 'UGX' };
    const placedBy = async () =>
      (
        await rows<{ orders: number; transactions: number; requests: number }>(
          t.ctx.database.db,
          sql`select (select count(*)::int from orders where customer_id = ${customerId}) as orders,
            (select count(*)::int from transactions x join orders o on o.id = x.order_id
              where o.customer_id = ${customerId}) as transactions,
            (select count(*)::int from provider_requests r join transactions x on x.id = r.transaction_id
              join orders o on o.id = x.order_id where o.customer_id = ${customerId}) as requests`,
        )
      )[0]!;
    const before = await placedBy();
    await expect(buy(() => ugandan)).rejects.toThrow(
      new NoPaymentAdapterError(`${p.adapter.name} moves UGX only, not KES`),
    );
    await expect(
      t.ctx.database.db.transaction((tx) =>
        placeBuy(
          tx,
          {
            organizationId: partner.organizationId,
            customerId,
            msisdn: '254712000015',
            stockId: 'no-such',
            amount: '1000',
          },
          p.deps,
        ),
      ),
    ).rejects.toThrow('buy order: stock no-such is not listed');
    expect(await placedBy()).toEqual(before);
    // The same adapter in the stock's own currency places the order, its collection and its request.
    await buy(() => ({ ...p.adapter, currency: 'KES' }));
    expect(await placedBy()).toEqual({
      orders: before.orders + 1,
      transactions: before.transactions + 1,
      requests: before.requests + 1,
    });
  });

  it('accepted → AWAITING; the sweep queries after reconcileAfterMs and applies SUCCESS once', async () => {
    const p = pipeline();
    const { orderId, transactionId, request } = await buy(p.deps.registry);
    await p.run();
    expect(await requestOf(transactionId)).toMatchObject({
      state: 'AWAITING',
      providerIds: { ref: `P-${request.id}` },
    });
    await p.run(); // not due yet
    expect(provider.calls.filter((c) => c.id === request.id)).toHaveLength(1);
    p.advance(1500);
    await p.run();
    expect(await requestOf(transactionId)).toMatchObject({ state: 'DONE' });
    expect(await transactionOf(transactionId)).toMatchObject({ status: 'SUCCESS', orderStatus: 'EXECUTED' });
    p.advance(60_000);
    await p.run();
    expect(provider.acted.get(request.id)).toBe(1);
    expect(sendsOf(request.id)).toBe(1);
    expect(await exchangesOf(request.id)).toEqual(['request', 'decision', 'query', 'decision']);
    expect(orderId).toBeTruthy();
  });

  it.runIf(store === 'postgres')(
    'while another instance sweeps, a pass claims its due QUEUED requests and leaves AWAITING ones (a second session: PostgreSQL only)',
    async () => {
      const p = pipeline();
      const awaiting = await buy(p.deps.registry);
      await p.run();
      p.advance(1500);
      const queued = await buy(p.deps.registry);
      // The other instance's sweep: its transaction holds the lock while this pass runs.
      await t.ctx.database.db.transaction(async (tx) => {
        await tx.execute(sql`select pg_advisory_xact_lock(${SWEEP_LOCK_ID})`);
        await p.run();
        expect(await requestOf(queued.transactionId)).toMatchObject({ state: 'AWAITING' });
        expect(await requestOf(awaiting.transactionId)).toMatchObject({ state: 'AWAITING' });
      });
      expect(provider.calls.filter((c) => c.id === awaiting.request.id)).toHaveLength(1);
      await p.run();
      expect(await requestOf(awaiting.transactionId)).toMatchObject({ state: 'DONE' });
      expect(provider.calls.filter((c) => c.id === awaiting.request.id)).toHaveLength(2);
    },
  );

  it('a request queued within the millisecond a pass reads from its clock is due in that pass', async () => {
    // PostgreSQL writes `default now()` in microseconds, the clock reads whole milliseconds: a queue
    // row written 0.6 ms into the millisecond X, then nudged into a pass that read X, is due then.
    const p = pipeline();
    const reading = new Date(Date.now() + 3_600_000);
    const deps = { ...p.deps, clock: () => reading };
    const { transactionId, request } = await buy(p.deps.registry);
    const queueAt = async (microseconds: number) =>
      t.ctx.database.db.execute(
        sql`update provider_requests set next_attempt_at = ${reading.toISOString()}::timestamptz
  + ${`${microseconds} microseconds`}::interval where id = ${request.id}`,
      );
    await queueAt(1000); // the next millisecond: not due yet
    await runPipelineOnce(deps);
    expect(await requestOf(transactionId)).toMatchObject({ state: 'QUEUED' });
    await queueAt(600);
    await runPipelineOnce(deps);
    expect(await requestOf(transactionId)).toMatchObject({ state: 'AWAITING' });
    expect(sendsOf(request.id)).toBe(1);
  });

  it('rejected: a collection fails its order with the reason; a payout goes to the operator, still PENDING', async () => {
    const p = pipeline();
    const collect = await buy(p.deps.registry);
    provider.planSends('reject');
    await p.run();
    expect(await requestOf(collect.transactionId)).toMatchObject({ state: 'DONE' });
    expect(await transactionOf(collect.transactionId)).toMatchObject({
      status: 'FAILED',
      failureReason: 'refused by the provider',
      orderStatus: 'FAILED',
    });

    const pay = await payout(p.deps.registry);
    provider.planSends('reject');
    await p.run();
    expect(await requestOf(pay.transactionId)).toMatchObject({
      state: 'OPERATOR',
      lastError: 'rejected: refused by the provider',
    });
    expect(await transactionOf(pay.transactionId)).toMatchObject({ status: 'PENDING' });
  });

  it('ambiguous after the provider acted: the next attempt queries first and applies, never sending twice', async () => {
    const p = pipeline();
    const { transactionId, request } = await buy(p.deps.registry);
    provider.planSends('ambiguous-received');
    await p.run();
    expect(await requestOf(transactionId)).toMatchObject({ state: 'UNCERTAIN', attempts: 1 });
    p.advance(1000); // past the backoff (at most base · 2 = 200 ms)
    await p.run();
    expect(await requestOf(transactionId)).toMatchObject({ state: 'DONE' });
    expect(await transactionOf(transactionId)).toMatchObject({ status: 'SUCCESS' });
    expect(sendsOf(request.id)).toBe(1);
    expect(provider.acted.get(request.id)).toBe(1);
  });

  it('ambiguous and lost: the query finds nothing, so it is sent again with the same id', async () => {
    const p = pipeline();
    const { transactionId, request } = await buy(p.deps.registry);
    provider.planSends('ambiguous-lost');
    await p.run();
    expect(await requestOf(transactionId)).toMatchObject({ state: 'UNCERTAIN' });
    p.advance(1000);
    await p.run();
    expect(await requestOf(transactionId)).toMatchObject({ state: 'AWAITING' });
    expect(provider.calls.filter((c) => c.id === request.id).map((c) => c.op)).toEqual([
      'send',
      'query',
      'send',
    ]);
    expect(provider.acted.get(request.id)).toBe(1);
  });

  it('not-sent: QUEUED again with a jittered backoff, then sent', async () => {
    const p = pipeline();
    const { transactionId, request } = await buy(p.deps.registry);
    provider.planSends('not-sent');
    await p.run();
    const queued = await requestOf(transactionId);
    expect(queued).toMatchObject({ state: 'QUEUED', attempts: 1 });
    expect(queued.lastError).toMatch(/^not-sent: no token/);
    await p.run(); // backoff not over
    expect(sendsOf(request.id)).toBe(1);
    p.advance(1000);
    await p.run();
    expect(await requestOf(transactionId)).toMatchObject({ state: 'AWAITING' });
    expect(provider.acted.get(request.id)).toBe(1);
  });

  it('a payout whose outcome cannot be learned goes to the operator after the attempts, never FAILED', async () => {
    const p = pipeline();
    const { transactionId, request } = await payout(p.deps.registry);
    provider.planSends('ambiguous-received');
    provider.planQueries('unknown', 'unknown');
    await p.run();
    for (let i = 0; i < 2; i++) {
      p.advance(2000);
      await p.run();
    }
    expect(await requestOf(transactionId)).toMatchObject({ state: 'OPERATOR', attempts: 3 });
    expect(await transactionOf(transactionId)).toMatchObject({ status: 'PENDING' });
    p.advance(3_600_000);
    await p.run();
    expect(sendsOf(request.id)).toBe(1);
    expect(await transactionOf(transactionId)).toMatchObject({ status: 'PENDING' });
  });

  it('a request still pending is asked again after a quarter of its age, capped, and never past its maximum age', async () => {
    const p = pipeline({ PAYMENT_BACKOFF_MAX_MS: 60_000 }); // reconcileAfterMs 1 s, maximum age 600 s
    const { transactionId, request } = await buy(p.deps.registry);
    await p.run(); // sent: AWAITING
    const created = await one<{ at: string }>(
      t.ctx.database.db,
      sql`select created_at::text as at from provider_requests where id = ${request.id}`,
    );
    const createdAt = Date.parse(created!.at);
    // A clock that stands still at each age, so that the intervals are exact.
    let at = createdAt;
    const deps = { ...p.deps, clock: () => new Date(at) };
    /** At `age` ms after the request was created: pending; returns the wait until the next query. */
    const pendingAt = async (age: number) => {
      at = createdAt + age;
      provider.planQueries('pending');
      await runPipelineOnce(deps);
      const row = await one<{ next: string; state: string }>(
        t.ctx.database.db,
        sql`select next_attempt_at::text as next, state from provider_requests where id = ${request.id}`,
      );
      expect(row?.state).toBe('AWAITING');
      return Date.parse(row!.next) - at;
    };
    expect(await pendingAt(2_000)).toBe(1_000); // young: reconcileAfterMs
    expect(await pendingAt(100_000)).toBe(25_000); // a quarter of its age
    expect(await pendingAt(400_000)).toBe(60_000); // capped
    expect(await pendingAt(590_000)).toBe(10_001); // not past the maximum age
    at = createdAt + 600_001;
    provider.planQueries('pending');
    await runPipelineOnce(deps);
    expect(await transactionOf(transactionId)).toMatchObject({
      status: 'FAILED',
      failureReason: 'no answer from the provider within 600 s',
    });
  });

  it('a collection still pending past the maximum age fails with the reason', async () => {
    const p = pipeline();
    const { transactionId } = await buy(p.deps.registry);
    await p.run();
    provider.planQueries('pending');
    p.advance(1500);
    await p.run();
    expect(await requestOf(transactionId)).toMatchObject({ state: 'AWAITING' });
    provider.planQueries('pending');
    p.advance(601_000);
    await p.run();
    expect(await requestOf(transactionId)).toMatchObject({ state: 'DONE' });
    expect(await transactionOf(transactionId)).toMatchObject({
      status: 'FAILED',
      failureReason: 'no answer from the provider within 600 s',
      orderStatus: 'FAILED',
    });
  });

  it('a worker that dies after the call: its lease runs out and the next one queries first, sending nothing', async () => {
    const a = pipeline({}, { timeoutMs: 60_000 });
    const { transactionId, request } = await buy(a.deps.registry);
    provider.planSends('hang-received');
    const dying = a.run(); // calls, the provider acts, the answer never comes
    await expect.poll(() => provider.acted.get(request.id)).toBe(1);
    expect(await requestOf(transactionId)).toMatchObject({ state: 'SENDING' });
    const b = { ...a.deps, clock: () => new Date(Date.now() + 31_000) }; // past the 30 s lease
    await runPipelineOnce(b);
    expect(await requestOf(transactionId)).toMatchObject({ state: 'DONE' });
    expect(await transactionOf(transactionId)).toMatchObject({ status: 'SUCCESS' });
    provider.releaseHung();
    await dying; // the abandoned call ends; its record finds the lease gone and changes nothing
    expect(await requestOf(transactionId)).toMatchObject({ state: 'DONE' });
    expect(sendsOf(request.id)).toBe(1);
    expect(provider.acted.get(request.id)).toBe(1);
  });

  it('a pass whose record fails hands the request back: a backoff later it is queried first, never sent twice', async () => {
    const p = pipeline();
    const { transactionId, request } = await buy(p.deps.registry);
    // The database refuses this request's exchanges: the call goes out, its record fails.
    const db = t.ctx.database.db;
    const refuse = `refuse_${request.id.toLowerCase().replace(/[^a-z0-9]/g, '')}`;
    await db.execute(
      sql.raw(`create function ${refuse}() returns trigger language plpgsql
  as $$ begin raise exception 'refused by the test'; end $$`),
    );
    await db.execute(
      sql.raw(`create trigger ${refuse} before insert on provider_exchanges for each row
  when (new.provider_request_id = '${request.id}') execute function ${refuse}()`),
    );
    try {
      await p.run();
    } finally {
      await db.execute(sql.raw(`drop trigger ${refuse} on provider_exchanges`));
      await db.execute(sql.raw(`drop function ${refuse}()`));
    }
    expect(provider.acted.get(request.id)).toBe(1);
    expect(await requestOf(transactionId)).toMatchObject({ state: 'SENDING' });
    expect(await exchangesOf(request.id)).toEqual([]);
    await p.run(); // still inside the base backoff (100 ms in these settings): not due yet
    expect(await requestOf(transactionId)).toMatchObject({ state: 'SENDING' });
    p.advance(150); // past the backoff, far inside the 30 s lease the pass had taken
    await p.run();
    expect(await requestOf(transactionId)).toMatchObject({ state: 'DONE' });
    expect(await transactionOf(transactionId)).toMatchObject({ status: 'SUCCESS', orderStatus: 'EXECUTED' });
    expect(sendsOf(request.id)).toBe(1);
    expect(provider.acted.get(request.id)).toBe(1);
    expect(await exchangesOf(request.id)).toEqual(['query', 'decision']);
  });

  it('callbacks: confirmed by the query they apply; contradicted they change nothing and are recorded', async () => {
    const p = pipeline();
    const exchange = {
      provider: p.adapter.name,
      operation: 'callback',
      method: 'POST' as const,
      path: '/callback',
      requestBody: { claimed: true },
      status: 200,
      responseBody: null,
      startedAt: new Date(),
      latencyMs: 0,
      error: null,
    };
    const good = await buy(p.deps.registry);
    await p.run();
    const found = await findRequestByProviderId(
      t.ctx.database.db,
      p.adapter.name,
      'ref',
      `P-${good.request.id}`,
    );
    expect(found).toEqual({ id: good.request.id, transactionId: good.transactionId });
    const applied = await handleCallback(p.deps, {
      adapterName: p.adapter.name,
      requestId: good.request.id,
      claimed: { status: 'SUCCESS', receipt: 'X1' },
      exchange,
    });
    expect(applied).toBe('applied');
    expect(await transactionOf(good.transactionId)).toMatchObject({
      status: 'SUCCESS',
      orderStatus: 'EXECUTED',
    });
    expect(
      await handleCallback(p.deps, {
        adapterName: p.adapter.name,
        requestId: good.request.id,
        claimed: { status: 'SUCCESS' },
        exchange,
      }),
    ).toBe('already-final');

    const forged = await buy(p.deps.registry);
    await p.run();
    provider.planQueries({ final: 'CANCELLED' });
    const contradicted = await handleCallback(p.deps, {
      adapterName: p.adapter.name,
      requestId: forged.request.id,
      claimed: { status: 'SUCCESS' },
      exchange,
    });
    expect(contradicted).toBe('contradicted');
    expect(await transactionOf(forged.transactionId)).toMatchObject({
      status: 'PENDING',
      orderStatus: 'PENDING_PAYMENT',
    });
    expect(await requestOf(forged.transactionId)).toMatchObject({ state: 'AWAITING' });
    const notes = await rows<{ note: string }>(
      t.ctx.database.db,
      sql`select note from provider_exchanges where provider_request_id = ${forged.request.id} and kind = 'decision'`,
    );
    expect(notes.map((n) => n.note)).toContain(
      'suspicious callback: claims SUCCESS, the query says CANCELLED; nothing changed',
    );
  });

  it('consecutive failures open the breaker: the adapter is left alone until the cooldown', async () => {
    const p = pipeline();
    let now = 0;
    p.deps.breakers = createBreakers({ threshold: 2, cooldownMs: 10_000, now: () => now });
    const one = await buy(p.deps.registry);
    const two = await buy(p.deps.registry);
    provider.planSends('not-sent', 'not-sent');
    await p.run();
    expect(p.deps.breakers.state(p.adapter.name)).toBe('open');
    p.advance(5000);
    await p.run();
    expect(sendsOf(one.request.id) + sendsOf(two.request.id)).toBe(2);
    now = 10_000; // half-open: one request goes; its success closes the breaker
    await p.run();
    expect(sendsOf(one.request.id) + sendsOf(two.request.id)).toBe(3);
    expect(p.deps.breakers.state(p.adapter.name)).toBe('closed');
    await p.run();
    expect(sendsOf(one.request.id) + sendsOf(two.request.id)).toBe(4);
  });

  it('a refusal is an answer: only timeouts, resets and 5xx count towards the breaker', async () => {
    const p = pipeline();
    p.deps.breakers = createBreakers({ threshold: 2, cooldownMs: 10_000, now: () => 0 });
    for (let i = 0; i < 3; i++) await buy(p.deps.registry);
    provider.planSends('reject', 'reject', 'reject');
    await p.run();
    expect(p.deps.breakers.state(p.adapter.name)).toBe('closed');
  });

  it.each([
    { statuses: [200], failed: false, what: 'an answer, even "ask again later" (B2C status)' },
    { statuses: [400], failed: false, what: 'a refusal' },
    { statuses: [401, 200], failed: false, what: 'a refused token, then an answer' },
    { statuses: [null], failed: true, what: 'a timeout or reset' },
    { statuses: [200, 503], failed: true, what: 'a 5xx' },
    { statuses: [], failed: false, what: 'no call at all' },
  ])('the breaker counts $what as failed: $failed', ({ statuses, failed }) => {
    expect(providerFailed(statuses.map((status) => ({ status })))).toBe(failed);
  });

  it('a half-open trial that found nothing due is released for the next pass', async () => {
    let now = 0;
    const breakers = createBreakers({ threshold: 1, cooldownMs: 1000, now: () => now });
    breakers.failure('x');
    expect(breakers.allowance('x', 10)).toBe(0);
    now = 1000;
    expect(breakers.allowance('x', 10)).toBe(1);
    expect(breakers.allowance('x', 10)).toBe(0);
    breakers.release('x');
    expect(breakers.state('x')).toBe('half-open');
    expect(breakers.allowance('x', 10)).toBe(1);
    breakers.success('x');
    expect(breakers.allowance('x', 10)).toBe(10);
  });

  it.runIf(store === 'postgres')('two workers on one PostgreSQL send each request once', async () => {
    // The sweep stays away however slow a loaded machine makes the rounds: AWAITING is what we check.
    const p = pipeline({}, { reconcileAfterMs: 600_000 });
    const q = { ...p.deps, breakers: undefined };
    const placed = [];
    for (let i = 0; i < 24; i++) placed.push(await buy(p.deps.registry));
    for (let round = 0; round < 4; round++) await Promise.all([runPipelineOnce(p.deps), runPipelineOnce(q)]);
    for (const { request, transactionId } of placed) {
      expect(sendsOf(request.id)).toBe(1);
      expect(provider.acted.get(request.id)).toBe(1);
      expect(await requestOf(transactionId)).toMatchObject({ state: 'AWAITING' });
    }
  });
});
