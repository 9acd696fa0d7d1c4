import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { POSTGRES_SKIP_REASON, tempDataDir } from '@partner-api/testkit/app.ts';
import { type ServerProcess, startServer } from '@partner-api/testkit/process.ts';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const enabled = Boolean(process.env.DATABASE_URL);
if (!enabled) console.info(`payment pipeline across SIGKILL: ${POSTGRES_SKIP_REASON}`);

const CLI = fileURLToPath(new URL('../../../../cli/src/partner-api.ts', import.meta.url));

type RequestState = { state: string; status: string; sends: number; queries: number };

/**
 * Real `partner-api serve` processes (sandbox, PostgreSQL) killed with SIGKILL and restarted: what
 * the pipeline promises across a crash (docs/payments.md, Pipeline). Each run gets a database of its
 * own, so no other suite's worker can touch these requests and theirs are not touched.
 */
describe.skipIf(!enabled)('payment pipeline across SIGKILL and restart', () => {
  let admin: pg.Client;
  let databaseUrl: string;
  let db: pg.Client;
  const name = `pipeline_${randomBytes(4).toString('hex')}`;
  const dataDir = tempDataDir();
  let server: ServerProcess | undefined;
  let settledOrder = '';

  beforeAll(async () => {
    admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await admin.connect();
    await admin.query(`create database ${name}`);
    const url = new URL(process.env.DATABASE_URL!);
    url.pathname = `/${name}`;
    databaseUrl = url.toString();
  });
  afterAll(async () => {
    await server?.stop('SIGKILL');
    await db?.end().catch(() => {});
    await admin?.query(`drop database if exists ${name} with (force)`).catch(() => {});
    await admin?.end();
  });

  const start = async (env: Record<string, string>) => {
    server = await startServer({
      DATA_DIR: dataDir,
      APP_ENV: 'sandbox',
      DATABASE_URL: databaseUrl,
      PAYMENT_WORKER_INTERVAL_MS: '100',
      RATE_LIMIT_GLOBAL: '100000/60s',
      ...env,
    });
    if (!db) {
      db = new pg.Client({ connectionString: databaseUrl });
      await db.connect();
    }
    return server;
  };

  /** A buy through the sandbox handset (the demo organization): HOME → STOCKS → first stock → amount → confirm. */
  const buy = async (s: ServerProcess, amount: string): Promise<string> => {
    const post = async (path: string, body: unknown) => {
      const res = await fetch(`${s.baseUrl}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(res.status, path).toBeLessThan(300);
      return (await res.json()) as { data: { sessionId: string; currentState: string }; orderId?: string };
    };
    const customers = (await (await fetch(`${s.baseUrl}/sandbox/api/customers`)).json()) as {
      data: Array<{ id: string; msisdn: string | null }>;
    };
    const session = await post('/sandbox/api/ussd/session', {
      customerId: customers.data.find((c) => c.msisdn)!.id,
    });
    let last: Awaited<ReturnType<typeof post>> = session;
    for (const choice of ['1', '1', '1', amount, '1']) {
      last = await post('/sandbox/api/ussd/process', { sessionId: session.data.sessionId, choice });
    }
    expect(last.data.currentState, JSON.stringify(last) + s.output()).toBe('BUY_SUBMITTED');
    expect(last.orderId).toBeTruthy();
    return last.orderId!;
  };

  const requestOf = async (orderId: string): Promise<RequestState> => {
    const { rows } = await db.query<RequestState>(
      `select r.state, t.status,
  (select count(*)::int from provider_exchanges e where e.provider_request_id = r.id and e.kind = 'request') as sends,
  (select count(*)::int from provider_exchanges e where e.provider_request_id = r.id and e.kind = 'query') as queries
  from provider_requests r join transactions t on t.id = r.transaction_id where t.order_id = $1`,
      [orderId],
    );
    expect(rows).toHaveLength(1);
    return rows[0]!;
  };

  it('killed between the commit and the provider call: after the restart the request is sent exactly once', async () => {
    // The worker is held back, so the buy commits and the process dies before anything is sent.
    let s = await start({ PAYMENT_WORKER_START_DELAY_MS: '600000', SANDBOX_SETTLE_MS: '300' });
    const orderId = await buy(s, '1000');
    expect(await requestOf(orderId)).toEqual({ state: 'QUEUED', status: 'PENDING', sends: 0, queries: 0 });
    await s.stop('SIGKILL');

    s = await start({ SANDBOX_SETTLE_MS: '300' });
    await expect
      .poll(async () => (await requestOf(orderId)).status, { timeout: 20_000, interval: 200 })
      .toBe('SUCCESS');
    expect(await requestOf(orderId)).toMatchObject({ state: 'DONE', sends: 1 });
    await s.stop('SIGKILL');
  });

  it('a pending sandbox settlement survives a SIGKILL: the restart settles it without an operator', async () => {
    let s = await start({ SANDBOX_SETTLE_MS: '2500' });
    const orderId = await buy(s, '1000');
    await expect
      .poll(async () => (await requestOf(orderId)).state, { timeout: 10_000, interval: 100 })
      .toBe('AWAITING');
    await s.stop('SIGKILL');

    s = await start({ SANDBOX_SETTLE_MS: '2500' });
    await expect
      .poll(async () => (await requestOf(orderId)).status, { timeout: 20_000, interval: 200 })
      .toBe('SUCCESS');
    expect(await requestOf(orderId)).toMatchObject({ state: 'DONE', sends: 1 });
    settledOrder = orderId;
    const status = await fetch(`${s.baseUrl}/sandbox/api/payment/status/${orderId}`);
    expect(((await status.json()) as { data: { payment: { status: string } } }).data.payment.status).toBe(
      'SUCCESS',
    );
    await s.stop('SIGKILL');
  });

  it('the operator CLI shows the record, lists stuck work and reconciles', async () => {
    const s = await start({ SANDBOX_SETTLE_MS: '300' });
    const { rows } = await db.query<{ id: string }>('select id from transactions where order_id = $1', [
      settledOrder,
    ]);
    const cli = (...args: string[]) => {
      const out = spawnSync(process.execPath, ['--import', 'tsx', CLI, ...args, '--json'], {
        cwd: path.dirname(CLI),
        env: { PATH: process.env.PATH, HOME: process.env.HOME, DATA_DIR: dataDir, ADMIN_URL: s.adminUrl },
        encoding: 'utf8',
      });
      expect(out.status, out.stderr).toBe(0);
      return JSON.parse(out.stdout);
    };
    const shown = cli('payments', 'show', rows[0]!.id);
    expect(shown.transaction.status).toBe('SUCCESS');
    expect(shown.request.state).toBe('DONE');
    // The killed process sent once and was queried (maybe more than once) by the restarted one.
    const kinds: string[] = shown.exchanges.map((e: { kind: string }) => e.kind);
    expect(kinds.filter((k) => k === 'request')).toHaveLength(1);
    expect(kinds).toContain('query');
    expect(cli('payments', 'stuck')).toEqual([]);
    expect(cli('payments', 'reconcile')).toEqual({ reconciling: 0 });
    await s.stop('SIGKILL');
  });
});
