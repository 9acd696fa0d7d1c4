import type { FakeOperation, FakeScenario } from '@partner-api/fakes';
import { POSTGRES_SKIP_REASON } from '@partner-api/testkit/app.ts';
import { createPartner, type Partner } from '@partner-api/testkit/partner.ts';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rows } from '../../../src/db/query.ts';
import { upsertStocks } from '../../../src/services/stocks/upsert.ts';
import {
  insertCustomer,
  insertHolding,
  orderRow,
  type UssdData,
  ussdClient,
  waitFor,
} from '../../ussd/support.ts';
import {
  buyThroughUssd,
  CALLBACK_TOKEN,
  notesOf,
  type Production,
  requestStateOf,
  sellThroughUssd,
  settledSide,
  startProduction,
  statusOf,
  transactionRow,
} from './production.ts';

if (!process.env.DATABASE_URL) console.warn(`production M-Pesa end to end: ${POSTGRES_SKIP_REASON}`);

/** The client deadline of every Daraja call here, and the fake's `slow` answer (well past it). */
const REQUEST_TIMEOUT_MS = 1500;
const SLOW_RESPONSE_MS = 4000;
/** A collection nobody can tell us about fails at this age (PAYMENT_MAX_PENDING_SECONDS). */
const MAX_PENDING_SECONDS = 8;

/**
 * Production as it goes live (APP_ENV=production needs PostgreSQL, so this suite runs only with
 * DATABASE_URL): customers buy, sell and cancel through USSD, money moves through the Daraja fake
 * over HTTP, and every failure mode the fake can inject ends in the right final status with exactly
 * one collection prompt or payout counted at the fake.
 */
