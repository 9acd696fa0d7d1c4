import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rows } from '../../../src/db/query.ts';
import { signCallback } from '../../../src/services/payments/callback-signature.ts';
import { POSTGRES_SKIP_REASON } from '../../support/app.ts';
import { createPartner } from '../../support/partner.ts';
import { insertCustomer, orderRow, waitFor } from '../../ussd/support.ts';
import { buyThroughUssd, type Production, startProduction, statusOf } from './production.ts';

if (!process.env.DATABASE_URL)
  console.warn(`the signed callback route in production: ${POSTGRES_SKIP_REASON}`);

/**
 * Production on PostgreSQL with the Daraja fake: `POST /v1/webhooks/callback`, correctly signed and
 * fresh, claims SUCCESS for a pending M-Pesa payment that Daraja still calls "being processed". It
 * settles nothing: the message is a hint, Daraja is asked, and nothing is applied that Daraja has not
 * confirmed (docs/decisions.md, "The signed callback route").
 */
describe.skipIf(!process.env.DATABASE_URL)(
  'the signed callback route on a real provider, in production',
  () => {
    let p: Production;

    beforeAll(async () => {
      p = await startProduction();
    }, 60_000);
    afterAll(async () => {
      await p?.close();
    });

    it('a signed SUCCESS for a payment M-Pesa still calls pending executes nothing and says so (202)', async () => {
      const partner = await createPartner(p.t);
      const customerId = await insertCustomer(p.t, partner, { msisdn: '254717000001' });
      p.fake.queue('stk-push', 'never-answered');
      const orderId = await buyThroughUssd(p.t, partner, customerId, '1000');
      const payment = await waitFor(
        async () => (await statusOf(p.t, partner, orderId)).payment,
        10_000,
        'the payment',
      );
      const body = JSON.stringify({
        transactionId: payment.id,
        status: 'SUCCESS',
        providerReference: 'FORGED-LEGACY-1',
      });
      const res = await fetch(`${p.listenerUrl}/v1/webhooks/callback`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-callback-signature': signCallback(p.t.ctx.secrets.providerCallbackSecret, body),
        },
        body,
      });
      expect(res.status).toBe(202);
      expect(await res.json()).toEqual({
        message: 'Callback received; the provider has not confirmed it',
        data: { transactionId: payment.id, status: 'PENDING' },
      });
      expect((await statusOf(p.t, partner, orderId)).payment?.status).toBe('PENDING');
      expect((await orderRow(p.t, orderId))?.status).toBe('PENDING_PAYMENT');
      const held = await rows<{ n: number }>(
        p.t.ctx.database.db,
        sql`select count(*)::int as n from holdings where customer_id = ${customerId}`,
      );
      expect(held[0]?.n).toBe(0);
      // Kept as a record of what was claimed, from where; Daraja was asked and said pending.
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
        {
          operation: 'callback:signed',
          claim: { status: 'SUCCESS', receipt: 'FORGED-LEGACY-1' },
          confirmed: null,
          source: '127.0.0.1',
        },
      ]);
      const [reference] = await rows<{ reference: string | null }>(
        p.t.ctx.database.db,
        sql`select provider_reference as reference from transactions where id = ${payment.id}`,
      );
      expect(reference?.reference).toBeNull();
    }, 60_000);
  },
);
