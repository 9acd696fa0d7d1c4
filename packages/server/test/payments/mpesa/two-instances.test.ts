import { randomUUID } from 'node:crypto';
import { type FakeDaraja, startFakeDaraja } from '@partner-api/fakes';
import { POSTGRES_SKIP_REASON, tempDataDir } from '@partner-api/testkit/app.ts';
import { ownDatabase } from '@partner-api/testkit/database.ts';
import { createPartner, type Partner, payloadOf, signedHeaders } from '@partner-api/testkit/partner.ts';
import { freePort, type ServerProcess, startServer } from '@partner-api/testkit/process.ts';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../ussd/support.ts';
import { productionEnv } from './production.ts';

if (!process.env.DATABASE_URL) console.warn(`two production instances on M-Pesa: ${POSTGRES_SKIP_REASON}`);

const ORDERS = 12;

/**
 * Two `partner-api serve` processes in production on one PostgreSQL, M-Pesa being the Daraja fake
 * over HTTP. Both run the payment worker and the sweep; Daraja's callbacks all go to instance B (the
 * public base URL names it), so every order placed on A is settled by a callback that B receives.
 */
describe.skipIf(!process.env.DATABASE_URL)('two production instances on one PostgreSQL', () => {
  let database: Awaited<ReturnType<typeof ownDatabase>>;
  let fake: FakeDaraja;
  let a: ServerProcess;
  let b: ServerProcess;
  let db: pg.Client;

  beforeAll(async () => {
    database = await ownDatabase('postgres', 'two_instances');
    fake = await startFakeDaraja({ callbackDelayMs: 50 });
    const portB = await freePort();
    const env = productionEnv(fake.url, {
      DATABASE_URL: database.url!,
      PUBLIC_BASE_URL: `http://127.0.0.1:${portB}`,
      RATE_LIMIT_GLOBAL: '100000/60s',
      RATE_LIMIT_TOKEN: '100000/60s',
      MPESA_RECONCILE_AFTER_SECONDS: '2',
    });
    // B first: it migrates the database; A then finds it ready.
    b = await startServer({ ...env, PORT: String(portB), DATA_DIR: tempDataDir() });
    a = await startServer({ ...env, DATA_DIR: tempDataDir() });
    db = new pg.Client({ connectionString: database.url });
    await db.connect();
  }, 120_000);
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await db?.end().catch(() => {});
    await fake?.close();
    await database?.drop();
  });

  /** Signed requests go to `server`; the signature names the public base URL (B), as behind a balancer. */
  const via = (server: ServerProcess, partner: Partner) => ({
    async post(url: string, body: unknown, expected: number) {
      const res = await fetchVia(server, partner, 'POST', url, body);
      expect(res.status, `${url}: ${JSON.stringify(res.body)}`).toBe(expected);
      return res.body as { data: Record<string, unknown> & { sessionId: string; menu: { text: string } } };
    },
  });
  async function fetchVia(
    server: ServerProcess,
    partner: Partner,
    method: 'GET' | 'POST',
    url: string,
    body?: unknown,
  ) {
    const payload = payloadOf(body);
    const headers = signedHeaders(
      partner,
      { method, url, idempotencyKey: method === 'POST' ? randomUUID() : false },
      payload,
    );
    const res = await fetch(server.baseUrl + url, { method, headers, body: payload });
    return { status: res.status, body: await res.json() };
  }

  it('every order placed on A is prompted once and settled once by the callback B receives', async () => {
    const partner = await createPartner({
      baseUrl: b.baseUrl,
      adminUrl: a.adminUrl,
      adminToken: 'a'.repeat(32),
    });
    const admin = await fetch(`${a.adminUrl}/admin/stocks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${'a'.repeat(32)}`, 'content-type': 'application/json' },
      body: JSON.stringify([
        { symbol: 'ZZTWO', name: 'Zulu Two Instances', price: '10.00', currency: 'KES' },
      ]),
    });
    expect(admin.status).toBe(200);

    const orderIds: string[] = [];
    for (let i = 0; i < ORDERS; i++) {
      const onA = via(a, partner);
      const customer = await onA.post(
        '/v1/customers',
        { firstName: 'Two', lastName: `Instances ${i}`, msisdn: `2547130000${String(i).padStart(2, '0')}` },
        201,
      );
      let screen = (await onA.post('/v1/ussd/session', { customerId: customer.data.id }, 201)).data;
      for (const choice of ['1', '8', 'ZZTWO', '1', '1', '100', '1'])
        screen = (await onA.post('/v1/ussd/process', { sessionId: screen.sessionId, choice }, 200)).data;
      const ref = /Ref (c[a-z0-9]{24})/.exec(screen.menu.text)?.[1];
      expect(ref, screen.menu.text).toBeDefined();
      orderIds.push(ref!);
    }

    const states = await waitFor(
      async () => {
        const { rows } = await db.query<{ status: string }>(
          `select status from orders where id = any($1::text[])`,
          [orderIds],
        );
        return rows.length === ORDERS && rows.every((r) => r.status === 'EXECUTED') ? rows : undefined;
      },
      30_000,
      'every order to execute',
    );
    expect(states).toHaveLength(ORDERS);
    // Each order: one prompt at Daraja, one callback (delivered to B), one payment applied. The fake
    // records a callback once B's answer has reached it, which can be after the order executed.
    await fake.waitForCallbacks(ORDERS, 10_000);
    expect(fake.processed('stk-push')).toBe(ORDERS);
    const stk = fake.callbacks.filter((c) => c.kind === 'stk');
    expect(stk).toHaveLength(ORDERS);
    expect(stk.every((c) => c.url.startsWith(`${b.baseUrl}/`) && c.status === 200)).toBe(true);
    const { rows: payments } = await db.query<{ status: string; n: number }>(
      `select status, count(*)::int as n from transactions where order_id = any($1::text[]) group by status`,
      [orderIds],
    );
    expect(payments).toEqual([{ status: 'SUCCESS', n: ORDERS }]);
    const { rows: requests } = await db.query<{ state: string; n: number }>(
      `select state, count(*)::int as n from provider_requests group by state`,
    );
    expect(requests).toEqual([{ state: 'DONE', n: ORDERS }]);
  });
});