describe.skipIf(!process.env.DATABASE_URL)('production on M-Pesa (the Daraja fake), end to end', () => {
  let p: Production;
  let stockIds: { sell: string };
  let msisdnSeq = 100;
  const nextMsisdn = () => `2547120${String(msisdnSeq++).padStart(5, '0')}`;

  beforeAll(async () => {
    p = await startProduction(
      {
        MPESA_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
        PAYMENT_BACKOFF_BASE_MS: '100',
        PAYMENT_BACKOFF_MAX_MS: '400',
        PAYMENT_MAX_ATTEMPTS: '4',
        PAYMENT_MAX_PENDING_SECONDS: String(MAX_PENDING_SECONDS),
      },
      { lateCallbackMs: 1200, slowResponseMs: SLOW_RESPONSE_MS },
    );
    const [sell] = await rows<{ id: string }>(
      p.t.ctx.database.db,
      sql`select id from stocks where symbol = 'ZZSELL'`,
    );
    stockIds = { sell: sell!.id };
  }, 60_000);
  afterAll(async () => {
    await p?.close();
  });

  /** Sets up the next request of `operation` to meet `scenario` (`expired-token`: every token so far refused). */
  const inject = (operation: FakeOperation, scenario: FakeScenario | 'expired-token' | null) => {
    if (scenario === 'expired-token') p.fake.expireTokens();
    else if (scenario) p.fake.queue(operation, scenario);
  };
  const newCustomer = async () => {
    const partner = await createPartner(p.t);
    const msisdn = nextMsisdn();
    return { partner, msisdn, customerId: await insertCustomer(p.t, partner, { msisdn }) };
  };

  /** Waits until the request behind the order's `side` is in the operator's queue; that side as the partner sees it. */
  const withTheOperator = (partner: Partner, orderId: string, side: 'payment' | 'disbursement') =>
    waitFor(
      async () => {
        const d = (await statusOf(p.t, partner, orderId))[side]!;
        return (await requestStateOf(p.t, d.id))?.state === 'OPERATOR' ? d : undefined;
      },
      (MAX_PENDING_SECONDS + 12) * 1000,
      `the ${side} of ${orderId} to reach the operator`,
    );

  type CollectionCase = {
    scenario: FakeScenario | 'expired-token' | null;
    /** The payment's final status, or PENDING with the request in the operator's queue. */
    status: 'SUCCESS' | 'FAILED' | 'CANCELLED' | 'PENDING';
    prompts: 0 | 1;
    /** The transaction's failure reason, or (PENDING) the request's last error for the operator. */
    reason?: RegExp;
    decision?: RegExp;
  };
  const COLLECTIONS: CollectionCase[] = [
    { scenario: null, status: 'SUCCESS', prompts: 1, decision: /^decision: callback confirmed by query/ },
    { scenario: 'no-callback', status: 'SUCCESS', prompts: 1 },
    { scenario: 'duplicate-callback', status: 'SUCCESS', prompts: 1 },
    { scenario: 'late-callback', status: 'SUCCESS', prompts: 1 },
    // The callback says paid with a receipt the provider has no record of, STK Query says 1032: the
    // sources disagree, so neither executed nor failed; the operator decides (issue: query wins, customer loses).
    {
      scenario: 'contradicting-callback',
      status: 'PENDING',
      prompts: 1,
      decision: /^decision: suspicious callback: claims SUCCESS, the query says CANCELLED/,
      reason:
        /^sources disagree: a callback says paid \(receipt \w+\), the status query denies it, the provider's record of the receipt says no such payment/,
    },
    // The customer paid (callback 0 with its receipt), STK Query says 1032, and Transaction Status by
    // the receipt says Completed for our amount from our customer: the authoritative record wins.
    {
      scenario: 'query-contradicts-paid',
      status: 'SUCCESS',
      prompts: 1,
      decision: /^decision: the provider's record of \w+ shows the payment; applied SUCCESS/,
    },
    { scenario: 'cancelled', status: 'CANCELLED', prompts: 1, reason: /^M-Pesa 1032: / },
    { scenario: 'unreachable', status: 'FAILED', prompts: 1, reason: /^M-Pesa 1037: / },
    { scenario: 'insufficient', status: 'FAILED', prompts: 1, reason: /^M-Pesa 1: / },
    { scenario: 'string-code', status: 'FAILED', prompts: 1, reason: /^M-Pesa SFC_IC0003: / },
    // Daraja's 500 may or may not have prompted the customer; without a CheckoutRequestID nothing can
    // be asked, and a push is never sent twice (a second prompt could take the money twice). It is
    // never failed while the customer may have paid: at the maximum age the operator decides.
    {
      scenario: 'http-500',
      status: 'PENDING',
      prompts: 0,
      reason: new RegExp(
        `^no answer from the provider within ${MAX_PENDING_SECONDS} s .*: the customer may have paid 1000.00 KES from`,
      ),
    },
    // The customer never answers the prompt: the query says "being processed" until the maximum age.
    { scenario: 'never-answered', status: 'FAILED', prompts: 1, reason: /^no answer from the provider/ },
    // Daraja took the push but its answer came after our deadline (or the connection was reset): the
    // paying callback is adopted by number and amount, then confirmed by STK Query like any other.
    { scenario: 'slow', status: 'SUCCESS', prompts: 1 },
    { scenario: 'reset', status: 'SUCCESS', prompts: 1 },
    // Daraja calls the token invalid before its expiry: a new token, the same single push.
    { scenario: 'expired-token', status: 'SUCCESS', prompts: 1 },
  ];

  it.each(COLLECTIONS)(
    'a buy whose STK push meets $scenario ends $status with $prompts prompt(s)',
    async (c) => {
      const { partner, customerId } = await newCustomer();
      const promptsBefore = p.fake.processed('stk-push');
      inject(c.scenario === 'expired-token' ? 'token' : 'stk-push', c.scenario);
      const orderId = await buyThroughUssd(p.t, partner, customerId, '1000');
      const waitMs = (MAX_PENDING_SECONDS + 12) * 1000;
      const payment =
        c.status === 'PENDING'
          ? await withTheOperator(partner, orderId, 'payment')
          : await settledSide(p.t, partner, orderId, 'payment', waitMs);
      expect(payment.status).toBe(c.status);
      const order = await orderRow(p.t, orderId);
      expect(order?.status).toBe(
        c.status === 'SUCCESS' ? 'EXECUTED' : c.status === 'PENDING' ? 'PENDING_PAYMENT' : 'FAILED',
      );
      if (c.reason) {
        const why =
          c.status === 'PENDING'
            ? (await requestStateOf(p.t, payment.id))?.lastError
            : (await transactionRow(p.t, payment.id))?.failureReason;
        expect(why).toMatch(c.reason);
      }
      if (c.status === 'SUCCESS') {
        // Paid once: the holding is exactly the order's units, however many callbacks came.
        const [held] = await rows<{ units: string }>(
          p.t.ctx.database.db,
          sql`select sum(units)::text as units from holdings where customer_id = ${customerId}`,
        );
        expect(Number(held?.units)).toBe(Number(order?.quantity));
      }
      if (c.decision)
        expect(await notesOf(p.t, payment.id)).toContainEqual(expect.stringMatching(c.decision));
      // Late callbacks may still arrive; none may prompt again.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(p.fake.processed('stk-push') - promptsBefore).toBe(c.prompts);
      expect(await requestStateOf(p.t, payment.id)).toMatchObject({
        state: c.status === 'PENDING' ? 'OPERATOR' : 'DONE',
      });
    },
    (MAX_PENDING_SECONDS + 60) * 1000,
  );

  type PayoutCase = {
    scenario: FakeScenario | 'expired-token' | null;
    /** The disbursement's final status, or PENDING with the request in the operator's queue. */
    status: 'SUCCESS' | 'FAILED' | 'PENDING';
    payouts: 0 | 1;
    request: 'DONE' | 'OPERATOR';
  };
  const PAYOUTS: PayoutCase[] = [
    { scenario: null, status: 'SUCCESS', payouts: 1, request: 'DONE' },
    { scenario: 'no-callback', status: 'SUCCESS', payouts: 1, request: 'DONE' },
    { scenario: 'duplicate-callback', status: 'SUCCESS', payouts: 1, request: 'DONE' },
    { scenario: 'late-callback', status: 'SUCCESS', payouts: 1, request: 'DONE' },
    // The Result says paid, Transaction Status says Failed: the query's word stands. A failed payout
    // leaves the customer owed: the operator's queue (failed-payout-e2e.test.ts).
    { scenario: 'contradicting-callback', status: 'FAILED', payouts: 1, request: 'OPERATOR' },
    { scenario: 'insufficient', status: 'FAILED', payouts: 1, request: 'OPERATOR' },
    { scenario: 'string-code', status: 'FAILED', payouts: 1, request: 'OPERATOR' },
    { scenario: 'queue-timeout', status: 'SUCCESS', payouts: 1, request: 'DONE' },
    { scenario: 'slow', status: 'SUCCESS', payouts: 1, request: 'DONE' },
    { scenario: 'reset', status: 'SUCCESS', payouts: 1, request: 'DONE' },
    { scenario: 'expired-token', status: 'SUCCESS', payouts: 1, request: 'DONE' },
    // Daraja's 500 did nothing, and Transaction Status cannot confirm a payout it never had: a payout
    // is never re-sent blindly nor failed on a guess. The operator decides; the customer is owed.
    { scenario: 'http-500', status: 'PENDING', payouts: 0, request: 'OPERATOR' },
  ];

  it.each(PAYOUTS)(
    'a sell whose B2C payout meets $scenario ends $status with $payouts payout(s)',
    async (c) => {
      const { partner, customerId } = await newCustomer();
      await insertHolding(p.t, partner, customerId, stockIds.sell, '10.0000');
      const payoutsBefore = p.fake.processed('b2c-payment');
      inject(c.scenario === 'expired-token' ? 'token' : 'b2c-payment', c.scenario);
      const orderId = await sellThroughUssd(p.t, partner, customerId);
      expect(await orderRow(p.t, orderId)).toMatchObject({
        side: 'SELL',
        status: 'EXECUTED',
        amount: '120.00',
      });
      const disbursement =
        c.status === 'PENDING'
          ? await withTheOperator(partner, orderId, 'disbursement')
          : await settledSide(p.t, partner, orderId, 'disbursement', (MAX_PENDING_SECONDS + 30) * 1000).catch(
              async (error: Error) => {
                // Say what the pipeline recorded: the decisions tell where the payout stopped.
                const d = (await statusOf(p.t, partner, orderId)).disbursement;
                throw new Error(
                  `${error.message}\n${d ? (await notesOf(p.t, d.id)).join('\n') : 'no payout'}`,
                );
              },
            );
      expect(disbursement).toMatchObject({ status: c.status, amount: '120.00' });
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(p.fake.processed('b2c-payment') - payoutsBefore).toBe(c.payouts);
      expect(await requestStateOf(p.t, disbursement.id)).toMatchObject({ state: c.request });
    },
    (MAX_PENDING_SECONDS + 60) * 1000,
  );

  it('a paid buy whose stock was delisted is cancelled by the customer and refunded through B2C', async () => {
    const { partner, customerId, msisdn } = await newCustomer();
    await upsertStocks(p.t.ctx.database.db, [
      { symbol: 'ZZDELIST', name: 'Zulu Delisted Holdings', price: '10.0000', currency: 'KES' },
    ]);
    // No callback: the sweep learns of the payment a second later, after the stock is delisted.
    p.fake.queue('stk-push', 'no-callback');
    const orderId = await buyThroughUssd(p.t, partner, customerId, '500', 'ZZDELIST');
    await rows(p.t.ctx.database.db, sql`update stocks set is_active = false where symbol = 'ZZDELIST'`);
    expect(await settledSide(p.t, partner, orderId, 'payment')).toMatchObject({ status: 'SUCCESS' });
    expect(await orderRow(p.t, orderId)).toMatchObject({ status: 'PAID' });

    const payoutsBefore = p.fake.processed('b2c-payment');
    const client = ussdClient(p.t, partner);
    let screen: UssdData = await client.walk(customerId, ['2', '1', '1', '1']);
    expect(screen.currentState, screen.ussdText).toBe('CANCEL_REQUEST_CONFIRMATION');
    screen = (await client.press(screen.sessionId, '1')).json().data;
    expect(screen.currentState).toBe('REQUEST_CANCELLED');
    const refund = await settledSide(p.t, partner, orderId, 'disbursement');
    expect(refund).toMatchObject({ status: 'SUCCESS', amount: '500.00' });
    expect(await orderRow(p.t, orderId)).toMatchObject({ status: 'CANCELLED' });
    expect(p.fake.processed('b2c-payment') - payoutsBefore).toBe(1);
    const paidTo = p.fake.requests.filter((r) => r.operation === 'b2c-payment').at(-1)?.body as {
      PartyB: string;
      Amount: number;
    };
    expect(paidTo).toMatchObject({ PartyB: msisdn, Amount: 500 });
  });

  it("the operator's record shows every exchange with the path token and credentials redacted", async () => {
    const { partner, customerId } = await newCustomer();
    await insertHolding(p.t, partner, customerId, stockIds.sell, '10.0000');
    p.fake.queue('b2c-payment', 'queue-timeout');
    const orderId = await sellThroughUssd(p.t, partner, customerId);
    const payout = await settledSide(p.t, partner, orderId, 'disbursement');
    const res = await p.t.admin.inject({
      method: 'GET',
      url: `/admin/transactions/${payout.id}`,
      headers: { authorization: `Bearer ${p.t.ctx.secrets.adminToken}` },
    });
    expect(res.statusCode, res.body).toBe(200);
    const text = res.body;
    expect(text).toContain('b2c-payment');
    expect(text).toContain('callback:b2c-timeout');
    expect(text).toContain('[REDACTED]');
    expect(text).not.toContain(CALLBACK_TOKEN);
    expect(text).not.toContain('fake-security-credential');
    expect(text).not.toContain('fake-consumer-secret');
  });
});
