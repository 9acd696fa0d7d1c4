import { FAKE_AT_SMS_ENV, type FakeAtSmsApi, startFakeAtSms } from '@partner-api/fakes';
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
import { waitFor } from '../ussd/support.ts';

if (!process.env.DATABASE_URL) console.warn(`SMS across a crash: ${POSTGRES_SKIP_REASON}`);

const ADMIN_TOKEN = 'b'.repeat(32);

type Row = { state: string; attempts: number; unconfirmed: number; text: string };

/**
 * A real `partner-api serve` (sandbox payments, Africa's Talking being the fake over HTTP) on its own
 * PostgreSQL database, killed with SIGKILL at the two points of an SMS's life where the process
 * alone knows what happened, then started again (docs/sms.md, "Crashes"):
 * - after the execution that causes the SMS committed, before any SMS was sent: sent once after
 *   the restart;
 * - after the gateway took the SMS, before its answer was recorded: sent again once after the
 *   restart (the gateway gives no idempotency key): exactly twice, never more.
 */
describe.skipIf(!process.env.DATABASE_URL)('investor SMS across SIGKILL', () => {
  let database: Awaited<ReturnType<typeof ownDatabase>>;
  let fake: FakeAtSmsApi;
  let server: ServerProcess | undefined;
  let db: pg.Client;
  let env: Record<string, string>;
  let partner: Partner;
  let seq = 0;

  beforeAll(async () => {
    database = await ownDatabase('postgres', 'sms_crash');
    fake = await startFakeAtSms({ reportDelayMs: 50, slowResponseMs: 30_000 });
    const port = await freePort();
    env = {
      ...FAKE_AT_SMS_ENV(fake),
      APP_ENV: 'sandbox',
      DATABASE_URL: database.url!,
      ADMIN_TOKEN,
      PORT: String(port),
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      DATA_DIR: tempDataDir(),
      SANDBOX_SETTLE_MS: '100',
      RATE_LIMIT_GLOBAL: '100000/60s',
      RATE_LIMIT_TOKEN: '100000/60s',
      SMS_LEASE_SECONDS: '3',
      AT_SMS_REQUEST_TIMEOUT_MS: '2500',
      SMS_WORKER_INTERVAL_MS: '100',
    };
    // The first process never sends an SMS: its worker would start in 10 minutes.
    server = await startServer({ ...env, SMS_WORKER_START_DELAY_MS: '600000' });
    fake.setCallbackUrl(
      `${env.PUBLIC_BASE_URL}/v1/sms/callbacks/africastalking/${env.AT_SMS_CALLBACK_TOKEN}`,
    );
    db = new pg.Client({ connectionString: database.url });
    await db.connect();
    partner = await createPartner({
      baseUrl: server.baseUrl,
      adminUrl: server.adminUrl,
      adminToken: ADMIN_TOKEN,
    });
    await listStock(server, ADMIN_TOKEN, { symbol: 'ZZSMS', name: 'Zulu SMS Crash', price: '10.00' });
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

  /** A new customer buys KES 100 of ZZSMS through USSD; the order id and the number. */
  async function buy() {
    const msisdn = `2547150000${String(seq++).padStart(2, '0')}`;
    const bought = await ussdBuy(post, {
      firstName: 'Sms',
      lastName: 'Crash',
      msisdn,
      symbol: 'ZZSMS',
      amount: '100',
    });
    return { ...bought, msisdn };
  }

  const confirmationOf = async (orderId: string): Promise<Row | undefined> =>
    (
      await db.query<Row>(
        `select state, attempts, unconfirmed_sends as unconfirmed, text from sms_messages where event_key = $1`,
        [`execution:${orderId}`],
      )
    ).rows[0];
  const receivedBy = (msisdn: string) => fake.messages.filter((m) => m.to === `+${msisdn}`);

  it('killed after the execution committed, before any SMS went out: sent once after the restart', async () => {
    const { orderId, msisdn } = await buy();
    const queued = await waitFor(
      async () => confirmationOf(orderId),
      30_000,
      'the confirmation to be queued',
    );
    expect(queued.state).toBe('QUEUED');
    await server!.stop('SIGKILL');
    expect(receivedBy(msisdn)).toEqual([]);

    server = await startServer(env);
    const delivered = await waitFor(
      async () =>
        (await confirmationOf(orderId))?.state === 'DELIVERED' ? confirmationOf(orderId) : undefined,
      30_000,
      'the confirmation to be delivered',
    );
    expect(delivered).toMatchObject({ attempts: 1, unconfirmed: 0 });
    expect(delivered?.text).toMatch(/^Bought 10 ZZSMS at KES 10, cost KES 100\.00\. Order c/);
    expect(receivedBy(msisdn).map((m) => m.message)).toEqual([delivered!.text]);
  }, 120_000);

  it('killed after the gateway took the SMS, before its answer was recorded: sent again once, exactly twice', async () => {
    fake.setScenario('slow');
    const { orderId, msisdn } = await buy();
    // The gateway has it (the fake took it and holds its answer); the process has not recorded it.
    await waitFor(async () => (receivedBy(msisdn).length > 0 ? true : undefined), 30_000, 'the hand-over');
    expect((await confirmationOf(orderId))?.state).toBe('SENDING');
    await server!.stop('SIGKILL');
    fake.setScenario('normal');

    server = await startServer(env);
    const sent = await waitFor(
      async () => {
        const row = await confirmationOf(orderId);
        return row && ['SENT', 'DELIVERED'].includes(row.state) ? row : undefined;
      },
      30_000,
      'the confirmation to be sent again',
    );
    // The lapsed claim counted as one unconfirmed hand-over; the second hand-over was answered.
    expect(sent).toMatchObject({ attempts: 2, unconfirmed: 1 });
    expect(receivedBy(msisdn).map((m) => m.message)).toEqual([sent.text, sent.text]);
    // Nothing more is sent later.
    await new Promise((r) => setTimeout(r, 500));
    expect(receivedBy(msisdn)).toHaveLength(2);
  }, 120_000);
});
