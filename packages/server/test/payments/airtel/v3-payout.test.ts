import { randomBytes } from 'node:crypto';
import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { createPartner } from '@partner-api/testkit/partner.ts';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { one } from '../../../src/db/query.ts';
import { money } from '../../../src/lib/money.ts';
import { createTransaction } from '../../../src/services/payments/create-transaction.ts';
import type { PipelineDeps } from '../../../src/services/payments/pipeline/types.ts';
import { runPipelineOnce } from '../../../src/services/payments/pipeline/worker.ts';
import { createAirtelPaymentAdapter } from '../../../src/services/payments/providers/airtel/adapter.ts';
import { ensureCatalog, insertCustomer, waitFor } from '../../ussd/support.ts';
import { placePendingBuy } from '../support.ts';
import { airtelPerTest } from './harness.ts';

const silent = { info: () => {}, warn: () => {}, error: () => {} };

/**
 * `AIRTEL_DISBURSEMENT_API=v3` through the payment pipeline, against the Airtel fake over HTTP: the
 * payout is sent signed to `/standard/v3/disbursements`, and its status is asked where Airtel's
 * documentation names one, `/standard/v2/disbursements/{id}` (the fake, like the documentation, has
 * no v3 status path). Before, the enquiry went to the v3 path, met 404 at every attempt, and a paid
 * payout ended with the operator while the partner saw PENDING (docs/payments-airtel.md).
 */
describeStores('an Airtel v3 payout through the pipeline on %s', (store) => {
  const start = airtelPerTest();
  let t: TestApp;

  beforeAll(async () => {
    t = await buildTestApp(store);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('is paid once and settles SUCCESS by the enquiry at the v2 path, never with the operator', async () => {
    const { fake, config } = await start({}, { disbursementApi: 'v3' });
    // A name of its own: this pipeline claims only its own requests in a shared database.
    const adapter = {
      ...createAirtelPaymentAdapter(config, { reconcileAfterMs: 50 }),
      name: `airtel-v3-${randomBytes(4).toString('hex')}`,
    };
    const deps: PipelineDeps = {
      db: t.ctx.database.db,
      log: silent,
      metrics: t.ctx.metrics,
      registry: (network) => (network === 'AIRTEL_MONEY' ? adapter : undefined),
      events: t.ctx.events,
      clock: () => new Date(),
      settings: {
        ...t.ctx.config,
        PAYMENT_MAX_ATTEMPTS: 3,
        PAYMENT_BACKOFF_BASE_MS: 50,
        PAYMENT_BACKOFF_MAX_MS: 200,
        PAYMENT_MAX_PENDING_SECONDS: 600,
      },
      random: () => 0.99,
    };
    const msisdn = '254733123456';
    const partner = await createPartner(t);
    const customerId = await insertCustomer(t, partner, { msisdn });
    const { orderId } = await placePendingBuy(t, partner, {
      customerId,
      stockId: (await ensureCatalog(t)).buy,
      amount: '500.00',
      msisdn,
    });
    // The sale proceeds (or a refund): a payout to the customer's Airtel number.
    const payout = await t.ctx.database.db.transaction((tx) =>
      createTransaction({
        tx,
        deps,
        input: {
          organizationId: partner.organizationId,
          orderId,
          type: 'OUTGOING',
          amount: money('500.00', 'KES'),
          msisdn,
        },
      }),
    );

    const request = await waitFor(
      async () => {
        await runPipelineOnce(deps);
        const row = await one<{ id: string; state: string; lastError: string | null }>(
          t.ctx.database.db,
          sql`select id, state, last_error as "lastError" from provider_requests
  where transaction_id = ${payout.id}`,
        );
        return row && ['DONE', 'OPERATOR'].includes(row.state) ? row : undefined;
      },
      15_000,
      'the payout request to end',
    );
    expect(request).toMatchObject({ state: 'DONE', lastError: null });
    const settled = await one<{ status: string; providerReference: string | null }>(
      t.ctx.database.db,
      sql`select status, provider_reference as "providerReference" from transactions where id = ${payout.id}`,
    );
    expect(settled).toMatchObject({ status: 'SUCCESS', providerReference: expect.any(String) });
    expect(settled?.providerReference).not.toBe(request.id);
    // Paid once, signed at v3; asked about at v2's documented path, by our id, and found.
    expect(fake.processed('disbursement')).toBe(1);
    expect(fake.requests.filter((r) => r.operation === 'disbursement').map((r) => r.path)).toEqual([
      '/standard/v3/disbursements',
    ]);
    const enquiries = fake.requests.filter((r) => r.operation === 'disbursement-enquiry');
    expect(enquiries.length).toBeGreaterThan(0);
    expect(new Set(enquiries.map((r) => r.path))).toEqual(
      new Set([`/standard/v2/disbursements/${request.id}`]),
    );
    expect(fake.requests.filter((r) => r.operation === 'unknown')).toEqual([]);
  }, 30_000);
});
