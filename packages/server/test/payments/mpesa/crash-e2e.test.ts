import { type FakeDaraja, startFakeDaraja } from '@partner-api/fakes';
import { POSTGRES_SKIP_REASON, tempDataDir } from '@partner-api/testkit/app.ts';
import { ownDatabase } from '@partner-api/testkit/database.ts';
import { createPartner, type Partner } from '@partner-api/testkit/partner.ts';
import {
  freePort,
  listStock,
  processPoster,
  type ServerProcess,
  startServer,
  ussdBuy,
} from '@partner-api/testkit/process.ts';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../ussd/support.ts';
import { CALLBACK_TOKEN, productionEnv } from './production.ts';

if (!process.env.DATABASE_URL) console.warn(`M-Pesa across a crash: ${POSTGRES_SKIP_REASON}`);

const ADMIN_TOKEN = 'a'.repeat(32);
const MAX_PENDING_SECONDS = 8;

type Row = { state: string; dispatched: boolean; ids: Record<string, string>; lastError: string | null };

/**
 * A real `partner-api serve` in production on PostgreSQL, M-Pesa being the Daraja fake over HTTP,
 * killed with SIGKILL at the two points of a collection where the process alone knows what happened,
 * then started again on the same database (docs/payments.md, "Crashes at each step"):
 * - between the claim and the push (here: while the token call hangs): nothing reached Daraja, so
 *   the push is sent after the restart, once;
 * - after Daraja took the push, before its answer was saved (the answer is slow; the callback comes
 *   while the process is down and is refused): the customer may have paid, so the collection is
 *   never failed: it goes to the operator with what is known, and a payment confirmed later (the
 *   callback again, confirmed by STK Query) executes the order.
 */
