import { POSTGRES_SKIP_REASON } from '@partner-api/testkit/app.ts';
import { createPartner } from '@partner-api/testkit/partner.ts';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rows } from '../../../src/db/query.ts';
import { insertCustomer, orderRow, waitFor } from '../../ussd/support.ts';
import {
  buyThroughUssd,
  CALLBACK_TOKEN,
  type Production,
  settledSide,
  startProduction,
  statusOf,
} from './production.ts';

if (!process.env.DATABASE_URL) console.warn(`forged M-Pesa callbacks in production: ${POSTGRES_SKIP_REASON}`);

const MAX_PENDING_SECONDS = 90;

/** A success callback as Daraja sends it (docs/payments.md), with ids and a receipt of our choosing. */
function stkCallback(input: {
  checkoutRequestId: string;
  msisdn: string;
  amount: number;
  receipt: string;
  code?: number;
}) {
  const stkCallback: Record<string, unknown> = {
    MerchantRequestID: '29115-34620561-1',
    CheckoutRequestID: input.checkoutRequestId,
    ResultCode: input.code ?? 0,
    ResultDesc: input.code ? 'Request cancelled by user' : 'The service request is processed successfully.',
  };
  if (!input.code)
    stkCallback.CallbackMetadata = {
      Item: [
        { Name: 'Amount', Value: input.amount },
        { Name: 'MpesaReceiptNumber', Value: input.receipt },
        { Name: 'TransactionDate', Value: 20261128120000 },
        { Name: 'PhoneNumber', Value: Number(input.msisdn) },
      ],
    };
  return { Body: { stkCallback } };
}

/**
 * Production on PostgreSQL with the Daraja fake as M-Pesa, and an attacker who knows the callback
 * path (the token leaked): a callback is only ever a hint that makes us ask Daraja. Nothing from it
 * (ids, claim, receipt) is written to a request, a transaction or an order before Daraja's own query
 * confirmed it for that request; every callback is kept as it came, with its source and standing.
 */
