import { createId } from '@partner-api/contract';
import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { createPartner, type Partner } from '@partner-api/testkit/partner.ts';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { one, rows } from '../../../src/db/query.ts';
import { money } from '../../../src/lib/money.ts';
import { cancelOrder, placeBuy } from '../../../src/services/orders/life.ts';
import { createTransaction } from '../../../src/services/payments/create-transaction.ts';
import type { QueryResult } from '../../../src/services/payments/pipeline/adapter.ts';
import { recordQueryAnswer } from '../../../src/services/payments/pipeline/callbacks.ts';
import { pipelineDeps } from '../../../src/services/payments/pipeline/start.ts';
import type { PipelineDeps } from '../../../src/services/payments/pipeline/types.ts';
import { runPipelineOnce } from '../../../src/services/payments/pipeline/worker.ts';
import { ensureCatalog, insertCustomer } from '../../ussd/support.ts';
import { adminCaller, placePendingBuy } from '../support.ts';
import { type CountingProvider, countingAdapter, startCountingProvider } from './counting-provider.ts';

const silent = { info: () => {}, warn: () => {}, error: () => {} };
const MSISDN = '254712000019';

/**
 * POST /admin/payments/{transactionId}/resolve against the pipeline with a counting provider over
 * HTTP: what each action decides, and every refusal (400, 404, 409) changing nothing.
 */
