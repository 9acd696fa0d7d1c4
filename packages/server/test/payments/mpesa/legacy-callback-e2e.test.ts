import type { FakeScenario } from '@partner-api/fakes';
import { POSTGRES_SKIP_REASON } from '@partner-api/testkit/app.ts';
import { createPartner, type Partner } from '@partner-api/testkit/partner.ts';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { one, rows } from '../../../src/db/query.ts';
import { signCallback } from '../../../src/services/payments/callback-signature.ts';
import { ensureCatalog, insertCustomer, orderRow, waitFor } from '../../ussd/support.ts';
import { placePendingBuy } from '../support.ts';
import {
  buyThroughUssd,
  notesOf,
  type Production,
  requestStateOf,
  settledSide,
  startProduction,
  statusOf,
} from './production.ts';

if (!process.env.DATABASE_URL)
  console.warn(`the signed callback route in production: ${POSTGRES_SKIP_REASON}`);

/**
 * Production on PostgreSQL with the Daraja fake: `POST /v1/webhooks/callback`, correctly signed and
 * fresh, claims a payment M-Pesa has not confirmed. It settles nothing: the message is a hint, Daraja
 * is asked, and nothing is applied that Daraja has not confirmed; the receipt it names is not
 * Daraja's word either (docs/decisions.md, "The signed callback route").
 */
