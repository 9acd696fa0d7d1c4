/**
 * Fault tests. PostgreSQL and Redis are reached through a TCP relay (support/faults.ts)
 * that is cut and restored; the machine's real servers are never stopped (other suites share them).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { createId } from '@partner-api/contract';
import {
  buildTestApp,
  describeStores,
  POSTGRES_SKIP_REASON,
  REDIS_SKIP_REASON,
  type TestApp,
  tempDataDir,
} from '@partner-api/testkit/app.ts';
import { scratchDatabase } from '@partner-api/testkit/database.ts';
import { type Relay, startRelay, targetOf } from '@partner-api/testkit/faults.ts';
import { createPartner, type Partner, signedHeaders, signedInject } from '@partner-api/testkit/partner.ts';
import { type ServerProcess, startServer } from '@partner-api/testkit/process.ts';
import { eq } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import type { Queryable } from '../../src/db/client.ts';
import { holdings, orders, transactions } from '../../src/db/schema.ts';
import { REDIS_RETRY_AFTER_MS } from '../../src/plugins/rate-limit.ts';
import { cancelOrder } from '../../src/services/orders/life.ts';
import { placePendingBuy, sendCallback } from '../payments/support.ts';
import { ensureCatalog, insertCustomer } from '../ussd/support.ts';

const DATABASE_URL = process.env.DATABASE_URL;
const REDIS_URL = process.env.REDIS_URL;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
let faults = 0;

/**
 * The suites' own pools (`direct`, beside the app, straight to PostgreSQL) keep idle connections for
 * 10 s. One that PostgreSQL ends while idle makes its pool emit 'error', and unheard that is an
 * uncaught exception in the test worker, whatever test is running. The next query on such a pool
 * fails visibly anyway, so the loss is only written down here.
 */
const idleConnectionLost = (error: Error) =>
  process.stderr.write(`[reliability] a test pool's idle connection ended: ${error.message}\n`);

afterAll(() => {
  process.stdout.write(`[reliability] faults injected: ${faults}\n`);
});

/** A request that must answer within `ms`: a hang fails the test instead of timing it out. */
async function timed(url: string, init: RequestInit = {}, ms = 5000) {
  const started = Date.now();
  const response = await fetch(url, { ...init, signal: AbortSignal.timeout(ms) });
  const body = await response.text();
  return { status: response.status, body, headers: response.headers, ms: Date.now() - started };
}

const metric = async (server: ServerProcess, name: string) => {
  const text = (await timed(`${server.baseUrl}/metrics`)).body;
  return Number(new RegExp(`^${name} (\\d+)`, 'm').exec(text)?.[1] ?? Number.NaN);
};

if (!REDIS_URL) describe('Redis cut at run time', () => it.skip(REDIS_SKIP_REASON, () => {}));

