import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { run } from '../../../src/db/query.ts';
import { pipelineDeps } from '../../../src/services/payments/pipeline/start.ts';
import { runPipelineOnce } from '../../../src/services/payments/pipeline/worker.ts';
import { adminCaller } from '../support.ts';
import { placeQueuedBuy } from './support.ts';

const silent = { info: () => {}, warn: () => {}, error: () => {} };

describeStores('operator view of the payment pipeline on %s', (store) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp(store, { SANDBOX_SETTLE_MS: '0' });
  });
  afterAll(() => t?.close());

  const admin = adminCaller(() => t);

  it('shows a transaction with its request and every exchange; reconcile re-queries one with the operator', async () => {
    const transactionId = await placeQueuedBuy(t, '254712000016', '1000');
    const deps = pipelineDeps(t.ctx, silent);
    await runPipelineOnce(deps);

    const shown = await admin('GET', `/admin/transactions/${transactionId}`);
    expect(shown.statusCode, shown.body).toBe(200);
    const body = shown.json();
    expect(body.transaction).toMatchObject({ id: transactionId, status: 'PENDING', type: 'INCOMING' });
    expect(body.request).toMatchObject({ transactionId, operation: 'COLLECT', state: 'AWAITING' });
    expect(body.exchanges.map((e: { kind: string }) => e.kind)).toEqual(['request', 'decision']);
    expect(body.exchanges[0].responseBody).toMatchObject({ outcome: 'SUCCESS' });

    // An operator item: listed as stuck; reconcile makes it UNCERTAIN and due, and the worker
    // queries before anything else (the sandbox says SUCCESS: applied, nothing sent again).
    await run(
      t.ctx.database.db,
      sql`update provider_requests set state = 'OPERATOR' where transaction_id = ${transactionId}`,
    );
    const stuck = await admin('GET', '/admin/payments/stuck?olderThanSeconds=3600&limit=1000');
    expect(stuck.statusCode, stuck.body).toBe(200);
    // Each with what it is about: the transaction's status, amount, number and order.
    expect(stuck.json().data).toContainEqual(
      expect.objectContaining({
        transactionId,
        state: 'OPERATOR',
        transaction: {
          status: 'PENDING',
          type: 'INCOMING',
          amount: '1000.00',
          currency: 'KES',
          msisdn: '254712000016',
          orderId: body.transaction.orderId,
        },
      }),
    );
    const reconcile = await admin('POST', '/admin/payments/reconcile', { transactionId });
    expect(reconcile.json()).toEqual({ reconciling: 1 });
    await runPipelineOnce(deps);
    const after = (await admin('GET', `/admin/transactions/${transactionId}`)).json();
    expect(after.transaction.status).toBe('SUCCESS');
    expect(after.request.state).toBe('DONE');
    expect(after.exchanges.map((e: { kind: string }) => e.kind)).toEqual([
      'request',
      'decision',
      'query',
      'decision',
    ]);
  });

  it('answers 404 for an unknown transaction', async () => {
    const missing = await admin('GET', '/admin/transactions/clxxxxxxxxxxxxxxxxxxxxxxx');
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ message: 'Transaction not found' });
  });
});
