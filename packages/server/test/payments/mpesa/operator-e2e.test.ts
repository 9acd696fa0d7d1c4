import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rows } from '../../../src/db/query.ts';
import { POSTGRES_SKIP_REASON } from '../../support/app.ts';
import { createPartner, type Partner } from '../../support/partner.ts';
import { insertCustomer, insertHolding, orderRow, waitFor } from '../../ussd/support.ts';
import {
  buyThroughUssd,
  notesOf,
  type Production,
  requestStateOf,
  sellThroughUssd,
  startProduction,
  statusOf,
} from './production.ts';

if (!process.env.DATABASE_URL)
  console.warn(`M-Pesa failed payouts and the operator: ${POSTGRES_SKIP_REASON}`);

const MAX_PENDING_SECONDS = 8;

/**
 * Production on PostgreSQL with the Daraja fake. A B2C payout fails (a failure Result, then
 * Transaction Status answering ResultCode 0 with TransactionStatus "Failed"): the failure is recorded,
 * the partner sees it, and what the customer is owed is in front of the operator, who retries the
 * payout or records it paid another way, audited. A collection the pipeline could not decide is
 * decided by the operator too.
 */
describe.skipIf(!process.env.DATABASE_URL)('failed M-Pesa payouts and the operator, in production', () => {
  let p: Production;
  let sellStock: string;
  let msisdnSeq = 0;

  beforeAll(async () => {
    p = await startProduction({
      PAYMENT_BACKOFF_BASE_MS: '100',
      PAYMENT_BACKOFF_MAX_MS: '400',
      PAYMENT_MAX_ATTEMPTS: '4',
      PAYMENT_MAX_PENDING_SECONDS: String(MAX_PENDING_SECONDS),
    });
    [{ id: sellStock }] = (await rows<{ id: string }>(
      p.t.ctx.database.db,
      sql`select id from stocks where symbol = 'ZZSELL'`,
    )) as [{ id: string }];
  }, 60_000);
  afterAll(async () => {
    await p?.close();
  });

  const newSeller = async () => {
    const partner = await createPartner(p.t);
    const msisdn = `2547180000${String(msisdnSeq++).padStart(2, '0')}`;
    const customerId = await insertCustomer(p.t, partner, { msisdn });
    await insertHolding(p.t, partner, customerId, sellStock, '10.0000');
    return { partner, customerId, msisdn };
  };
  const resolve = (transactionId: string, body: Record<string, unknown>) =>
    p.t.admin.inject({
      method: 'POST',
      url: `/admin/payments/${transactionId}/resolve`,
      headers: { authorization: `Bearer ${p.t.ctx.secrets.adminToken}` },
      payload: body,
    });
  /** A sell whose payout fails at Daraja: the failed payout as the partner sees it, once owed. */
  const failedPayout = async (partner: Partner, customerId: string) => {
    p.fake.queue('b2c-payment', 'initiator-invalid');
    const orderId = await sellThroughUssd(p.t, partner, customerId);
    const payout = await waitFor(
      async () => {
        const d = (await statusOf(p.t, partner, orderId)).disbursement;
        return d && (await requestStateOf(p.t, d.id))?.state === 'OPERATOR' ? d : undefined;
      },
      20_000,
      'the failed payout to reach the operator',
    );
    return { orderId, payout };
  };

  it('a failed payout is FAILED for the partner and owed in front of the operator; a retry pays it once', async () => {
    const { partner, customerId, msisdn } = await newSeller();
    const paidBefore = p.fake.processed('b2c-payment');
    const { orderId, payout } = await failedPayout(partner, customerId);
    expect(payout.status).toBe('FAILED');
    const request = await requestStateOf(p.t, payout.id);
    expect(request?.lastError).toMatch(
      new RegExp(
        `^payout failed \\(M-Pesa 2001: The initiator information is invalid; confirmed by M-Pesa Transaction Status: Failed\\): the customer is owed KES 120.00 to \\+?${msisdn} for order ${orderId}`,
      ),
    );
    // In the operator's list of stuck work.
    const stuck = await p.t.admin.inject({
      method: 'GET',
      url: '/admin/payments/stuck?olderThanSeconds=0',
      headers: { authorization: `Bearer ${p.t.ctx.secrets.adminToken}` },
    });
    expect(stuck.body).toContain(payout.id);
    // The units stay sold; the order stays executed.
    expect((await orderRow(p.t, orderId))?.status).toBe('EXECUTED');

    const retried = await resolve(payout.id, {
      action: 'retry-payout',
      reason: 'Daraja initiator credential renewed',
      operator: 'amina',
    });
    expect(retried.statusCode, retried.body).toBe(200);
    const { data } = retried.json() as { data: { newTransactionId: string; status: string } };
    expect(data.status).toBe('FAILED');
    const newest = await waitFor(
      async () => {
        const d = (await statusOf(p.t, partner, orderId)).disbursement;
        return d && d.id === data.newTransactionId && d.status !== 'PENDING' ? d : undefined;
      },
      20_000,
      'the new payout to settle',
    );
    expect(newest.status).toBe('SUCCESS');
    expect(p.fake.processed('b2c-payment') - paidBefore).toBe(2);
    expect(await requestStateOf(p.t, payout.id)).toMatchObject({ state: 'DONE' });
    // Audited: who, from where, what, why, before and after.
    expect(await notesOf(p.t, payout.id)).toContainEqual(
      `decision: operator amina from 127.0.0.1: retry-payout: Daraja initiator credential renewed; FAILED/OPERATOR -> FAILED/DONE; new payout ${data.newTransactionId}`,
    );
    // Once: a second resolution of the same debt is refused and changes nothing.
    const again = await resolve(payout.id, { action: 'retry-payout', reason: 'double click' });
    expect(again.statusCode).toBe(409);
    expect(again.json()).toEqual({
      error: 'Conflict',
      message: 'Only a failed payout whose customer is still owed can be paid again',
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(p.fake.processed('b2c-payment') - paidBefore).toBe(2);
  }, 60_000);

  it('paid another way: recorded paid with the reference, no payout sent; a receipt is required', async () => {
    const { partner, customerId } = await newSeller();
    const { orderId, payout } = await failedPayout(partner, customerId);
    const paidBefore = p.fake.processed('b2c-payment');
    const noReceipt = await resolve(payout.id, { action: 'paid-another-way', reason: 'paid at the branch' });
    expect(noReceipt.statusCode).toBe(400);
    expect(noReceipt.json()).toEqual({
      error: 'Invalid request',
      message: "paid-another-way needs the provider's receipt",
    });
    expect((await requestStateOf(p.t, payout.id))?.state).toBe('OPERATOR');
    const ok = await resolve(payout.id, {
      action: 'paid-another-way',
      reason: 'paid at the branch',
      receipt: 'BANK-TRF-0042',
    });
    expect(ok.statusCode, ok.body).toBe(200);
    const shown = (await statusOf(p.t, partner, orderId)).disbursement;
    expect(shown?.status).toBe('SUCCESS');
    expect(shown?.id).not.toBe(payout.id);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(p.fake.processed('b2c-payment')).toBe(paidBefore);
  }, 60_000);

  it('a collection the pipeline could not ask about: the operator finds it paid, and the order executes', async () => {
    const partner = await createPartner(p.t);
    const customerId = await insertCustomer(p.t, partner, { msisdn: '254718100001' });
    p.fake.queue('stk-push', 'http-500');
    const orderId = await buyThroughUssd(p.t, partner, customerId, '1000');
    const payment = await waitFor(
      async () => {
        const d = (await statusOf(p.t, partner, orderId)).payment;
        return d && (await requestStateOf(p.t, d.id))?.state === 'OPERATOR' ? d : undefined;
      },
      (MAX_PENDING_SECONDS + 15) * 1000,
      'the collection to reach the operator',
    );
    expect(payment.status).toBe('PENDING');
    const unknown = await resolve('cmx0000000000000000000000', {
      action: 'paid',
      reason: 'x y z',
      receipt: 'R',
    });
    expect(unknown.statusCode).toBe(404);
    const ok = await resolve(payment.id, {
      action: 'paid',
      reason: 'found in the M-Pesa org portal statement',
      receipt: 'SKL1AB2CDE',
    });
    expect(ok.statusCode, ok.body).toBe(200);
    expect((await statusOf(p.t, partner, orderId)).payment?.status).toBe('SUCCESS');
    expect((await orderRow(p.t, orderId))?.status).toBe('EXECUTED');
    const [tx] = await rows<{ reference: string }>(
      p.t.ctx.database.db,
      sql`select provider_reference as reference from transactions where id = ${payment.id}`,
    );
    expect(tx?.reference).toBe('SKL1AB2CDE');
  }, 60_000);
});