describe.skipIf(!process.env.DATABASE_URL)('forged M-Pesa callbacks, in production', () => {
  let p: Production;
  let msisdnSeq = 0;

  beforeAll(async () => {
    p = await startProduction({
      PAYMENT_MAX_PENDING_SECONDS: String(MAX_PENDING_SECONDS),
      MPESA_REQUEST_TIMEOUT_MS: '1500',
      PAYMENT_BACKOFF_BASE_MS: '100',
      PAYMENT_BACKOFF_MAX_MS: '400',
    });
  }, 60_000);
  afterAll(async () => {
    await p?.close();
  });

  const newCustomer = async () => {
    const partner = await createPartner(p.t);
    const msisdn = `2547150000${String(msisdnSeq++).padStart(2, '0')}`;
    return { partner, msisdn, customerId: await insertCustomer(p.t, partner, { msisdn }) };
  };
  const forge = (body: unknown) =>
    fetch(`${p.listenerUrl}/v1/payments/callbacks/daraja/${CALLBACK_TOKEN}/stk`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const requestOf = async (transactionId: string) =>
    (
      await rows<{ state: string; ids: Record<string, string>; claimed: Record<string, unknown> | null }>(
        p.t.ctx.database.db,
        sql`select state, provider_ids as ids, claimed from provider_requests where transaction_id = ${transactionId}`,
      )
    )[0]!;
  const callbacksOf = (transactionId: string) =>
    rows<{ source: string | null; confirmed: boolean | null; claim: Record<string, unknown> | null }>(
      p.t.ctx.database.db,
      sql`select source_address as source, confirmed, claim from provider_exchanges
  where transaction_id = ${transactionId} and kind = 'callback' order by at, id`,
    );

  it('a forged success callback just before a push whose answer is lost takes nothing over: the real payment executes the order', async () => {
    const { partner, msisdn, customerId } = await newCustomer();
    const pushes = p.fake.processed('stk-push');
    // The push is processed by Daraja but its HTTP answer is lost (reset after processing).
    p.fake.queue('stk-push', 'reset');
    const forged = forge(
      stkCallback({
        checkoutRequestId: 'ws_CO_28112026120000000000001',
        msisdn,
        amount: 1000,
        receipt: 'FORGED0001',
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    const orderId = await buyThroughUssd(p.t, partner, customerId, '1000');
    expect((await forged).status).toBe(200);
    const payment = await settledSide(p.t, partner, orderId, 'payment', 20_000);
    expect(payment.status).toBe('SUCCESS');
    expect((await orderRow(p.t, orderId))?.status).toBe('EXECUTED');
    expect(p.fake.processed('stk-push') - pushes).toBe(1);
    const request = await requestOf(payment.id);
    // The ids are Daraja's own, adopted after STK Query confirmed them; the forged ones never landed.
    expect(request.ids.checkoutRequestId).toMatch(/^ws_CO_/);
    expect(request.ids.checkoutRequestId).not.toBe('ws_CO_28112026120000000000001');
    expect(JSON.stringify(request)).not.toContain('FORGED0001');
    const [row] = await rows<{ reference: string }>(
      p.t.ctx.database.db,
      sql`select provider_reference as reference from transactions where id = ${payment.id}`,
    );
    // The partner reconciles by the M-Pesa receipt (ten characters), not our request id.
    expect(row?.reference).toMatch(/^[A-Z0-9]{10}$/);
    expect(row?.reference).not.toBe('FORGED0001');
    expect(request.claimed).toMatchObject({ status: 'SUCCESS', receipt: row?.reference });
  }, 60_000);

  it('after a request has settled, a forged callback is kept as a record and never overwrites the confirmed facts', async () => {
    const { partner, msisdn, customerId } = await newCustomer();
    p.fake.queue('stk-push', 'cancelled');
    const orderId = await buyThroughUssd(p.t, partner, customerId, '1000');
    const payment = await settledSide(p.t, partner, orderId, 'payment', 20_000);
    expect(payment.status).toBe('CANCELLED');
    const before = await requestOf(payment.id);
    expect(before.state).toBe('DONE');
    expect(before.claimed).toMatchObject({ status: 'CANCELLED' });
    expect((await callbacksOf(payment.id)).map((c) => c.confirmed)).toEqual([true]);

    const res = await forge(
      stkCallback({
        checkoutRequestId: before.ids.checkoutRequestId!,
        msisdn,
        amount: 1000,
        receipt: 'FORGED0001',
      }),
    );
    expect(res.status).toBe(200);
    const callbacks = await waitFor(
      async () => {
        const all = await callbacksOf(payment.id);
        return all.length === 2 && all[1]!.confirmed !== null ? all : undefined;
      },
      10_000,
      'the forged callback to be checked',
    );
    // Kept as it came, with where it came from, and marked as not confirmed by Daraja.
    expect(callbacks[1]).toEqual({
      source: '127.0.0.1',
      confirmed: false,
      claim: { status: 'SUCCESS', receipt: 'FORGED0001' },
    });
    const after = await requestOf(payment.id);
    expect(after.claimed).toEqual(before.claimed);
    expect((await statusOf(p.t, partner, orderId)).payment?.status).toBe('CANCELLED');
    expect((await orderRow(p.t, orderId))?.status).toBe('FAILED');
    // No refund was queued for a payment that never happened.
    expect((await statusOf(p.t, partner, orderId)).disbursement).toBeUndefined();
    // The operator's record shows every callback with its source, claim and standing.
    const record = await p.t.admin.inject({
      method: 'GET',
      url: `/admin/transactions/${payment.id}`,
      headers: { authorization: `Bearer ${p.t.ctx.secrets.adminToken}` },
    });
    expect(record.statusCode, record.body).toBe(200);
    const shown = (record.json() as { exchanges: Array<Record<string, unknown>> }).exchanges.filter(
      (e) => e.kind === 'callback',
    );
    expect(shown.map((e) => [e.sourceAddress, e.confirmed, (e.claim as { status: string }).status])).toEqual([
      ['127.0.0.1', true, 'CANCELLED'],
      ['127.0.0.1', false, 'SUCCESS'],
    ]);
  }, 60_000);
});
