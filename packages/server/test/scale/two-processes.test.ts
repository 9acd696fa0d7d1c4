import { generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import { ErrorMessage } from '@partner-api/contract';
import { POSTGRES_SKIP_REASON, REDIS_SKIP_REASON, tempDataDir } from '@partner-api/testkit/app.ts';
import { uniqueClientIp } from '@partner-api/testkit/helpers.ts';
import { createPartner, fetchToken, type Partner, signedFetch } from '@partner-api/testkit/partner.ts';
import { type ServerProcess, startServers } from '@partner-api/testkit/process.ts';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signCallback } from '../../src/services/payments/callback-signature.ts';

const enabled = Boolean(process.env.DATABASE_URL && process.env.REDIS_URL);
if (!enabled)
  console.info(
    `two partner-api processes as one service: ${process.env.DATABASE_URL ? REDIS_SKIP_REASON : POSTGRES_SKIP_REASON}`,
  );

/**
 * Two `partner-api serve` processes on one PostgreSQL and one Redis (docs/scaling.md): a partner may land on
 * either for any request and sees one service. (Shared rate-limit budgets: foundation/shared-budget-processes.)
 */
describe.skipIf(!enabled)('two partner-api processes on one PostgreSQL and one Redis', () => {
  const secrets = {
    JWT_SECRET: randomBytes(32).toString('hex'),
    ADMIN_TOKEN: randomBytes(24).toString('hex'),
    PROVIDER_CALLBACK_SECRET: randomBytes(24).toString('hex'),
    WEBHOOK_SIGNING_KEY: generateKeyPairSync('ed25519')
      .privateKey.export({ format: 'pem', type: 'pkcs8' })
      .toString(),
  };
  let a: ServerProcess;
  let b: ServerProcess;
  let caller: Partner;
  // Redis counts per client address for every process on this machine: these calls come from an
  // address of their own (through the trusted loopback proxy), so they never eat another test's budget.
  const clientIp = { 'x-forwarded-for': uniqueClientIp() };

  /** One signed request of the partner, sent to either process. */
  const call = async (
    server: ServerProcess,
    method: 'GET' | 'POST',
    url: string,
    body?: unknown,
    key?: string,
  ) => {
    const res = await signedFetch(
      { ...caller, baseUrl: server.baseUrl },
      { method, url, body, idempotencyKey: key ?? false },
      { unsigned: clientIp },
    );
    return { status: res.status, headers: res.headers, text: await res.text() };
  };

  beforeAll(async () => {
    const env = {
      ...secrets,
      DATABASE_URL: process.env.DATABASE_URL!,
      REDIS_URL: process.env.REDIS_URL!,
      TRUST_PROXY: '127.0.0.1',
      RATE_LIMIT_GLOBAL: '100000/60s',
      RATE_LIMIT_TOKEN: '100000/60s',
      SANDBOX_SETTLE_MS: '600000',
    };
    [a, b] = (await startServers([
      { ...env, DATA_DIR: tempDataDir() },
      { ...env, DATA_DIR: tempDataDir() },
    ])) as [ServerProcess, ServerProcess];
    // Onboarded through B's admin API, its token from A.
    caller = await createPartner(
      { baseUrl: a.baseUrl, adminUrl: b.adminUrl, adminToken: secrets.ADMIN_TOKEN },
      { name: `Scale ${randomUUID().slice(0, 8)}`, keyPrefix: 'scale', headers: clientIp },
    );
  }, 120_000);
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
  });

  it('idempotency across instances: a key executed on A replays byte for byte on B', async () => {
    const key = randomUUID();
    const body = { firstName: 'Scale', lastName: `Out-${key}` };
    const first = await call(a, 'POST', '/v1/customers', body, key);
    expect(first.status).toBe(201);
    const again = await call(b, 'POST', '/v1/customers', body, key);
    expect([again.status, again.text, again.headers.get('idempotent-replayed')]).toEqual([
      201,
      first.text,
      'true',
    ]);
  });

  it('idempotency across instances: the same key with another payload on B is a 422', async () => {
    const key = randomUUID();
    expect(
      (await call(a, 'POST', '/v1/customers', { firstName: 'Scale', lastName: 'One' }, key)).status,
    ).toBe(201);
    const other = await call(b, 'POST', '/v1/customers', { firstName: 'Scale', lastName: 'Two' }, key);
    expect([other.status, JSON.parse(other.text)]).toEqual([
      422,
      { error: 'Unprocessable Entity', message: ErrorMessage.idempotencyPayloadMismatch },
    ]);
  });

  it('idempotency across instances: a key in flight on A is a 409 on B, then B replays what A answered', async () => {
    const customer = JSON.parse(
      (await call(a, 'POST', '/v1/customers', { firstName: 'In', lastName: 'Flight' }, randomUUID())).text,
    ).data;
    const { sessionId } = JSON.parse(
      (await call(a, 'POST', '/v1/ussd/session', { customerId: customer.id }, randomUUID())).text,
    ).data;
    const db = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await db.connect();
    try {
      // Hold the session row as a slow move would: A's move claims the key, then waits on the lock.
      await db.query('begin');
      await db.query('select 1 from ussd_sessions where id = $1 for update', [sessionId]);
      const key = randomUUID();
      const move = { sessionId, choice: '1' };
      const onA = call(a, 'POST', '/v1/ussd/process', move, key);
      const deadline = Date.now() + 10_000;
      while ((await db.query('select 1 from idempotency_keys where key = $1', [key])).rowCount === 0) {
        if (Date.now() > deadline) throw new Error('A never claimed the key');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const onB = await call(b, 'POST', '/v1/ussd/process', move, key);
      expect([onB.status, JSON.parse(onB.text)]).toEqual([
        409,
        { error: 'Conflict', message: ErrorMessage.idempotencyInProgress },
      ]);
      await db.query('rollback');
      const answered = await onA;
      expect(answered.status).toBe(200);
      expect(JSON.parse(answered.text).data.currentState).toBe('STOCKS');
      const replayed = await call(b, 'POST', '/v1/ussd/process', move, key);
      expect([replayed.status, replayed.text, replayed.headers.get('idempotent-replayed')]).toEqual([
        200,
        answered.text,
        'true',
      ]);
    } finally {
      await db.query('rollback').catch(() => {});
      await db.end();
    }
  });

  it('a USSD session opened on A moves on B, then on A, one state after the other', async () => {
    const customer = JSON.parse(
      (
        await call(
          a,
          'POST',
          '/v1/customers',
          { firstName: 'Wanjiku', lastName: 'Kamau', msisdn: '254712000111' },
          randomUUID(),
        )
      ).text,
    ).data;
    const opened = await call(a, 'POST', '/v1/ussd/session', { customerId: customer.id }, randomUUID());
    const { sessionId } = JSON.parse(opened.text).data;
    const onB = JSON.parse(
      (await call(b, 'POST', '/v1/ussd/process', { sessionId, choice: '1' }, randomUUID())).text,
    ).data;
    expect(onB.currentState).toBe('STOCKS');
    const onA = JSON.parse(
      (await call(a, 'POST', '/v1/ussd/process', { sessionId, choice: '1' }, randomUUID())).text,
    ).data;
    expect(onA.currentState).toBe('SELECT_STOCK');
  });

  it('no double payment: one SUCCESS callback delivered to A and B at once credits the holding once', async () => {
    const customer = JSON.parse(
      (
        await call(
          a,
          'POST',
          '/v1/customers',
          { firstName: 'Otieno', lastName: 'Pay', msisdn: '254712000222' },
          randomUUID(),
        )
      ).text,
    ).data;
    const { sessionId } = JSON.parse(
      (await call(b, 'POST', '/v1/ussd/session', { customerId: customer.id }, randomUUID())).text,
    ).data;
    const servers = [a, b, a, b, a, b];
    let last: { currentState: string } | undefined;
    for (const [i, choice] of ['1', '1', '1', '1002', '1'].entries()) {
      last = JSON.parse(
        (await call(servers[i]!, 'POST', '/v1/ussd/process', { sessionId, choice }, randomUUID())).text,
      ).data;
    }
    expect(last!.currentState).toBe('BUY_SUBMITTED');
    const db = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await db.connect();
    try {
      const tx = (
        await db.query(
          "select t.id from transactions t join orders o on o.id = t.order_id where o.customer_id = $1 and t.type = 'INCOMING'",
          [customer.id],
        )
      ).rows;
      expect(tx).toHaveLength(1);
      const body = JSON.stringify({
        transactionId: tx[0].id,
        status: 'SUCCESS',
        providerReference: `MP${randomUUID().slice(0, 8)}`,
      });
      const signature = signCallback(secrets.PROVIDER_CALLBACK_SECRET, body);
      const deliveries = await Promise.all(
        [a, b, a, b].map((s) =>
          fetch(`${s.baseUrl}/v1/webhooks/callback`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-callback-signature': signature, ...clientIp },
            body,
          }),
        ),
      );
      expect(deliveries.map((r) => r.status)).toEqual([200, 200, 200, 200]);
      const orders = (
        await db.query('select status, quantity from orders where customer_id = $1', [customer.id])
      ).rows;
      expect(orders.map((o) => o.status)).toEqual(['EXECUTED']);
      const holdings = (await db.query('select units from holdings where customer_id = $1', [customer.id]))
        .rows;
      expect(holdings).toHaveLength(1);
      expect(Number(holdings[0].units)).toBe(Number(orders[0].quantity));
    } finally {
      await db.end();
    }
  });

  it('a token revoked on A is refused by B on the next request', async () => {
    caller.token = await fetchToken({ ...caller, baseUrl: b.baseUrl }, clientIp);
    expect((await call(b, 'GET', '/v1/oauth/me')).status).toBe(200);
    expect((await call(a, 'POST', '/v1/oauth/revoke')).status).toBe(200);
    const refused = await call(b, 'GET', '/v1/oauth/me');
    expect([refused.status, JSON.parse(refused.text).message]).toEqual([
      401,
      'Invalid organization authentication token',
    ]);
  });
});
