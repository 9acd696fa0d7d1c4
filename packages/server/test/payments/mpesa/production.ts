import { generateKeyPairSync } from 'node:crypto';
import { createServer } from 'node:net';
import {
  type FakeDaraja,
  type FakeDarajaOptions,
  SANDBOX_PASSKEY,
  SANDBOX_SHORTCODE,
  startFakeDaraja,
} from '@partner-api/fakes';
import { buildTestApp, type TestApp } from '@partner-api/testkit/app.ts';
import { ownDatabase } from '@partner-api/testkit/database.ts';
import { BASE_URL, type Partner, signedInject } from '@partner-api/testkit/partner.ts';
import { sql } from 'drizzle-orm';
import { expect } from 'vitest';
import { rows } from '../../../src/db/query.ts';
import { startPayments } from '../../../src/services/payments/pipeline/start.ts';
import type { PaymentWorker } from '../../../src/services/payments/pipeline/worker.ts';
import { createAdapterRegistry } from '../../../src/services/payments/registry.ts';
import { ensureCatalog, refOf, type UssdData, ussdClient, waitFor } from '../../ussd/support.ts';

export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });

export const CALLBACK_TOKEN = 't'.repeat(40);

/** The environment of a production deployment on M-Pesa (the fake at `fakeUrl`). */
export function productionEnv(fakeUrl: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    APP_ENV: 'production',
    ADMIN_TOKEN: 'a'.repeat(32),
    JWT_SECRET: 'j'.repeat(40),
    PROVIDER_CALLBACK_SECRET: 'p'.repeat(32),
    WEBHOOK_SIGNING_KEY: generateKeyPairSync('ed25519')
      .privateKey.export({ format: 'pem', type: 'pkcs8' })
      .toString(),
    MPESA_BASE_URL: fakeUrl,
    MPESA_CONSUMER_KEY: 'fake-consumer-key',
    MPESA_CONSUMER_SECRET: 'fake-consumer-secret',
    MPESA_SHORTCODE: SANDBOX_SHORTCODE,
    MPESA_PASSKEY: SANDBOX_PASSKEY,
    MPESA_B2C_SHORTCODE: '600992',
    MPESA_INITIATOR_NAME: 'testapi',
    MPESA_SECURITY_CREDENTIAL: 'fake-security-credential',
    MPESA_CALLBACK_TOKEN: CALLBACK_TOKEN,
    MPESA_RECONCILE_AFTER_SECONDS: '1',
    PAYMENT_WORKER_INTERVAL_MS: '100',
    ...extra,
  };
}

export type Production = {
  fake: FakeDaraja;
  t: TestApp;
  /** The listener's URL: where the providers call back. */
  listenerUrl: string;
  worker: PaymentWorker;
  close(): Promise<void>;
};

/**
 * Production as it goes live, on a PostgreSQL database of its own: the Daraja fake as M-Pesa, a real
 * listening app for its callbacks, this app's payment worker. Signed test requests name the default
 * base URL; Daraja calls back on the real listener.
 */
export async function startProduction(
  env: Record<string, string> = {},
  fakeOptions: FakeDarajaOptions = {},
): Promise<Production> {
  const database = await ownDatabase('postgres', 'production_mpesa');
  const fake = await startFakeDaraja({ callbackDelayMs: 50, ...fakeOptions });
  const port = await freePort();
  const t = await buildTestApp('postgres', {
    ...productionEnv(fake.url, env),
    ...database.env,
    PUBLIC_BASE_URL: BASE_URL,
  });
  await t.app.listen({ host: '127.0.0.1', port });
  // Every configured provider calls back on the real listener (signed requests keep BASE_URL).
  const listener = <T extends { callbackBaseUrl: string }>(c: T | undefined) =>
    c && { ...c, callbackBaseUrl: c.callbackBaseUrl.replace(BASE_URL, `http://127.0.0.1:${port}`) };
  const { config } = t.ctx;
  t.ctx.registry = createAdapterRegistry({
    config: {
      ...config,
      mpesa: listener(config.mpesa),
      mtn: listener(config.mtn),
      airtel: listener(config.airtel),
    },
  });
  await ensureCatalog(t);
  const worker = startPayments(t.ctx, t.app.log);
  return {
    fake,
    t,
    listenerUrl: `http://127.0.0.1:${port}`,
    worker,
    async close() {
      await worker.stop();
      await t.close();
      await fake.close();
      await database.drop();
    },
  };
}

/** HOME → STOCKS → Next → SELECT_STOCK → BUY_AMOUNT → BUY_CONFIRM → BUY_SUBMITTED; the order id. */
export async function buyThroughUssd(
  t: TestApp,
  partner: Partner,
  customerId: string,
  amount: string,
  search?: string,
) {
  const client = ussdClient(t, partner);
  let data: UssdData = await client.walk(customerId, search ? ['1', '8', search] : ['1', '7']);
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

/** Sells 3 ZZSELL units (KES 40.00 each) through USSD; the order id. */
export async function sellThroughUssd(t: TestApp, partner: Partner, customerId: string) {
  const submitted = await ussdClient(t, partner).walk(customerId, ['1', '8', 'ZZSELL', '1', '2', '3', '1']);
  expect(submitted.currentState, submitted.ussdText).toBe('SELL_SUBMITTED');
  return refOf(submitted);
}

type Payment = { id: string; status: string; amount: string };

/** `GET /v1/payment/status/{orderId}` as the partner sees it. */
export async function statusOf(t: TestApp, partner: Partner, orderId: string) {
  const res = await signedInject(t.app, partner, { method: 'GET', url: `/v1/payment/status/${orderId}` });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data as { payment?: Payment; disbursement?: Payment };
}

/** Waits until the order's `side` (payment or disbursement) is no longer PENDING. */
export function settledSide(
  t: TestApp,
  partner: Partner,
  orderId: string,
  side: 'payment' | 'disbursement',
  timeoutMs = 20_000,
) {
  return waitFor(
    async () => {
      const p = (await statusOf(t, partner, orderId))[side];
      return p && p.status !== 'PENDING' ? p : undefined;
    },
    timeoutMs,
    `the ${side} of ${orderId} to settle`,
  );
}

/** The pipeline's record of a transaction: `kind: note` per exchange, in order. */
export async function notesOf(t: TestApp, transactionId: string) {
  return (
    await rows<{ kind: string; note: string | null }>(
      t.ctx.database.db,
      sql`select kind, note from provider_exchanges where transaction_id = ${transactionId} order by at, id`,
    )
  ).map((e) => `${e.kind}: ${e.note ?? ''}`);
}

/** The state of the provider request behind a transaction. */
export async function requestStateOf(t: TestApp, transactionId: string) {
  const [row] = await rows<{ state: string; lastError: string | null }>(
    t.ctx.database.db,
    sql`select state, last_error as "lastError" from provider_requests where transaction_id = ${transactionId}`,
  );
  return row;
}

/** A transaction as stored (the failure reason is the operator's, not in the partner's status). */
export async function transactionRow(t: TestApp, id: string) {
  const [row] = await rows<{ status: string; failureReason: string | null }>(
    t.ctx.database.db,
    sql`select status, failure_reason as "failureReason" from transactions where id = ${id}`,
  );
  return row;
}
