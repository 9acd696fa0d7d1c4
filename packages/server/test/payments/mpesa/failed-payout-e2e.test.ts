import type { FakeScenario } from '@partner-api/fakes';
import { POSTGRES_SKIP_REASON } from '@partner-api/testkit/app.ts';
import { runCli } from '@partner-api/testkit/helpers.ts';
import { createPartner, type Partner } from '@partner-api/testkit/partner.ts';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rows } from '../../../src/db/query.ts';
import { insertCustomer, insertHolding, orderRow, waitFor } from '../../ussd/support.ts';
import { dataOf } from '../../webhooks/api-support.ts';
import {
  buyThroughUssd,
  type Production,
  requestStateOf,
  sellThroughUssd,
  startProduction,
  statusOf,
  transactionRow,
} from './production.ts';

if (!process.env.DATABASE_URL) console.warn(`M-Pesa failed payouts end to end: ${POSTGRES_SKIP_REASON}`);

const MAX_PENDING_SECONDS = 8;
const TS_FAILED = 'M-Pesa Transaction Status: Failed';

type Stuck = {
  transactionId: string;
  state: string;
  lastError: string | null;
  transaction: { status: string; amount: string; currency: string; msisdn: string; orderId: string };
};
type Exchange = {
  kind: string;
  operation: string;
  sourceAddress: string | null;
  requestBody: unknown;
  responseBody: unknown;
  note: string | null;
  confirmed: boolean | null;
  claim: Record<string, unknown> | null;
};

/**
 * In production on PostgreSQL with the Daraja fake over HTTP. A sell's B2C payout
 * fails: a failure Result (code 1, 2, 2001 or SFC_IC0003), then Transaction Status answering
 * ResultCode 0 with TransactionStatus "Failed". The payout is FAILED as the partner sees it (payment
 * status, TRANSACTION.UPDATED), and what the customer is owed is in the operator's queue (admin API
 * and CLI). The operator retries the payout (paid once) or records it paid another way, audited,
 * once. Before this, "Failed" was read as pending and the payout re-queried for ever.
 */