describe.skipIf(!REDIS_URL)('Redis cut at run time (a real server process behind a relay)', () => {
  let relay: Relay;
  let server: ServerProcess;
  beforeAll(async () => {
    relay = await startRelay(targetOf(REDIS_URL!, 6379));
    server = await startServer({
      DATA_DIR: tempDataDir(),
      ADMIN_TOKEN: randomBytes(24).toString('hex'),
      REDIS_URL: relay.urlFor(REDIS_URL!),
      RATE_LIMIT_GLOBAL: '100000/60s',
      LOG_LEVEL: 'warn',
      ...(DATABASE_URL ? { DATABASE_URL } : {}),
    });
  });
  afterAll(async () => {
    await server?.stop();
    await relay?.close();
  });

  const key = () => timed(`${server.baseUrl}/v1/webhooks/key`);
  const health = async () => JSON.parse((await timed(`${server.baseUrl}/healthz`)).body);
  const waitForRedis = async () => {
    const deadline = Date.now() + 15_000;
    while ((await health()).checks?.redis !== 'ok') {
      if (Date.now() > deadline) throw new Error('Redis never came back');
      await sleep(100);
    }
  };

  it('counts in Redis while it answers', async () => {
    await waitForRedis();
    const res = await key();
    expect(res.status).toBe(200);
    expect(res.headers.get('ratelimit-policy')).toBe('100000;w=60');
    expect(await metric(server, 'rate_limit_store_fallback_total')).toBe(0);
  });

  for (const mode of ['refuse', 'freeze'] as const) {
    it(`Redis ${mode === 'refuse' ? 'stopped' : 'frozen (partition)'}: every request still answers, from memory, logged and counted; Redis is tried once a second, not by every request; back to Redis when it returns`, async () => {
      const before = await metric(server, 'rate_limit_store_fallback_total');
      await relay.cut(mode);
      faults += 1;
      const sentBefore = relay.received;
      const started = Date.now();
      for (let i = 0; i < 10; i++) {
        const res = await key();
        expect(res.status, res.body).toBe(200);
        expect(res.headers.get('ratelimit-limit')).toBe('100000');
        expect(res.ms).toBeLessThan(3000);
      }
      // After a failure the limiter decides in memory for REDIS_RETRY_AFTER_MS before it tries Redis
      // again: at most one attempt per such period (each attempt on a frozen Redis waits 500 ms).
      const periods = Math.ceil((Date.now() - started) / REDIS_RETRY_AFTER_MS);
      expect(relay.received - sentBefore).toBeLessThanOrEqual(1 + periods);
      const during = await metric(server, 'rate_limit_store_fallback_total');
      expect(during).toBeGreaterThanOrEqual(before + 10);
      // Degraded, not down; a frozen connection still reads as connected, but its PING goes unanswered.
      expect(await health()).toMatchObject({ status: 'ok', checks: { redis: 'unavailable' } });
      expect(server.output()).toMatch(/Redis unreachable: rate limits fall back to this instance's memory/);

      await relay.restore();
      await waitForRedis();
      await sleep(REDIS_RETRY_AFTER_MS); // the memory period that began with the last failure
      const after = await metric(server, 'rate_limit_store_fallback_total');
      for (let i = 0; i < 3; i++) expect((await key()).status).toBe(200);
      expect(await metric(server, 'rate_limit_store_fallback_total')).toBe(after);
    });
  }
});

// ---------------------------------------------------------------------------------------------
// PostgreSQL gone mid-run: every endpoint that needs it answers a quick, bare 503; it recovers
// without a restart; a write cut in the middle leaves nothing, and its idempotent retry runs once.
// ---------------------------------------------------------------------------------------------

if (!DATABASE_URL) describe('PostgreSQL cut at run time', () => it.skip(POSTGRES_SKIP_REASON, () => {}));

describe.skipIf(!DATABASE_URL)('PostgreSQL cut at run time (the app behind a relay)', () => {
  let relay: Relay;
  let t: TestApp;
  let partner: Partner;
  const own = { customer: '', session: '', order: '', transaction: '' };
  let direct: pg.Pool;

  beforeAll(async () => {
    relay = await startRelay(targetOf(DATABASE_URL!, 5432));
    t = await buildTestApp('postgres', {
      DATABASE_URL: relay.urlFor(DATABASE_URL!),
      IDEMPOTENCY_LOCK_SECONDS: '2',
    });
    direct = new pg.Pool({ connectionString: DATABASE_URL, max: 3 });
    direct.on('error', idleConnectionLost);
    const stocks = await ensureCatalog(t);
    partner = await createPartner(t);
    own.customer = await insertCustomer(t, partner);
    const opened = await signedInject(t.app, partner, {
      method: 'POST',
      url: '/v1/ussd/session',
      body: { customerId: own.customer },
    });
    own.session = opened.json().data.sessionId;
    const placed = await placePendingBuy(t, partner, {
      customerId: own.customer,
      stockId: stocks.buy,
      amount: '700.00',
    });
    own.order = placed.orderId;
    own.transaction = placed.transactionId;
  });
  afterAll(async () => {
    await relay?.restore().catch(() => {});
    await t?.close().catch(() => {});
    await relay?.close();
    await direct?.end();
  });

  /** One request per endpoint that needs the database, built fresh (new idempotency keys). */
  const requests = (): [string, () => Promise<LightMyRequestResponse>][] => [
    ['healthz', () => t.app.inject({ method: 'GET', url: '/healthz' })],
    [
      'token',
      () =>
        t.app.inject({
          method: 'POST',
          url: '/v1/oauth/token',
          payload: { clientId: partner.clientId, clientSecret: partner.clientSecret },
        }),
    ],
    ['me', () => signedInject(t.app, partner, { method: 'GET', url: '/v1/oauth/me' })],
    ['customers.list', () => signedInject(t.app, partner, { method: 'GET', url: '/v1/customers' })],
    [
      'customers.get',
      () => signedInject(t.app, partner, { method: 'GET', url: `/v1/customers/${own.customer}` }),
    ],
    [
      'customers.create',
      () =>
        signedInject(t.app, partner, {
          method: 'POST',
          url: '/v1/customers',
          body: { firstName: 'Cut', lastName: 'Over' },
        }),
    ],
    [
      'customers.patch',
      () =>
        signedInject(t.app, partner, {
          method: 'PATCH',
          url: `/v1/customers/${own.customer}`,
          body: { referenceId: `ref-${randomUUID().slice(0, 6)}` },
        }),
    ],
    [
      'payment.status',
      () => signedInject(t.app, partner, { method: 'GET', url: `/v1/payment/status/${own.order}` }),
    ],
    [
      'ussd.session',
      () =>
        signedInject(t.app, partner, {
          method: 'POST',
          url: '/v1/ussd/session',
          body: { customerId: own.customer },
        }),
    ],
    [
      'ussd.process',
      () =>
        signedInject(t.app, partner, {
          method: 'POST',
          url: '/v1/ussd/process',
          body: { sessionId: own.session, choice: '0' },
        }),
    ],
    ['callback', () => sendCallback(t, { transactionId: createId(), status: 'SUCCESS' })],
  ];

  const HANG_SAMPLE = new Set(['healthz', 'token', 'customers.create', 'ussd.process', 'callback']);

  const waitForDatabase = async () => {
    const deadline = Date.now() + 15_000;
    while ((await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode !== 200) {
      if (Date.now() > deadline) throw new Error('the database never came back');
      await sleep(100);
    }
  };

  it('answers normally through the relay', async () => {
    for (const [name, send] of requests()) {
      const res = await send();
      if (name === 'callback') expect(res.statusCode, name).toBe(404);
      else expect(res.statusCode, `${name}: ${res.body}`).toBeLessThan(300);
    }
  });

  for (const [mode, boundMs] of [
    ['refuse', 2000],
    ['blackhole', 8000],
  ] as const) {
    it(`PostgreSQL ${mode === 'refuse' ? 'stopped' : 'unreachable (connections hang)'}: every endpoint answers 503 Service Unavailable within ${boundMs} ms; back without a restart`, async () => {
      await relay.cut(mode);
      faults += 1;
      // A hanging connect costs the pool's 3 s connection timeout per request: a sample of endpoints then.
      const sample = mode === 'refuse' ? requests() : requests().filter(([n]) => HANG_SAMPLE.has(n));
      for (const [name, send] of sample) {
        const started = Date.now();
        const res = await send();
        expect([name, res.statusCode, res.body]).toEqual([name, 503, '{"error":"Service Unavailable"}']);
        expect(Date.now() - started, name).toBeLessThan(boundMs);
      }
      // Nothing that does not need the database is affected.
      expect((await t.app.inject({ method: 'GET', url: '/v1/webhooks/key' })).statusCode).toBe(200);

      await relay.restore();
      await waitForDatabase();
      for (const [name, send] of requests()) {
        const res = await send();
        if (name === 'callback') expect(res.statusCode, name).toBe(404);
        else expect(res.statusCode, `${name}: ${res.body}`).toBeLessThan(300);
      }
    });
  }

  it('PostgreSQL frozen on open connections: a bare 503 within the 10 s query timeout, never a hang; then the circuit is open and every request gets its 503 at once', async () => {
    // Every pooled connection is warm, then traffic stops flowing on them.
    await Promise.all(
      Array.from({ length: 4 }, () => signedInject(t.app, partner, { method: 'GET', url: '/v1/oauth/me' })),
    );
    await relay.cut('freeze');
    faults += 1;
    const started = Date.now();
    const res = await signedInject(t.app, partner, { method: 'GET', url: '/v1/customers' });
    expect([res.statusCode, res.body]).toEqual([503, '{"error":"Service Unavailable"}']);
    expect(Date.now() - started).toBeLessThan(13_000);
    // The timeout opened the circuit: no request waits for the query timeout again while it is frozen.
    for (const url of ['/v1/customers', '/v1/oauth/me', '/healthz']) {
      const again = Date.now();
      const next = url.startsWith('/v1')
        ? await signedInject(t.app, partner, { method: 'GET', url })
        : await t.app.inject({ method: 'GET', url });
      expect([url, next.statusCode, next.body]).toEqual([url, 503, '{"error":"Service Unavailable"}']);
      expect(Date.now() - again, url).toBeLessThan(3000);
    }
    await relay.restore();
    await waitForDatabase();
    expect((await signedInject(t.app, partner, { method: 'GET', url: '/v1/customers' })).statusCode).toBe(
      200,
    );
  }, 40_000);

  // POST /v1/customers is one autocommit statement (the key's record, the row, its answer: see
  // plugins/idempotency.ts, respondCreated). A cut while it runs ends one of two ways, both exactly once.
  describe('a customer create cut in the middle', () => {
    const create = (key: string, lastName: string) =>
      signedInject(t.app, partner, {
        method: 'POST',
        url: '/v1/customers',
        body: { firstName: 'Half', lastName },
        idempotencyKey: key,
      });
    const written = async (key: string, lastName: string) => {
      const { rows } = await direct.query(
        `select (select count(*)::int from customers where organization_id = $1 and last_name = $2) as customers,
                (select count(*)::int from idempotency_keys where key = $3) as keys,
                (select count(*)::int from idempotency_keys where key = $3 and response_status = 201) as answered`,
        [partner.organizationId, lastName, key],
      );
      return rows[0] as { customers: number; keys: number; answered: number };
    };
    const waitUntilGone = async (pid: number) => {
      const deadline = Date.now() + 10_000;
      while ((await direct.query('select 1 from pg_stat_activity where pid = $1', [pid])).rowCount) {
        if (Date.now() > deadline) throw new Error('the cut backend never ended');
        await sleep(50);
      }
    };

    /** Cuts PostgreSQL while the create's statement waits on the organization row (held here). */
    async function cutWhileWaiting(
      key: string,
      lastName: string,
      releaseHolder: 'at once' | 'after the backend ends',
    ) {
      const holder = await direct.connect();
      let blocked: number | undefined;
      try {
        await holder.query('begin');
        await holder.query('select 1 from organizations where id = $1 for update', [partner.organizationId]);
        const holderPid = (await holder.query('select pg_backend_pid() as pid')).rows[0].pid as number;
        const inFlight = create(key, lastName);
        const deadline = Date.now() + 10_000;
        while (blocked === undefined) {
          const { rows: waiting } = await direct.query(
            'select pid from pg_stat_activity where $1 = any(pg_blocking_pids(pid))',
            [holderPid],
          );
          blocked = waiting[0]?.pid;
          if (Date.now() > deadline) throw new Error('the insert never blocked');
          if (blocked === undefined) await sleep(20);
        }
        // The database goes away while the statement waits, before anything is committed.
        await relay.cut('refuse');
        faults += 1;
        const cut = await inFlight;
        expect([cut.statusCode, cut.body]).toEqual([503, '{"error":"Service Unavailable"}']);
        // PostgreSQL polls the gone client while the statement waits (client_connection_check_interval).
        if (releaseHolder === 'after the backend ends') await waitUntilGone(blocked);
      } finally {
        await holder.query('commit');
        holder.release();
      }
      await waitUntilGone(blocked!);
      await relay.restore();
      await waitForDatabase();
    }

    it('the lock held past the cut: PostgreSQL cancels the statement; no row, no key; the retry creates exactly one', async () => {
      const lastName = `Cut${randomUUID().slice(0, 8)}`;
      const key = randomUUID();
      await cutWhileWaiting(key, lastName, 'after the backend ends');
      expect(await written(key, lastName)).toEqual({ customers: 0, keys: 0, answered: 0 });
      const retry = await create(key, lastName);
      expect([retry.statusCode, retry.headers['idempotent-replayed']], retry.body).toEqual([201, undefined]);
      const replay = await create(key, lastName);
      expect([replay.statusCode, replay.body, replay.headers['idempotent-replayed']]).toEqual([
        201,
        retry.body,
        'true',
      ]);
      expect(await written(key, lastName)).toEqual({ customers: 1, keys: 1, answered: 1 });
    });

    it('the lock released at once: nothing, or the row with its stored answer, never one without the other; the retry ends with exactly one', async () => {
      const lastName = `Cut${randomUUID().slice(0, 8)}`;
      const key = randomUUID();
      await cutWhileWaiting(key, lastName, 'at once');
      const after = await written(key, lastName);
      expect([
        { customers: 0, keys: 0, answered: 0 },
        { customers: 1, keys: 1, answered: 1 },
      ]).toContainEqual(after);
      const retry = await create(key, lastName);
      expect(retry.statusCode, retry.body).toBe(201);
      // Committed before the cut was noticed: the retry replays that create's answer.
      expect(retry.headers['idempotent-replayed']).toBe(after.customers ? 'true' : undefined);
      const { rows: ids } = await direct.query(
        'select id from customers where organization_id = $1 and last_name = $2',
        [partner.organizationId, lastName],
      );
      expect(ids.map((r) => r.id)).toEqual([retry.json().data.id]);
    });
  });
});

// ---------------------------------------------------------------------------------------------
// A real server process: PostgreSQL dropped mid-transaction (the process survives), then SIGKILL in
// the middle of an idempotent request; the retry after the lock expires runs exactly once.
// ---------------------------------------------------------------------------------------------

if (!DATABASE_URL) describe('a server killed mid-request', () => it.skip(POSTGRES_SKIP_REASON, () => {}));

describe.skipIf(!DATABASE_URL)(
  'a server process killed (SIGKILL) in the middle of an idempotent request',
  () => {
    const LOCK_SECONDS = 15;
    let relay: Relay;
    let direct: pg.Pool;
    const servers: ServerProcess[] = [];
    const env = {
      DATA_DIR: tempDataDir(),
      ADMIN_TOKEN: randomBytes(24).toString('hex'),
      JWT_SECRET: randomBytes(32).toString('hex'),
      IDEMPOTENCY_LOCK_SECONDS: String(LOCK_SECONDS),
      RATE_LIMIT_GLOBAL: '100000/60s',
      LOG_LEVEL: 'warn',
    };
    // A database of their own: a server killed here holding a lease on another suite's payment
    // requests (every spawned server runs the same sandbox adapter) would leave them for 60 s.
    let database: { url: string; drop(): Promise<void> } | undefined;
    let databaseUrl = '';
    beforeAll(async () => {
      database = await scratchDatabase(DATABASE_URL!, 'faults');
      databaseUrl = database.url;
      relay = await startRelay(targetOf(databaseUrl, 5432));
      direct = new pg.Pool({ connectionString: databaseUrl, max: 3 });
      direct.on('error', idleConnectionLost);
    });
    afterAll(async () => {
      for (const s of servers) await s.stop('SIGKILL');
      await relay?.close();
      await direct?.end();
      await database?.drop();
    });

    const onboard = (server: ServerProcess) =>
      createPartner(
        { baseUrl: server.baseUrl, adminUrl: server.adminUrl, adminToken: env.ADMIN_TOKEN },
        { name: `Killed ${randomUUID().slice(0, 6)}`, keyPrefix: 'kill' },
      );

    /** A signed POST /v1/customers to this server. */
    function createCustomer(server: ServerProcess, caller: Partner, lastName: string, key: string) {
      const body = JSON.stringify({ firstName: 'Killed', lastName });
      const request = { method: 'POST', url: '/v1/customers', idempotencyKey: key } as const;
      const headers = signedHeaders({ ...caller, baseUrl: server.baseUrl }, request, body);
      return timed(`${server.baseUrl}/v1/customers`, { method: 'POST', headers, body }, 20_000);
    }

    const count = async (organizationId: string, lastName: string) =>
      (
        await direct.query(
          'select count(*)::int as n from customers where organization_id = $1 and last_name = $2',
          [organizationId, lastName],
        )
      ).rows[0].n as number;

    /** Holds a row (FOR UPDATE) so that a statement that needs it waits: a customer insert (its
     * foreign key) on the organization, a customer PATCH on the customer. */
    async function holdRow(table: 'organizations' | 'customers', id: string) {
      const holder = await direct.connect();
      await holder.query('begin');
      await holder.query(`select 1 from ${table} where id = $1 for update`, [id]);
      const pid = (await holder.query('select pg_backend_pid() as pid')).rows[0].pid as number;
      return {
        async blockedBackend(): Promise<number> {
          const deadline = Date.now() + 15_000;
          for (;;) {
            const { rows } = await direct.query(
              'select pid from pg_stat_activity where $1 = any(pg_blocking_pids(pid))',
              [pid],
            );
            if (rows[0]) return rows[0].pid as number;
            if (Date.now() > deadline) throw new Error('the insert never blocked');
            await sleep(20);
          }
        },
        async release() {
          await holder.query('commit');
          holder.release();
        },
      };
    }

    const gone = async (pid: number) => {
      const deadline = Date.now() + 15_000;
      while ((await direct.query('select 1 from pg_stat_activity where pid = $1', [pid])).rowCount) {
        if (Date.now() > deadline) throw new Error(`backend ${pid} never ended`);
        await sleep(50);
      }
    };

    /** A signed PATCH /v1/customers/{id} to this server. */
    function patchCustomer(
      server: ServerProcess,
      caller: Partner,
      id: string,
      lastName: string,
      key: string,
    ) {
      const body = JSON.stringify({ lastName });
      const request = { method: 'PATCH', url: `/v1/customers/${id}`, idempotencyKey: key } as const;
      const headers = signedHeaders({ ...caller, baseUrl: server.baseUrl }, request, body);
      return timed(`${server.baseUrl}/v1/customers/${id}`, { method: 'PATCH', headers, body }, 20_000);
    }

    const keyRecord = async (key: string) =>
      (
        await direct.query(
          `select response_status, locked_until > now() as locked,
             extract(epoch from locked_until - now())::float as left_s
           from idempotency_keys where key = $1`,
          [key],
        )
      ).rows[0] as { response_status: number | null; locked: boolean; left_s: number } | undefined;

    const inProgress = {
      error: 'Conflict',
      message: 'A request with this X-Idempotency-Key is already in progress',
    };

    it('PostgreSQL dropped mid-request: the process survives, answers 503, then recovers; SIGKILL mid-create, the retry runs once at once; SIGKILL mid-transaction, the retry after the lock expires runs once', async () => {
      const first = await startServer({ ...env, DATABASE_URL: relay.urlFor(databaseUrl) });
      servers.push(first);
      const caller = await onboard(first);

      // 1. The connection of a create in progress is cut: 503, and the process is still there.
      {
        const hold = await holdRow('organizations', caller.organizationId);
        const lastName = `Drop${randomUUID().slice(0, 8)}`;
        const inFlight = createCustomer(first, caller, lastName, randomUUID());
        const blocked = await hold.blockedBackend();
        await relay.cut('refuse');
        faults += 1;
        const res = await inFlight;
        expect([res.status, res.body]).toEqual([503, '{"error":"Service Unavailable"}']);
        // PostgreSQL cancels the statement of a gone client while it waits (client_connection_check_interval).
        await gone(blocked);
        await hold.release();
        await relay.restore();
        expect(first.child.exitCode, first.output()).toBeNull();
        // The drop opened the circuit; its probe closes it within moments of PostgreSQL's return.
        let health = await timed(`${first.baseUrl}/healthz`);
        for (let i = 0; i < 20 && health.status !== 200; i++) {
          await sleep(100);
          health = await timed(`${first.baseUrl}/healthz`);
        }
        expect(health.status).toBe(200);
        expect(await count(caller.organizationId, lastName)).toBe(0);
      }

      // 2. SIGKILL while the create's one statement waits: PostgreSQL cancels it. Nothing committed,
      //    not even the key's record: the retry on another instance runs at once, exactly once.
      const lastName = `Kill${randomUUID().slice(0, 8)}`;
      const key = randomUUID();
      {
        const hold = await holdRow('organizations', caller.organizationId);
        const inFlight = createCustomer(first, caller, lastName, key).then(
          (r) => r.status,
          (e: Error) => e.message,
        );
        const blocked = await hold.blockedBackend();
        first.child.kill('SIGKILL');
        faults += 1;
        expect(await first.exited).toBeNull(); // killed by a signal: no exit code
        expect(await inFlight).toMatch(/fetch failed|terminated|socket/i);
        await gone(blocked);
        await hold.release();
      }
      expect(await count(caller.organizationId, lastName)).toBe(0);
      expect(await keyRecord(key)).toBeUndefined();
      const second = await startServer({ ...env, DATABASE_URL: databaseUrl });
      servers.push(second);
      const retry = await createCustomer(second, caller, lastName, key);
      expect([retry.status, retry.headers.get('idempotent-replayed')], retry.body).toEqual([201, null]);
      const replay = await createCustomer(second, caller, lastName, key);
      expect([replay.status, replay.body, replay.headers.get('idempotent-replayed')]).toEqual([
        201,
        retry.body,
        'true',
      ]);
      expect(await count(caller.organizationId, lastName)).toBe(1);

      // 3. SIGKILL while a PATCH's write waits (its key claimed first, by a statement of its own; the
      //    write, its event and its stored answer one autocommit statement): PostgreSQL cancels the
      //    gone client's statement, as for the create. Nothing of the change committed, the key stays
      //    locked by the dead request; another instance answers 409 while the lock holds, then runs the
      //    retry exactly once.
      const customerId = JSON.parse(retry.body).data.id as string;
      const patchKey = randomUUID();
      const renamed = `Renamed${randomUUID().slice(0, 8)}`;
      const third = await startServer({ ...env, DATABASE_URL: databaseUrl });
      servers.push(third);
      {
        const hold = await holdRow('customers', customerId);
        const inFlight = patchCustomer(third, caller, customerId, renamed, patchKey).then(
          (r) => r.status,
          (e: Error) => e.message,
        );
        const blocked = await hold.blockedBackend();
        third.child.kill('SIGKILL');
        faults += 1;
        expect(await third.exited).toBeNull();
        expect(await inFlight).toMatch(/fetch failed|terminated|socket/i);
        await gone(blocked);
        await hold.release();
      }
      expect(await count(caller.organizationId, renamed)).toBe(0);
      const record = await keyRecord(patchKey);
      expect(record).toMatchObject({ response_status: null, locked: true });
      if (record!.left_s > 1) {
        const early = await patchCustomer(second, caller, customerId, renamed, patchKey);
        expect([early.status, JSON.parse(early.body)]).toEqual([409, inProgress]);
      }
      await sleep(Math.max(0, (await keyRecord(patchKey))!.left_s * 1000) + 300);
      const patched = await patchCustomer(second, caller, customerId, renamed, patchKey);
      expect([patched.status, patched.headers.get('idempotent-replayed')], patched.body).toEqual([200, null]);
      const again = await patchCustomer(second, caller, customerId, renamed, patchKey);
      expect([again.status, again.body, again.headers.get('idempotent-replayed')]).toEqual([
        200,
        patched.body,
        'true',
      ]);
      expect(await count(caller.organizationId, renamed)).toBe(1);
    }, 120_000);

    it('the lock of a crashed request lasts 60 s unless IDEMPOTENCY_LOCK_SECONDS says otherwise', () => {
      expect(loadConfig({}).IDEMPOTENCY_LOCK_SECONDS).toBe(60);
      expect(loadConfig({ IDEMPOTENCY_LOCK_SECONDS: '5' }).IDEMPOTENCY_LOCK_SECONDS).toBe(5);
      expect(() => loadConfig({ IDEMPOTENCY_LOCK_SECONDS: '0' })).toThrow(/IDEMPOTENCY_LOCK_SECONDS/);
    });
  },
);

// ---------------------------------------------------------------------------------------------
// Payment callbacks out of order: twice, late (after the order was cancelled), and before the
// order's own commit.
// ---------------------------------------------------------------------------------------------

describeStores('payment callbacks out of order, on %s', (store) => {
  let t: TestApp;
  let stocks: Awaited<ReturnType<typeof ensureCatalog>>;
  beforeAll(async () => {
    t = await buildTestApp(store);
    stocks = await ensureCatalog(t);
  });
  afterAll(() => t.close());

  const db = () => t.ctx.database.db;
  const state = async (orderId: string, customerId: string) => ({
    order: (await db().select().from(orders).where(eq(orders.id, orderId)))[0]?.status,
    transactions: (await db().select().from(transactions).where(eq(transactions.orderId, orderId)))
      .map((x) => `${x.type}:${x.status}:${x.amount}`)
      .sort(),
    holdings: (await db().select().from(holdings).where(eq(holdings.customerId, customerId))).map(
      (h) => h.units,
    ),
  });

  async function pendingBuy(amount: string) {
    const partner = await createPartner(t);
    const customerId = await insertCustomer(t, partner);
    return {
      customerId,
      ...(await placePendingBuy(t, partner, { customerId, stockId: stocks.buy, amount })),
    };
  }

  it('twice (and five times at once): applied once, the holding credited once', async () => {
    const { customerId, orderId, transactionId } = await pendingBuy('1000.00');
    const body = JSON.stringify({ transactionId, status: 'SUCCESS', providerReference: 'TWICE1' });
    const answers = await Promise.all(Array.from({ length: 5 }, () => sendCallback(t, body)));
    faults += 1;
    const messages = answers.map((r) => `${r.statusCode} ${r.json().message}`).sort();
    expect(messages).toEqual([
      '200 Callback already applied',
      '200 Callback already applied',
      '200 Callback already applied',
      '200 Callback already applied',
      '200 Callback applied',
    ]);
    const after = await state(orderId, customerId);
    expect(after).toEqual({
      order: 'EXECUTED',
      transactions: ['INCOMING:SUCCESS:1000.00'],
      holdings: ['40.0000'],
    });
    const again = await sendCallback(t, body);
    expect([again.statusCode, again.json().message]).toEqual([200, 'Callback already applied']);
    expect(await state(orderId, customerId)).toEqual(after);
  });

  it('late, after the order was cancelled: the payment is refunded once; a late FAILED changes nothing', async () => {
    const failed = await pendingBuy('600.00');
    const paid = await pendingBuy('800.00');
    for (const { customerId, orderId } of [failed, paid]) {
      const order = (await db().select().from(orders).where(eq(orders.id, orderId)))[0]!;
      await db().transaction((tx) =>
        cancelOrder(tx, { organizationId: order.organizationId, customerId, orderId }, t.ctx),
      );
    }
    faults += 2;
    const lateFailed = await sendCallback(t, { transactionId: failed.transactionId, status: 'FAILED' });
    expect([lateFailed.statusCode, lateFailed.json().message]).toEqual([200, 'Callback already applied']);
    expect(await state(failed.orderId, failed.customerId)).toEqual({
      order: 'CANCELLED',
      transactions: ['INCOMING:CANCELLED:600.00'],
      holdings: [],
    });
    const body = JSON.stringify({
      transactionId: paid.transactionId,
      status: 'SUCCESS',
      providerReference: 'LATE1',
    });
    const late = await sendCallback(t, body);
    expect([late.statusCode, late.json().message]).toEqual([200, 'Callback applied']);
    const repeat = await sendCallback(t, body);
    expect([repeat.statusCode, repeat.json().message]).toEqual([200, 'Callback already applied']);
    expect(await state(paid.orderId, paid.customerId)).toEqual({
      order: 'CANCELLED',
      transactions: ['INCOMING:CANCELLED:800.00', 'OUTGOING:PENDING:800.00'],
      holdings: [],
    });
  });

  it("before the order's own commit: 404, and the provider's retry after the commit applies once", async () => {
    const partner = await createPartner(t);
    const customerId = await insertCustomer(t, partner);
    const orderId = createId();
    const transactionId = createId();
    const body = JSON.stringify({ transactionId, status: 'SUCCESS', providerReference: 'EARLY1' });
    const insertOrder = async (tx: Queryable) => {
      await tx.insert(orders).values({
        id: orderId,
        organizationId: partner.organizationId,
        customerId,
        stockId: stocks.buy,
        side: 'BUY',
        status: 'PENDING_PAYMENT',
        amount: '500.00',
        price: '25.0000',
      });
      await tx.insert(transactions).values({
        id: transactionId,
        organizationId: partner.organizationId,
        orderId,
        type: 'INCOMING',
        amount: '500.00',
        status: 'PENDING',
        provider: 'MPESA',
        msisdn: '254712345678',
      });
    };
    const notFound = { error: 'Not found', message: 'Transaction not found' };
    if (store === 'postgres') {
      // The order's transaction is open (inserted, not committed) when the callback arrives.
      await db().transaction(async (tx) => {
        await insertOrder(tx);
        const early = await sendCallback(t, body);
        expect([early.statusCode, early.json()]).toEqual([404, notFound]);
      });
    } else {
      // PGlite has one connection: an open transaction would hold the callback back, so the
      // callback comes first and the commit after.
      const early = await sendCallback(t, body);
      expect([early.statusCode, early.json()]).toEqual([404, notFound]);
      await insertOrder(db());
    }
    faults += 1;
    expect(await state(orderId, customerId)).toEqual({
      order: 'PENDING_PAYMENT',
      transactions: ['INCOMING:PENDING:500.00'],
      holdings: [],
    });
    const retry = await sendCallback(t, body);
    expect([retry.statusCode, retry.json().message]).toEqual([200, 'Callback applied']);
    const again = await sendCallback(t, body);
    expect([again.statusCode, again.json().message]).toEqual([200, 'Callback already applied']);
    expect(await state(orderId, customerId)).toEqual({
      order: 'EXECUTED',
      transactions: ['INCOMING:SUCCESS:500.00'],
      holdings: ['20.0000'],
    });
  });
});
