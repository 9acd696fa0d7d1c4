import { generateKeyPairSync } from 'node:crypto';
import { createServer } from 'node:net';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rows } from '../../../src/db/query.ts';
import { startPayments } from '../../../src/services/payments/pipeline/start.ts';
import type { PaymentWorker } from '../../../src/services/payments/pipeline/worker.ts';
import {
  type FakeDaraja,
  SANDBOX_PASSKEY,
  SANDBOX_SHORTCODE,
  startFakeDaraja,
} from '../../../src/services/payments/providers/mpesa/fake/index.ts';
import { createAdapterRegistry } from '../../../src/services/payments/registry.ts';
import { buildTestApp, POSTGRES_SKIP_REASON, type TestApp } from '../../support/app.ts';
import { BASE_URL, createPartner, type Partner, signedInject } from '../../support/partner.ts';
import {
  ensureCatalog,
  insertCustomer,
  orderRow,
  refOf,
  type UssdData,
  ussdClient,
  waitFor,
} from '../../ussd/support.ts';

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });

if (!process.env.DATABASE_URL) console.warn(`production M-Pesa end to end: ${POSTGRES_SKIP_REASON}`);

/**
 * Production as it goes live (APP_ENV=production needs PostgreSQL, so this suite runs only with
 * DATABASE_URL): the Daraja fake as M-Pesa, a real listening app for its callbacks, the payment
 * worker, and a customer buying through USSD.
 */
describe.skipIf(!process.env.DATABASE_URL)('production: a USSD buy paid through Daraja (the fake)', () => {
  let fake: FakeDaraja;
  let t: TestApp;
  let worker: PaymentWorker;

  beforeAll(async () => {
    fake = await startFakeDaraja({ callbackDelayMs: 50 });
    const port = await freePort();
    t = await buildTestApp('postgres', {
      APP_ENV: 'production',
      ADMIN_TOKEN: 'a'.repeat(32),
      JWT_SECRET: 'j'.repeat(40),
      PROVIDER_CALLBACK_SECRET: 'p'.repeat(32),
      WEBHOOK_SIGNING_KEY: generateKeyPairSync('ed25519')
        .privateKey.export({ format: 'pem', type: 'pkcs8' })
        .toString(),
      // Signed test requests name the default base URL; Daraja calls back on the real listener.
      PUBLIC_BASE_URL: BASE_URL,
      MPESA_BASE_URL: fake.url,
      MPESA_CONSUMER_KEY: 'fake-consumer-key',
      MPESA_CONSUMER_SECRET: 'fake-consumer-secret',
      MPESA_SHORTCODE: SANDBOX_SHORTCODE,
      MPESA_PASSKEY: SANDBOX_PASSKEY,
      MPESA_B2C_SHORTCODE: '600992',
      MPESA_INITIATOR_NAME: 'testapi',
      MPESA_SECURITY_CREDENTIAL: 'fake-security-credential',
      MPESA_CALLBACK_TOKEN: 't'.repeat(40),
      MPESA_RECONCILE_AFTER_SECONDS: '1',
      PAYMENT_WORKER_INTERVAL_MS: '100',
    });
    await t.app.listen({ host: '127.0.0.1', port });
    const mpesa = t.ctx.config.mpesa!;
    t.ctx.registry = createAdapterRegistry({
      config: {
        ...t.ctx.config,
        mpesa: {
          ...mpesa,
          callbackBaseUrl: mpesa.callbackBaseUrl.replace(BASE_URL, `http://127.0.0.1:${port}`),
        },
      },
    });
    await ensureCatalog(t);
    worker = startPayments(t.ctx, t.app.log);
  });
  afterAll(async () => {
    await worker?.stop();
    await t?.close();
    await fake?.close();
  });

  /** HOME → STOCKS → Next → SELECT_STOCK → BUY_AMOUNT → BUY_CONFIRM → BUY_SUBMITTED. */
  async function buy(partner: Partner, customerId: string, amount: string) {
    const client = ussdClient(t, partner);
    let data: UssdData = await client.walk(customerId, ['1', '7']);
    for (const [choice, state] of [
      ['1', 'SELECT_STOCK'],
      ['1', 'BUY_AMOUNT'],
      [amount, 'BUY_CONFIRM'],
      ['1', 'BUY_SUBMITTED'],
    ] as const) {
      const res = await client.press(data.sessionId, choice);
      expect(res.statusCode, res.body).toBe(200);
      data = res.json().data;
      expect(data.currentState, data.ussdText).toBe(state);
    }
    return refOf(data);
  }
  const paymentOf = async (partner: Partner, orderId: string) => {
    const res = await signedInject(t.app, partner, { method: 'GET', url: `/v1/payment/status/${orderId}` });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data.payment as { id: string; status: string };
  };
  const notesOf = async (transactionId: string) =>
    (
      await rows<{ kind: string; note: string | null }>(
        t.ctx.database.db,
        sql`select kind, note from provider_exchanges where transaction_id = ${transactionId} order by at, id`,
      )
    ).map((e) => `${e.kind}: ${e.note ?? ''}`);

  it('the STK push is accepted once; the callback, confirmed by query, executes the order', async () => {
    const partner = await createPartner(t);
    const customerId = await insertCustomer(t, partner, { msisdn: '254712000031' });
    const orderId = await buy(partner, customerId, '1000');
    const paid = await waitFor(
      async () => {
        const payment = await paymentOf(partner, orderId);
        return payment.status === 'PENDING' ? undefined : payment;
      },
      15_000,
      'the payment to settle',
    );
    expect(paid.status).toBe('SUCCESS');
    expect(await orderRow(t, orderId)).toMatchObject({ status: 'EXECUTED' });
    expect(fake.processed('stk-push')).toBe(1);
    expect(fake.callbacks.filter((c) => c.kind === 'stk').map((c) => c.status)).toEqual([200]);
    expect(await notesOf(paid.id)).toContainEqual(
      expect.stringMatching(/^decision: callback confirmed by query/),
    );
  });

  it('a callback the query contradicts pays nothing', async () => {
    const partner = await createPartner(t);
    const customerId = await insertCustomer(t, partner, { msisdn: '254712000032' });
    const callbacksBefore = fake.callbacks.length;
    fake.queue('stk-push', 'contradicting-callback');
    const orderId = await buy(partner, customerId, '1000');
    await fake.waitForCallbacks(callbacksBefore + 1, 10_000);
    const payment = await paymentOf(partner, orderId);
    await waitFor(
      async () =>
        (await notesOf(payment.id)).some((n) => n.startsWith('decision: suspicious callback')) || undefined,
      10_000,
      'the callback to be judged',
    );
    const settled = await waitFor(
      async () => {
        const p = await paymentOf(partner, orderId);
        return p.status === 'PENDING' ? undefined : p;
      },
      15_000,
      'reconciliation',
    );
    // The query's word (1032, cancelled) stands; the callback's "paid" changed nothing.
    expect(settled.status).toBe('CANCELLED');
    expect(await orderRow(t, orderId)).not.toMatchObject({ status: 'EXECUTED' });
    expect(fake.processed('stk-push')).toBe(2);
  });
});
