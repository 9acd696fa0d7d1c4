import { POSTGRES_SKIP_REASON } from '@partner-api/testkit/app.ts';
import { createPartner } from '@partner-api/testkit/partner.ts';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rows } from '../../../src/db/query.ts';
import { insertCustomer, orderRow, waitFor } from '../../ussd/support.ts';
import { buyThroughUssd, type Production, settledSide, startProduction, statusOf } from './production.ts';

if (!process.env.DATABASE_URL) console.warn(`a slow M-Pesa call in production: ${POSTGRES_SKIP_REASON}`);

/**
 * Production on PostgreSQL with the Daraja fake: calls to a provider run concurrently (bounded by
 * PAYMENT_WORKER_BATCH per adapter), so one slow or hung call delays only its own request. Asserted
 * by order of events, not by time: another customer's order is prompted and executed while the slow
 * call is still waiting for its answer.
 */
describe.skipIf(!process.env.DATABASE_URL)('one slow M-Pesa call, in production', () => {
  let p: Production;

  beforeAll(async () => {
    p = await startProduction({ MPESA_REQUEST_TIMEOUT_MS: '30000' }, { slowResponseMs: 10_000 });
  }, 60_000);
  afterAll(async () => {
    await p?.close();
  }, 60_000);

  it("another customer's prompt goes out and settles while one push waits for its slow answer", async () => {
    const partner = await createPartner(p.t);
    const slow = await insertCustomer(p.t, partner, { msisdn: '254716000001' });
    const other = await insertCustomer(p.t, partner, { msisdn: '254716000002' });
    const pushes = p.fake.processed('stk-push');
    p.fake.queue('stk-push', 'slow');
    const slowOrder = await buyThroughUssd(p.t, partner, slow, '1000');
    await waitFor(async () => p.fake.processed('stk-push') > pushes || undefined, 10_000, 'the slow push');

    const otherOrder = await buyThroughUssd(p.t, partner, other, '1000');
    const payment = await settledSide(p.t, partner, otherOrder, 'payment', 9_000);
    expect(payment.status).toBe('SUCCESS');
    expect((await orderRow(p.t, otherOrder))?.status).toBe('EXECUTED');

    // Meanwhile the slow push's answer has not come: its call is still in flight, its request SENDING.
    const slowPayment = (await statusOf(p.t, partner, slowOrder)).payment!;
    const [request] = await rows<{ state: string }>(
      p.t.ctx.database.db,
      sql`select state from provider_requests where transaction_id = ${slowPayment.id}`,
    );
    expect(request?.state).toBe('SENDING');
    const slowPush = p.fake.requests.filter((r) => r.operation === 'stk-push' && r.scenario === 'slow');
    expect(slowPush.map((r) => r.status)).toEqual([null]);
  }, 60_000);
});
