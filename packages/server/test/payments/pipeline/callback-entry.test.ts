import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { one, rows } from '../../../src/db/query.ts';
import { callbackPipelineFor } from '../../../src/services/payments/pipeline/start.ts';
import { placeQueuedBuy } from './support.ts';

const warned: unknown[] = [];
const log = { info: () => {}, warn: (o: unknown) => void warned.push(o), error: () => {} };

describeStores('the callback routes’ entry points into the pipeline on %s', (store) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp(store, { SANDBOX_SETTLE_MS: '0' });
  });
  afterAll(() => t?.close());

  it('finds a request by a provider id, and by its own id as B2C originatorConversationId', async () => {
    const transactionId = await placeQueuedBuy(t, '254712000017', '500');
    const request = await one<{ id: string; adapter: string }>(
      t.ctx.database.db,
      sql`select id, adapter from provider_requests where transaction_id = ${transactionId}`,
    );
    const pipeline = callbackPipelineFor(t.ctx, log);
    // Nothing saved yet (a crash before Daraja's answer was stored): our id is the conversation id.
    expect(
      await pipeline.findRequestByProviderId(request!.adapter, 'originatorConversationId', request!.id),
    ).toEqual({ id: request!.id, transactionId });
    expect(await pipeline.findRequestByProviderId(request!.adapter, 'checkoutRequestId', request!.id)).toBe(
      undefined,
    );
    expect(await pipeline.findRequestByProviderId('other', 'originatorConversationId', request!.id)).toBe(
      undefined,
    );
  });

  it('records and logs a callback that matches no request', async () => {
    const pipeline = callbackPipelineFor(t.ctx, log);
    const note = `unknown-${Date.now()}`;
    await pipeline.recordUnmatched!(
      'mpesa',
      {
        provider: 'mpesa',
        operation: 'stk-callback',
        method: 'POST',
        path: '/v1/payments/callbacks/daraja/[REDACTED]/stk',
        requestBody: { Body: { stkCallback: { CheckoutRequestID: note } } },
        status: 200,
        responseBody: { ResultCode: 0 },
        startedAt: new Date(),
        latencyMs: 1,
        error: null,
      },
      `unmatched checkoutRequestId ${note}`,
    );
    const found = await rows<{ requestId: string | null; kind: string; note: string }>(
      t.ctx.database.db,
      sql`select provider_request_id as "requestId", kind, note from provider_exchanges
  where note like ${`%${note}%`}`,
    );
    expect(found).toEqual([
      {
        requestId: null,
        kind: 'callback',
        note: `unmatched mpesa callback: unmatched checkoutRequestId ${note}`,
      },
    ]);
    expect(warned).toContainEqual(expect.objectContaining({ adapter: 'mpesa' }));
  });
});