describeStores('the operator resolves a payment on %s', (store) => {
  let t: TestApp;
  let provider: CountingProvider;
  let partner: Partner;
  let customerId: string;
  let stockId: string;
  let deps: PipelineDeps;
  let offset = 0;

  beforeAll(async () => {
    t = await buildTestApp(store);
    stockId = (await ensureCatalog(t)).buy;
    provider = await startCountingProvider();
    partner = await createPartner(t);
    customerId = await insertCustomer(t, partner, { msisdn: MSISDN });
  });
  // Each test its own adapter name: its pipeline passes claim its own requests only. The admin
  // route creates a retried payout through the app's registry: the same adapter.
  beforeEach(() => {
    const adapter = countingAdapter(provider.url, {
      name: `count-${Math.random().toString(36).slice(2, 10)}`,
      reconcileAfterMs: 1000,
    });
    t.ctx.registry = () => adapter;
    deps = {
      ...pipelineDeps(t.ctx, silent),
      clock: () => new Date(Date.now() + offset),
      settings: { ...t.ctx.config, PAYMENT_MAX_ATTEMPTS: 3, PAYMENT_BACKOFF_BASE_MS: 100 },
      random: () => 0.99,
    };
  });
  afterAll(async () => {
    await provider?.close();
    await t?.close();
  });

  const admin = adminCaller(() => t);
  const resolve = (transactionId: string, body: Record<string, unknown>) =>
    admin('POST', `/admin/payments/${transactionId}/resolve`, body);
  /** One pass of the pipeline after `ms` more on its clock (due queries, backoff). */
  const pass = async (ms = 0) => {
    offset += ms;
    await runPipelineOnce(deps);
  };
  const stateOf = (transactionId: string) =>
    one<{
      id: string;
      state: string;
      lastError: string | null;
      status: string;
      failureReason: string | null;
    }>(
      t.ctx.database.db,
      sql`select r.id, r.state, r.last_error as "lastError", x.status, x.failure_reason as "failureReason"
  from provider_requests r join transactions x on x.id = r.transaction_id where x.id = ${transactionId}`,
    );
  const decisionsOf = (transactionId: string) =>
    rows<{ sourceAddress: string | null; requestBody: unknown; responseBody: unknown; note: string }>(
      t.ctx.database.db,
      sql`select source_address as "sourceAddress", request_body as "requestBody", response_body as "responseBody", note
  from provider_exchanges where transaction_id = ${transactionId} and kind = 'decision' and operation = 'resolve'
  order by at, id`,
    );
  const buy = async () => {
    const placed = await t.ctx.database.db.transaction((tx) =>
      placeBuy(
        tx,
        { organizationId: partner.organizationId, customerId, msisdn: MSISDN, stockId, amount: '1000' },
        t.ctx,
      ),
    );
    return { orderId: placed.orderId, transactionId: placed.payments[0]!.id };
  };
  /** A payout of KES 400.00 on a fresh buy order (its collection closed), queued as a sell's is. */
  const payout = async () => {
    const { orderId, transactionId } = await buy();
    await t.ctx.database.db.execute(
      sql`update provider_requests set state = 'DONE' where transaction_id = ${transactionId}`,
    );
    const ref = await t.ctx.database.db.transaction((tx) =>
      createTransaction({
        tx,
        deps: t.ctx,
        input: {
          organizationId: partner.organizationId,
          orderId,
          type: 'OUTGOING',
          amount: money('400.00', 'KES'),
          msisdn: MSISDN,
        },
      }),
    );
    return { orderId, transactionId: ref.id };
  };
  /** A payout the provider took and then calls FAILED: its request with the operator, owed. */
  const failedPayout = async () => {
    const placed = await payout();
    provider.planQueries({ final: 'FAILED' });
    await pass();
    await pass(1500);
    return placed;
  };

  it('refuses what it cannot decide: 400 for the body, 404 for no transaction, 409 for no request', async () => {
    const { transactionId } = await buy();
    const before = await stateOf(transactionId);
    for (const [body, message] of [
      [
        { action: 'refund', reason: 'why not' },
        'action must be paid, not-paid, retry-payout or paid-another-way',
      ],
      [{ action: 'paid', reason: 'no' }, 'reason: say why, in at least 3 characters'],
      [
        { action: 'paid', reason: 'found it' },
        'paid needs the receipt or reference of the payment (receipt)',
      ],
    ] as const) {
      const res = await resolve(transactionId, body);
      expect(res.statusCode, res.body).toBe(400);
      expect(res.body).toContain(message);
    }
    const unknown = await resolve(createId(), { action: 'not-paid', reason: 'nothing there' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ error: 'Not found', message: 'Transaction not found' });
    const bare = await placePendingBuy(t, partner, { customerId, stockId, amount: '300.00' });
    const noRequest = await resolve(bare.transactionId, { action: 'not-paid', reason: 'nothing there' });
    expect(noRequest.statusCode).toBe(409);
    expect(noRequest.json()).toEqual({
      error: 'Conflict',
      message: 'The transaction has no provider request: nothing for the operator to decide',
    });
    // A queued collection is the pipeline's: not decided under it.
    const queued = await resolve(transactionId, { action: 'paid', reason: 'found it', receipt: 'R1' });
    expect(queued.statusCode).toBe(409);
    expect(queued.json().message).toBe(
      'The request is being sent: wait for its answer, or reconcile it first',
    );
    expect(await stateOf(transactionId)).toEqual(before);
    expect(await decisionsOf(transactionId)).toEqual([]);
  });

  it('not-paid fails an awaiting collection and its order once, audited; other actions and repeats are refused', async () => {
    const { orderId, transactionId } = await buy();
    await pass();
    expect((await stateOf(transactionId))?.state).toBe('AWAITING');
    const retry = await resolve(transactionId, { action: 'retry-payout', reason: 'not a payout' });
    expect(retry.statusCode).toBe(409);
    expect(retry.json().message).toBe(
      'retry-payout pays a customer a payout they are owed; this is a collection',
    );
    const ok = await resolve(transactionId, {
      action: 'not-paid',
      reason: 'no such payment in the statement',
      operator: 'amina',
    });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json()).toEqual({
      data: { transactionId, action: 'not-paid', status: 'FAILED', state: 'DONE', queued: false },
    });
    expect(await stateOf(transactionId)).toMatchObject({
      state: 'DONE',
      status: 'FAILED',
      failureReason: "not paid: the operator found no payment in the provider's records",
    });
    const order = await one<{ status: string }>(
      t.ctx.database.db,
      sql`select status from orders where id = ${orderId}`,
    );
    expect(order?.status).toBe('FAILED');
    const [decision, ...more] = await decisionsOf(transactionId);
    expect(more).toEqual([]);
    expect(decision).toMatchObject({
      sourceAddress: '127.0.0.1',
      requestBody: { action: 'not-paid', reason: 'no such payment in the statement', operator: 'amina' },
      responseBody: {
        before: { status: 'PENDING', state: 'AWAITING' },
        after: { status: 'FAILED', state: 'DONE' },
      },
    });
    expect(decision?.note).toBe(
      'operator amina from 127.0.0.1: not-paid: no such payment in the statement; PENDING/AWAITING -> FAILED/DONE',
    );
    const again = await resolve(transactionId, { action: 'paid', reason: 'found it', receipt: 'R2' });
    expect(again.statusCode).toBe(409);
    expect(again.json().message).toBe('Nothing to resolve: the collection is FAILED and closed');
  });

  it('paid on a collection whose order the customer cancelled meanwhile: refunded once', async () => {
    const { orderId, transactionId } = await buy();
    await pass();
    await t.ctx.database.db.transaction((tx) =>
      cancelOrder(tx, { organizationId: partner.organizationId, customerId, orderId }, t.ctx),
    );
    const ok = await resolve(transactionId, {
      action: 'paid',
      reason: 'paid before cancelling',
      receipt: 'SKL9',
    });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json().data).toMatchObject({ status: 'CANCELLED', state: 'DONE', queued: true });
    const refunds = await rows<{ id: string; amount: string }>(
      t.ctx.database.db,
      sql`select id, amount::text as amount from transactions where order_id = ${orderId} and type = 'OUTGOING'`,
    );
    expect(refunds).toEqual([{ id: expect.any(String), amount: '1000.00' }]);
  });

  it('a payout the provider failed is owed; paid/not-paid are refused; retry-payout sends a new payout once', async () => {
    const { orderId, transactionId } = await failedPayout();
    const owed = await stateOf(transactionId);
    expect(owed).toMatchObject({
      state: 'OPERATOR',
      status: 'FAILED',
      failureReason: 'provider says FAILED',
      lastError: `payout failed (provider says FAILED): the customer is owed KES 400.00 to ${MSISDN} for order ${orderId}; retry the payout or pay another way (partner-api payments resolve ${transactionId})`,
    });
    const stuck = await admin('GET', '/admin/payments/stuck?olderThanSeconds=0&limit=1000');
    expect(stuck.json().data).toContainEqual(
      expect.objectContaining({
        transactionId,
        state: 'OPERATOR',
        transaction: {
          status: 'FAILED',
          type: 'OUTGOING',
          amount: '400.00',
          currency: 'KES',
          msisdn: MSISDN,
          orderId,
        },
      }),
    );
    for (const action of ['paid', 'not-paid']) {
      const res = await resolve(transactionId, { action, reason: 'looked', receipt: 'R3' });
      expect(res.statusCode).toBe(409);
      expect(res.json().message).toBe(
        'The payment is already FAILED: the customer is owed; retry-payout or paid-another-way',
      );
    }
    expect(await stateOf(transactionId)).toEqual(owed);

    const ok = await resolve(transactionId, { action: 'retry-payout', reason: 'provider fixed its float' });
    expect(ok.statusCode, ok.body).toBe(200);
    const { newTransactionId } = ok.json().data as { newTransactionId: string };
    const retried = await stateOf(newTransactionId);
    expect(retried).toMatchObject({ state: 'QUEUED', status: 'PENDING' });
    expect(await stateOf(transactionId)).toMatchObject({
      state: 'DONE',
      status: 'FAILED',
      lastError: `resolved by admin-token: retried as payout ${newTransactionId}`,
    });
    await pass();
    await pass(1500);
    expect(await stateOf(newTransactionId)).toMatchObject({ state: 'DONE', status: 'SUCCESS' });
    expect(provider.acted.get(retried!.id)).toBe(1);
    expect(provider.acted.get(owed!.id)).toBe(1);
    const again = await resolve(transactionId, { action: 'retry-payout', reason: 'double click' });
    expect(again.statusCode).toBe(409);
    await pass(1500);
    expect(provider.acted.get(retried!.id)).toBe(1);
  });

  it('a payout the provider refused stays PENDING with the operator: not-paid keeps it owed; paid another way closes it', async () => {
    const { transactionId } = await payout();
    provider.planSends('reject');
    await pass();
    expect(await stateOf(transactionId)).toMatchObject({ state: 'OPERATOR', status: 'PENDING' });
    const notPaid = await resolve(transactionId, { action: 'not-paid', reason: 'refused by the provider' });
    expect(notPaid.statusCode, notPaid.body).toBe(200);
    expect(notPaid.json().data).toMatchObject({ status: 'FAILED', state: 'OPERATOR' });
    expect((await stateOf(transactionId))?.lastError).toMatch(
      /^payout not paid \(refused by the provider\): the customer is owed KES 400\.00 to /,
    );
    const paid = await resolve(transactionId, {
      action: 'paid-another-way',
      reason: 'bank transfer',
      receipt: 'BANK-7',
    });
    expect(paid.statusCode, paid.body).toBe(200);
    const { newTransactionId } = paid.json().data as { newTransactionId: string };
    expect(await stateOf(newTransactionId)).toMatchObject({ state: 'DONE', status: 'SUCCESS' });
    await pass(1500);
    const paidAnotherWay = (await stateOf(newTransactionId))!.id;
    expect(provider.calls.filter((c) => c.id === paidAnotherWay)).toEqual([]);
  });

  it.runIf(store === 'postgres')(
    'two answers that a payout failed, at once: it stays owed with the operator (a second session: PostgreSQL only)',
    async () => {
      const { transactionId } = await payout();
      await pass();
      const request = (await stateOf(transactionId))!;
      expect(request.state).toBe('AWAITING');
      // A third session holds the request's lock while both answers start: each then waits for it,
      // and the second to get it reads the transaction as it was before the first committed.
      let release = () => {};
      const released = new Promise<void>((resolve) => {
        release = resolve;
      });
      let locked = () => {};
      const holding = new Promise<void>((resolve) => {
        locked = resolve;
      });
      const holder = t.ctx.database.db.transaction(async (tx) => {
        await tx.execute(sql`select id from provider_requests where id = ${request.id} for update`);
        locked();
        await released;
      });
      await holding;
      const failed: QueryResult = {
        kind: 'final',
        status: 'FAILED',
        reason: 'provider says FAILED',
        exchanges: [],
      };
      const answers = Promise.all([
        recordQueryAnswer(deps, request.id, failed),
        recordQueryAnswer(deps, request.id, failed),
      ]);
      await new Promise((resolve) => setTimeout(resolve, 300));
      release();
      await holder;
      await answers;
      expect(await stateOf(transactionId)).toMatchObject({
        state: 'OPERATOR',
        status: 'FAILED',
        lastError: expect.stringMatching(
          /^payout failed \(provider says FAILED\): the customer is owed KES 400\.00/,
        ),
      });
    },
  );

  it('a payout still with the pipeline (awaiting its answer) is not paid again', async () => {
    const { transactionId } = await payout();
    await pass();
    const res = await resolve(transactionId, { action: 'retry-payout', reason: 'impatient' });
    expect(res.statusCode).toBe(409);
    expect(res.json().message).toBe(
      'Only a payout with the operator can be paid again; this one is AWAITING: the pipeline is still asking the provider',
    );
    expect((await stateOf(transactionId))?.state).toBe('AWAITING');
  });
});