describe.skipIf(!process.env.DATABASE_URL)('M-Pesa collections across SIGKILL, in production', () => {
  let database: Awaited<ReturnType<typeof ownDatabase>>;
  let fake: FakeDaraja;
  let server: ServerProcess | undefined;
  let db: pg.Client;
  let env: Record<string, string>;
  let partner: Partner;
  let msisdnSeq = 0;

  beforeAll(async () => {
    database = await ownDatabase('postgres', 'mpesa_crash');
    // The callback comes well after the push was processed: after the kill below.
    fake = await startFakeDaraja({ callbackDelayMs: 1500, slowResponseMs: 20_000 });
    const port = await freePort();
    env = productionEnv(fake.url, {
      DATABASE_URL: database.url!,
      PORT: String(port),
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      DATA_DIR: tempDataDir(),
      RATE_LIMIT_GLOBAL: '100000/60s',
      RATE_LIMIT_TOKEN: '100000/60s',
      MPESA_REQUEST_TIMEOUT_MS: '30000',
      PAYMENT_LEASE_SECONDS: '2',
      PAYMENT_BACKOFF_BASE_MS: '100',
      PAYMENT_BACKOFF_MAX_MS: '400',
      PAYMENT_MAX_PENDING_SECONDS: String(MAX_PENDING_SECONDS),
    });
    server = await startServer(env);
    db = new pg.Client({ connectionString: database.url });
    await db.connect();
    partner = await createPartner({
      baseUrl: server.baseUrl,
      adminUrl: server.adminUrl,
      adminToken: ADMIN_TOKEN,
    });
    await listStock(server, ADMIN_TOKEN, { symbol: 'ZZCRASH', name: 'Zulu Crash', price: '10.00' });
  }, 120_000);
  afterAll(async () => {
    await server?.stop('SIGKILL');
    await db?.end().catch(() => {});
    await fake?.close();
    await database?.drop();
  });

  const post = processPoster(
    () => server!,
    () => partner,
  );

  /** A new customer buys KES 100 of ZZCRASH through USSD; the order id and the number. */
  async function buy() {
    const msisdn = `2547140000${String(msisdnSeq++).padStart(2, '0')}`;
    const bought = await ussdBuy(post, {
      firstName: 'Crash',
      lastName: 'Test',
      msisdn,
      symbol: 'ZZCRASH',
      amount: '100',
    });
    return { ...bought, msisdn };
  }

  const requestOf = async (orderId: string): Promise<Row> => {
    const { rows } = await db.query<Row>(
      `select r.state, r.dispatched_at is not null as dispatched, r.provider_ids as ids, r.last_error as "lastError"
       from provider_requests r join transactions t on t.id = r.transaction_id
       where t.order_id = $1 and t.type = 'INCOMING'`,
      [orderId],
    );
    return rows[0]!;
  };
  const orderStatus = async (orderId: string) =>
    (await db.query<{ status: string }>('select status from orders where id = $1', [orderId])).rows[0]
      ?.status;

  const executed = (orderId: string, timeoutMs: number) =>
    waitFor(
      async () => ((await orderStatus(orderId)) === 'EXECUTED' ? true : undefined),
      timeoutMs,
      `the order ${orderId} to execute`,
    );

  it('killed between the claim and the push (the token call hangs): sent after the restart, one prompt, executed', async () => {
    const pushes = fake.processed('stk-push');
    const tokens = fake.requests.filter((r) => r.operation === 'token').length;
    fake.queue('token', 'slow');
    const { orderId } = await buy();
    // The worker claimed the request and is waiting for its token: nothing has reached Daraja.
    await waitFor(
      async () => fake.requests.filter((r) => r.operation === 'token').length > tokens || undefined,
      60_000,
      'the token call',
    );
    expect((await requestOf(orderId)).state).toBe('SENDING');
    await server!.stop('SIGKILL');
    const left = await requestOf(orderId);
    expect(left).toMatchObject({ state: 'SENDING', dispatched: false, ids: {} });
    expect(fake.processed('stk-push')).toBe(pushes);

    server = await startServer(env);
    await executed(orderId, 60_000);
    expect(fake.processed('stk-push') - pushes).toBe(1);
    expect((await requestOf(orderId)).state).toBe('DONE');
  }, 180_000);

  it('killed after Daraja took the push, before its answer was saved: never failed; the operator sees it; a confirmed late callback executes it', async () => {
    const pushes = fake.processed('stk-push');
    fake.queue('stk-push', 'slow');
    const { orderId, msisdn } = await buy();
    await waitFor(async () => fake.processed('stk-push') > pushes || undefined, 60_000, 'the push at Daraja');
    await server!.stop('SIGKILL');
    // Daraja calls back while we are down: refused.
    await waitFor(
      async () =>
        fake.callbacks.find(
          (c) => c.kind === 'stk' && c.error !== null && JSON.stringify(c.body).includes(msisdn.slice(-9)),
        ),
      60_000,
      'the refused callback',
    );
    expect(await requestOf(orderId)).toMatchObject({ state: 'SENDING', dispatched: true, ids: {} });

    server = await startServer(env);
    // No CheckoutRequestID is known, so nothing can be asked; at the maximum age the customer may
    // have paid: the operator's queue, not FAILED, and no second prompt.
    const queued = await waitFor(
      async () => {
        const r = await requestOf(orderId);
        return r.state === 'OPERATOR' ? r : undefined;
      },
      (MAX_PENDING_SECONDS + 60) * 1000,
      'the collection to reach the operator',
    );
    expect(queued.lastError).toMatch(/the customer may have paid 100\.00 KES from \+?254714/);
    expect(await orderStatus(orderId)).toBe('PENDING_PAYMENT');
    const { rows: tx } = await db.query<{ status: string }>(
      `select status from transactions where order_id = $1 and type = 'INCOMING'`,
      [orderId],
    );
    expect(tx[0]?.status).toBe('PENDING');
    expect(fake.processed('stk-push') - pushes).toBe(1);

    // Daraja's callback comes again (a retry, or the operator replays it from Daraja's portal): it is
    // asked about by STK Query first, its ids stored only then, and the order executes.
    const refused = fake.callbacks.find(
      (c) => c.kind === 'stk' && c.error !== null && JSON.stringify(c.body).includes(msisdn.slice(-9)),
    )!;
    const again = await fetch(`${server!.baseUrl}/v1/payments/callbacks/daraja/${CALLBACK_TOKEN}/stk`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(refused.body),
    });
    expect(again.status).toBe(200);
    await executed(orderId, 60_000);
    const done = await requestOf(orderId);
    expect(done.state).toBe('DONE');
    expect(done.ids.checkoutRequestId).toMatch(/^ws_CO_/);
    expect(fake.processed('stk-push') - pushes).toBe(1);
  }, 240_000);
});