describe.skipIf(!process.env.DATABASE_URL)(
  'the signed callback route on a real provider, in production',
  () => {
    let p: Production;

    beforeAll(async () => {
      // The sweep's first STK Query comes 3 s after a push is accepted: the signed message comes first.
      p = await startProduction({
        MPESA_RECONCILE_AFTER_SECONDS: '3',
        PAYMENT_BACKOFF_BASE_MS: '100',
        PAYMENT_BACKOFF_MAX_MS: '400',
      });
    }, 60_000);
    afterAll(async () => {
      await p?.close();
    });

    /** POSTs the legacy callback, signed now with the production secret, to the real listener. */
    async function postSigned(body: Record<string, unknown>) {
      const raw = JSON.stringify(body);
      const res = await fetch(`${p.listenerUrl}/v1/webhooks/callback`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-callback-signature': signCallback(p.t.ctx.secrets.providerCallbackSecret, raw),
        },
        body: raw,
      });
      return { status: res.status, body: await res.json() };
    }
    const unitsOf = async (customerId: string) =>
      Number(
        (
          await one<{ units: string | null }>(
            p.t.ctx.database.db,
            sql`select sum(units)::text as units from holdings where customer_id = ${customerId}`,
          )
        )?.units ?? 0,
      );
    const referenceOf = async (transactionId: string) =>
      (
        await one<{ reference: string | null }>(
          p.t.ctx.database.db,
          sql`select provider_reference as reference from transactions where id = ${transactionId}`,
        )
      )?.reference;

    /**
     * A KES 1000 buy whose STK push meets `scenario`, once Daraja took the push (its
     * CheckoutRequestID is stored, so Daraja can be asked about it); the order and its payment.
     */
    async function acceptedBuy(partner: Partner, customerId: string, scenario: FakeScenario) {
      p.fake.queue('stk-push', scenario);
      const orderId = await buyThroughUssd(p.t, partner, customerId, '1000');
      const payment = (await statusOf(p.t, partner, orderId)).payment!;
      await waitFor(
        async () => ((await requestStateOf(p.t, payment.id))?.state === 'AWAITING' ? true : undefined),
        10_000,
        'the push to be accepted',
      );
      return { orderId, payment };
    }

    it('a signed SUCCESS for a payment M-Pesa still calls pending executes nothing and says so (202)', async () => {
      const partner = await createPartner(p.t);
      const customerId = await insertCustomer(p.t, partner, { msisdn: '254717000001' });
      const { orderId, payment } = await acceptedBuy(partner, customerId, 'never-answered');
      const queriesBefore = p.fake.requests.filter((r) => r.operation === 'stk-query').length;
      const res = await postSigned({
        transactionId: payment.id,
        status: 'SUCCESS',
        providerReference: 'FORGED-LEGACY-1',
      });
      expect(res.status).toBe(202);
      expect(res.body).toEqual({
        message: 'Callback received; the provider has not confirmed it',
        data: { transactionId: payment.id, status: 'PENDING' },
      });
      // Daraja was asked (STK Query, "being processed") before the answer was given.
      expect(p.fake.requests.filter((r) => r.operation === 'stk-query').length).toBeGreaterThan(
        queriesBefore,
      );
      expect(await notesOf(p.t, payment.id)).toContain(
        'decision: callback unconfirmed: the query says pending',
      );
      expect((await statusOf(p.t, partner, orderId)).payment?.status).toBe('PENDING');
      expect((await orderRow(p.t, orderId))?.status).toBe('PENDING_PAYMENT');
      expect(await unitsOf(customerId)).toBe(0);
      // Kept as a record of what was claimed, from where; still unconfirmed.
      const kept = await rows<{
        operation: string;
        claim: unknown;
        confirmed: boolean | null;
        source: string;
      }>(
        p.t.ctx.database.db,
        sql`select operation, claim, confirmed, source_address as source from provider_exchanges
  where transaction_id = ${payment.id} and kind = 'callback'`,
      );
      expect(kept).toEqual([
        { operation: 'callback:signed', claim: { status: 'SUCCESS' }, confirmed: null, source: '127.0.0.1' },
      ]);
      expect(await referenceOf(payment.id)).toBeNull();
    }, 60_000);

    it("a signed SUCCESS naming the customer's earlier M-Pesa receipt does not pay a prompt the customer declined", async () => {
      const partner = await createPartner(p.t);
      const customerId = await insertCustomer(p.t, partner, { msisdn: '254717000002' });
      // A first buy, paid: its receipt is Daraja's record of KES 1000 from this number, and the
      // partner sees it as the payment's provider reference.
      const paidOrder = await buyThroughUssd(p.t, partner, customerId, '1000');
      const paid = await settledSide(p.t, partner, paidOrder, 'payment');
      expect(paid.status).toBe('SUCCESS');
      const receipt = await referenceOf(paid.id);
      expect(receipt).toMatch(/^[A-Z0-9]{10}$/);
      const unitsPaid = await unitsOf(customerId);
      expect(unitsPaid).toBeGreaterThan(0);

      // A second buy of the same amount, declined at once (STK Query: 1032); Daraja's callback is lost.
      const { orderId, payment } = await acceptedBuy(partner, customerId, 'declined-no-callback');

      // The signed route claims it paid, naming the first payment's real receipt.
      const res = await postSigned({
        transactionId: payment.id,
        status: 'SUCCESS',
        providerReference: receipt,
      });
      expect(res.status).toBe(202);
      expect(res.body).toEqual({
        message: 'Callback received; the provider has not confirmed it',
        data: { transactionId: payment.id, status: 'PENDING' },
      });
      expect(await notesOf(p.t, payment.id)).toContainEqual(
        expect.stringMatching(/^decision: suspicious callback: claims SUCCESS, the query says CANCELLED/),
      );
      // The sweep's own STK Query settles it as the customer left it.
      const settled = await settledSide(p.t, partner, orderId, 'payment', 20_000);
      expect(settled.status).toBe('CANCELLED');
      expect((await orderRow(p.t, orderId))?.status).toBe('FAILED');
      expect(await unitsOf(customerId)).toBe(unitsPaid);
      expect(await referenceOf(payment.id)).not.toBe(receipt);
      // The other order's receipt was never put to Daraja as this one's.
      const askedAbout = p.fake.requests.filter(
        (r) => (r.body as { TransactionID?: string } | null)?.TransactionID === receipt,
      );
      expect(askedAbout).toEqual([]);
    }, 60_000);

    it('a signed SUCCESS for a transaction no provider request names settles nothing in production', async () => {
      const partner = await createPartner(p.t);
      const customerId = await insertCustomer(p.t, partner, { msisdn: '254717000003' });
      const { buy } = await ensureCatalog(p.t);
      // A PENDING collection with no provider request (e.g. written before the pipeline existed).
      const { orderId, transactionId } = await placePendingBuy(p.t, partner, {
        customerId,
        stockId: buy,
        amount: '1000.00',
        msisdn: '254717000003',
      });
      const res = await postSigned({
        transactionId,
        status: 'SUCCESS',
        providerReference: 'FORGED-LEGACY-3',
      });
      expect(res.status).toBe(202);
      expect(res.body).toEqual({
        message: 'Callback received; the provider has not confirmed it',
        data: { transactionId, status: 'PENDING' },
      });
      expect((await orderRow(p.t, orderId))?.status).toBe('PENDING_PAYMENT');
      expect(await unitsOf(customerId)).toBe(0);
      expect(await referenceOf(transactionId)).toBeNull();
    }, 60_000);
  },
);
