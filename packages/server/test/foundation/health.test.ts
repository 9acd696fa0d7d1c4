import {
  buildTestApp,
  describeStores,
  POSTGRES_SKIP_REASON,
  type TestApp,
} from '@partner-api/testkit/app.ts';
import { type Relay, startRelay, targetOf } from '@partner-api/testkit/faults.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const UNAVAILABLE_BODY = '{"error":"Service Unavailable"}';

describeStores('GET /healthz on %s', (store) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp(store);
  });
  afterAll(async () => {
    await t.close().catch(() => {}); // the store was closed on purpose
  });

  it('answers 200 with the store and checks while the database answers', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/healthz' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      status: 'ok',
      store,
      checks: { database: 'ok', redis: 'not configured' },
      payments: { worker: 'stopped', breakers: {} },
    });
  });

  it('answers 503 with the bare label once the database is gone', async () => {
    await t.ctx.database.close();
    const res = await t.app.inject({ method: 'GET', url: '/healthz' });
    expect(res.statusCode).toBe(503);
    expect(res.body).toBe(UNAVAILABLE_BODY);
    expect(res.headers['ratelimit-limit']).toBeUndefined();
  });
});

/**
 * A PostgreSQL that becomes unreachable while the server runs: the app talks to the real server
 * through a TCP relay (support/faults.ts) that the test then cuts. Answers must be a quick 503,
 * never a hang or a 500.
 */
if (!process.env.DATABASE_URL)
  describe('PostgreSQL unreachable', () => it.skip(POSTGRES_SKIP_REASON, () => {}));

describe.skipIf(!process.env.DATABASE_URL)('PostgreSQL unreachable at run time', () => {
  let relay: Relay;
  let t: TestApp;
  beforeAll(async () => {
    relay = await startRelay(targetOf(process.env.DATABASE_URL!, 5432));
    t = await buildTestApp('postgres', { DATABASE_URL: relay.urlFor(process.env.DATABASE_URL!) });
  });
  afterAll(async () => {
    await relay?.close();
    await t?.close().catch(() => {});
  });

  it('healthz and a database-backed endpoint answer 503 quickly', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    await relay.cut('refuse');

    const started = Date.now();
    const health = await t.app.inject({ method: 'GET', url: '/healthz' });
    expect(health.statusCode).toBe(503);
    expect(health.body).toBe(UNAVAILABLE_BODY);

    const token = await t.app.inject({
      method: 'POST',
      url: '/v1/oauth/token',
      payload: { clientId: `org_${'1'.repeat(32)}`, clientSecret: `${'2'.repeat(32)}_${'3'.repeat(32)}` },
    });
    expect(token.statusCode).toBe(503);
    expect(token.body).toBe(UNAVAILABLE_BODY);
    expect(Date.now() - started).toBeLessThan(8000);
  });
});