describe.skipIf(!process.env.DATABASE_URL)('a failed M-Pesa payout in production, and the operator', () => {
  let p: Production;
  let adminUrl: string;
  let sellStock: string;
  let msisdnSeq = 0;

  beforeAll(async () => {
    p = await startProduction({
      PAYMENT_BACKOFF_BASE_MS: '100',
      PAYMENT_BACKOFF_MAX_MS: '400',
      PAYMENT_MAX_ATTEMPTS: '4',
      PAYMENT_MAX_PENDING_SECONDS: String(MAX_PENDING_SECONDS),
      WEBHOOKS_PREVIEW: 'true',
    });
    adminUrl = await p.t.admin.listen({ host: '127.0.0.1', port: 0 });
    [{ id: sellStock }] = (await rows<{ id: string }>(
      p.t.ctx.database.db,
      sql`select id from stocks where symbol = 'ZZSELL'`,
    )) as [{ id: string }];
  }, 180_000);
  afterAll(async () => {
    await p?.close();
  });

  const newSeller = async () => {
    const partner = await createPartner(p.t);
    const msisdn = `2547190000${String(msisdnSeq++).padStart(2, '0')}`;
    const customerId = await insertCustomer(p.t, partner, { msisdn });
    await insertHolding(p.t, partner, customerId, sellStock, '10.0000');
    return { partner, customerId, msisdn };
  };
  const admin = (method: 'GET' | 'POST', url: string, payload?: Record<string, unknown>) =>
    p.t.admin.inject({
      method,
      url,
      headers: { authorization: `Bearer ${p.t.ctx.secrets.adminToken}` },
      ...(payload ? { payload } : {}),
    });
  const resolve = (transactionId: string, body: Record<string, unknown>) =>
    admin('POST', `/admin/payments/${transactionId}/resolve`, body);
  const cli = (...args: string[]) =>
    runCli(['--json', ...args], { ADMIN_URL: adminUrl, ADMIN_TOKEN: p.t.ctx.secrets.adminToken });
  /** B2C requests Daraja processed for this number, and how many of them paid (a Result with code 0). */
  const payoutsTo = (msisdn: string) => {
    const processed = p.fake.requests.filter(
      (r) =>
        r.operation === 'b2c-payment' &&
        r.status === 200 &&
        (r.body as { PartyB?: string }).PartyB === msisdn,
    ).length;
    const paid = p.fake.callbacks.filter((c) => {
      const result = (c.body as { Result?: { ResultCode?: unknown; ResultParameters?: unknown } }).Result;
      return (
        c.kind === 'b2c-result' &&
        result?.ResultCode === 0 &&
        JSON.stringify(result.ResultParameters).includes(`"${msisdn} - `)
      );
    }).length;
    return { processed, paid };
  };
  const exchangesOf = async (transactionId: string) => {
    const shown = await admin('GET', `/admin/transactions/${transactionId}`);
    expect(shown.statusCode, shown.body).toBe(200);
    return shown.json().exchanges as Exchange[];
  };
  /** Sells through USSD with the payout meeting `scenario`; the payout once its request is with the operator. */
  const failedPayout = async (partner: Partner, customerId: string, scenario: FakeScenario) => {
    p.fake.queue('b2c-payment', scenario);
    const orderId = await sellThroughUssd(p.t, partner, customerId);
    const payout = await waitFor(
      async () => {
        // The request's state first: the transaction read after it is at least as new.
        const id = (await statusOf(p.t, partner, orderId)).disbursement?.id;
        if (!id || (await requestStateOf(p.t, id))?.state !== 'OPERATOR') return undefined;
        return (await statusOf(p.t, partner, orderId)).disbursement;
      },
      (MAX_PENDING_SECONDS + 60) * 1000,
      `the payout of ${orderId} to reach the operator`,
    );
    return { orderId, payout };
  };

  /** The order's payout as the partner sees it, once it is `id` (the newest) and settled. */
  const settledPayout = (partner: Partner, orderId: string, id: string) =>
    waitFor(
      async () => {
        const d = (await statusOf(p.t, partner, orderId)).disbursement;
        return d && d.id === id && d.status !== 'PENDING' ? d : undefined;
      },
      60_000,
      `the payout ${id} to settle`,
    );

  it.each([
    ['insufficient', 'M-Pesa 1: The balance is insufficient for the transaction'],
    ['below-minimum', 'M-Pesa 2: Declined due to limit rule: less than the minimum transaction amount'],
    ['string-code', 'M-Pesa SFC_IC0003: The operator does not exist'],
    ['initiator-invalid', 'M-Pesa 2001: The initiator information is invalid'],
  ] as const)(
    'a B2C Result %s, then Transaction Status "Failed": FAILED for the partner, owed in the operator queue',
    async (scenario, code) => {
      const { partner, customerId, msisdn } = await newSeller();
      const { orderId, payout } = await failedPayout(partner, customerId, scenario);
      const reason = `${code}; confirmed by ${TS_FAILED}`;
      // The partner: the payment status and the TRANSACTION.UPDATED event say FAILED, with the reason.
      expect(payout).toMatchObject({ status: 'FAILED', amount: '120.00' });
      const updates = await dataOf(p.t, partner.organizationId, 'TRANSACTION.UPDATED');
      expect(updates.filter((d) => d.transactionId === payout.id)).toEqual([
        expect.objectContaining({
          status: 'FAILED',
          type: 'OUTGOING',
          amount: '120.00',
          failureReason: reason,
        }),
      ]);
      // The units stay sold, the order executed; the customer is owed the proceeds.
      expect((await orderRow(p.t, orderId))?.status).toBe('EXECUTED');
      const stored = await rows<{ msisdn: string; claimed: unknown }>(
        p.t.ctx.database.db,
        sql`select t.msisdn, r.claimed from transactions t join provider_requests r on r.transaction_id = t.id
  where t.id = ${payout.id}`,
      );
      const number = stored[0]!.msisdn;
      expect(await requestStateOf(p.t, payout.id)).toEqual({
        state: 'OPERATOR',
        lastError: `payout failed (${reason}): the customer is owed KES 120.00 to ${number} for order ${orderId}; retry the payout or pay another way (partner-api payments resolve ${payout.id})`,
      });
      // The failure Result came first: confirmed by Transaction Status, it is the request's claim.
      expect(stored[0]!.claimed).toMatchObject({ status: 'FAILED', reason: expect.stringContaining(code) });
      const callbacks = (await exchangesOf(payout.id)).filter((e) => e.kind === 'callback');
      expect(callbacks).toEqual([
        expect.objectContaining({
          operation: 'callback:b2c-result',
          claim: expect.objectContaining({ status: 'FAILED' }),
          confirmed: true,
        }),
      ]);
      // In the operator's queue, with what is owed.
      const stuck = await admin('GET', '/admin/payments/stuck?olderThanSeconds=0&limit=1000');
      expect((stuck.json().data as Stuck[]).find((s) => s.transactionId === payout.id)).toMatchObject({
        state: 'OPERATOR',
        transaction: { status: 'FAILED', amount: '120.00', currency: 'KES', msisdn: number, orderId },
      });
      expect(payoutsTo(msisdn)).toEqual({ processed: 1, paid: 0 });
    },
    180_000,
  );

  it('retry-payout, with Daraja now paying, pays the customer exactly once; concurrent or repeated resolutions are refused', async () => {
    const { partner, customerId, msisdn } = await newSeller();
    const { orderId, payout } = await failedPayout(partner, customerId, 'initiator-invalid');
    // The CLI's queue shows it too.
    const listed = await cli('payments', 'stuck', '--older-than', '0', '--limit', '1000');
    expect(listed.code, listed.stderr).toBe(0);
    expect((JSON.parse(listed.stdout) as Stuck[]).map((s) => s.transactionId)).toContain(payout.id);

    // Two operators at once: one wins, the other is refused and changes nothing.
    const body = { action: 'retry-payout', reason: 'initiator credential renewed', operator: 'amina' };
    const both = await Promise.all([resolve(payout.id, body), resolve(payout.id, body)]);
    expect(both.map((r) => r.statusCode).sort()).toEqual([200, 409]);
    const won = both.find((r) => r.statusCode === 200)!;
    const lost = both.find((r) => r.statusCode === 409)!;
    expect(lost.json()).toEqual({
      error: 'Conflict',
      message: 'Nothing to resolve: the payout is FAILED and closed',
    });
    const { data } = won.json() as { data: { newTransactionId: string } };
    expect(data).toEqual({
      transactionId: payout.id,
      action: 'retry-payout',
      status: 'FAILED',
      state: 'DONE',
      newTransactionId: expect.any(String),
      queued: true,
    });

    const newest = await settledPayout(partner, orderId, data.newTransactionId);
    expect(newest).toMatchObject({ status: 'SUCCESS', amount: '120.00' });
    // The failed payout stays FAILED for the record; the partner was told of the new one.
    expect((await transactionRow(p.t, payout.id))?.status).toBe('FAILED');
    const created = await dataOf(p.t, partner.organizationId, 'TRANSACTION.CREATED');
    expect(created.map((d) => d.transactionId)).toEqual([payout.id, data.newTransactionId]);

    // Audited: who, from where, what and why, before and after, on the failed payout's record.
    const [decision] = (await exchangesOf(payout.id)).filter((e) => e.operation === 'resolve');
    expect(decision).toMatchObject({
      kind: 'decision',
      sourceAddress: '127.0.0.1',
      requestBody: { action: 'retry-payout', reason: 'initiator credential renewed', operator: 'amina' },
      responseBody: {
        before: { status: 'FAILED', state: 'OPERATOR' },
        after: { status: 'FAILED', state: 'DONE' },
        newTransactionId: data.newTransactionId,
      },
    });
    // Once: later resolutions are refused, and nothing more is paid.
    const again = await resolve(payout.id, { action: 'paid-another-way', reason: 'double', receipt: 'X1' });
    expect(again.statusCode).toBe(409);
    await new Promise((r) => setTimeout(r, 500));
    expect(payoutsTo(msisdn)).toEqual({ processed: 2, paid: 1 });
  }, 180_000);

  it('paid another way, through the CLI: the debt closed with the reference, nothing sent', async () => {
    const { partner, customerId, msisdn } = await newSeller();
    const { orderId, payout } = await failedPayout(partner, customerId, 'insufficient');
    const resolveArgs = ['payments', 'resolve', payout.id, '--action', 'paid-another-way'];
    const noReceipt = await cli(...resolveArgs, '--reason', 'paid at the branch');
    expect(noReceipt.code).toBe(1);
    expect(noReceipt.stderr).toContain('paid-another-way needs the receipt or reference of the payment');
    expect((await requestStateOf(p.t, payout.id))?.state).toBe('OPERATOR');

    const done = await cli(...resolveArgs, '--reason', 'paid at the branch', '--receipt', 'BANK-TRF-0042');
    expect(done.code, done.stderr).toBe(0);
    const { data } = JSON.parse(done.stdout) as { data: { newTransactionId: string } };
    expect(data).toMatchObject({
      action: 'paid-another-way',
      status: 'FAILED',
      state: 'DONE',
      queued: false,
    });
    expect((await statusOf(p.t, partner, orderId)).disbursement).toMatchObject({
      id: data.newTransactionId,
      status: 'SUCCESS',
      amount: '120.00',
    });
    const [paidRow] = await rows<{ reference: string }>(
      p.t.ctx.database.db,
      sql`select provider_reference as reference from transactions where id = ${data.newTransactionId}`,
    );
    expect(paidRow?.reference).toBe('BANK-TRF-0042');
    const [decision] = (await exchangesOf(payout.id)).filter((e) => e.operation === 'resolve');
    expect(decision?.requestBody).toEqual({
      action: 'paid-another-way',
      reason: 'paid at the branch',
      operator: 'admin-token',
      receipt: 'BANK-TRF-0042',
    });
    const twice = await cli(...resolveArgs, '--reason', 'again', '--receipt', 'BANK-TRF-0042');
    expect(twice.code).toBe(1);
    expect(twice.stderr).toContain('"error":"Conflict"');
    await new Promise((r) => setTimeout(r, 500));
    expect(payoutsTo(msisdn)).toEqual({ processed: 1, paid: 0 });
  }, 180_000);

  it('a payout Daraja never took (HTTP 500), with the operator while PENDING: retried once, the old one FAILED', async () => {
    const { partner, customerId, msisdn } = await newSeller();
    const { orderId, payout } = await failedPayout(partner, customerId, 'http-500');
    expect(payout.status).toBe('PENDING');
    const ok = await resolve(payout.id, {
      action: 'retry-payout',
      reason: 'Daraja has no record of it in the org portal',
    });
    expect(ok.statusCode, ok.body).toBe(200);
    const { data } = ok.json() as { data: { newTransactionId: string } };
    expect(await transactionRow(p.t, payout.id)).toEqual({
      status: 'FAILED',
      failureReason: "not paid: the operator found no payout in the provider's records",
    });
    const newest = await settledPayout(partner, orderId, data.newTransactionId);
    expect(newest.status).toBe('SUCCESS');
    expect(payoutsTo(msisdn)).toEqual({ processed: 1, paid: 1 });
  }, 180_000);

  it('a collection the pipeline could not ask about: the operator finds it paid, and the order executes', async () => {
    const partner = await createPartner(p.t);
    const customerId = await insertCustomer(p.t, partner, { msisdn: '254719100001' });
    p.fake.queue('stk-push', 'http-500');
    const orderId = await buyThroughUssd(p.t, partner, customerId, '1000');
    const payment = await waitFor(
      async () => {
        const d = (await statusOf(p.t, partner, orderId)).payment;
        return d && (await requestStateOf(p.t, d.id))?.state === 'OPERATOR' ? d : undefined;
      },
      (MAX_PENDING_SECONDS + 60) * 1000,
      'the collection to reach the operator',
    );
    expect(payment.status).toBe('PENDING');
    const wrong = await resolve(payment.id, { action: 'retry-payout', reason: 'not a payout' });
    expect(wrong.statusCode).toBe(409);
    const ok = await resolve(payment.id, {
      action: 'paid',
      reason: 'found in the M-Pesa org portal statement',
      receipt: 'SKL1AB2CDE',
    });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json().data).toMatchObject({ status: 'SUCCESS', state: 'DONE', queued: false });
    expect((await statusOf(p.t, partner, orderId)).payment?.status).toBe('SUCCESS');
    expect((await orderRow(p.t, orderId))?.status).toBe('EXECUTED');
    const [tx] = await rows<{ reference: string }>(
      p.t.ctx.database.db,
      sql`select provider_reference as reference from transactions where id = ${payment.id}`,
    );
    expect(tx?.reference).toBe('SKL1AB2CDE');
  }, 180_000);
});
