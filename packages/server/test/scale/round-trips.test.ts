/**
 * Round trips per request, counted on the wire: the app reaches PostgreSQL and Redis
 * through relays (support/faults.ts) that count what the clients send. PostgreSQL: one exchange per
 * Sync or Query message. Redis: one write of the client per round trip (the rate limiter corks a
 * loop turn's commands into one write). The caller is loaded once, then served from memory.
 */
import { randomUUID } from 'node:crypto';
import { ErrorMessage } from '@partner-api/contract';
import {
  buildTestApp,
  POSTGRES_SKIP_REASON,
  REDIS_SKIP_REASON,
  type TestApp,
} from '@partner-api/testkit/app.ts';
import { type Relay, startRelay, targetOf } from '@partner-api/testkit/faults.ts';
import { createPartner, type Partner, signedInject } from '@partner-api/testkit/partner.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureCatalog, insertCustomer } from '../ussd/support.ts';

const { DATABASE_URL, REDIS_URL } = process.env;
const skipReason = !DATABASE_URL ? POSTGRES_SKIP_REASON : !REDIS_URL ? REDIS_SKIP_REASON : undefined;

if (skipReason) describe('round trips per request', () => it.skip(skipReason, () => {}));

describe.skipIf(skipReason !== undefined)('round trips per request, counted on the wire', () => {
  let postgres: Relay;
  let redis: Relay;
  let t: TestApp;
  let partner: Partner;

  beforeAll(async () => {
    postgres = await startRelay(targetOf(DATABASE_URL!, 5432), { protocol: 'postgres' });
    redis = await startRelay(targetOf(REDIS_URL!, 6379));
    t = await buildTestApp(
      'postgres',
      { DATABASE_URL: postgres.urlFor(DATABASE_URL!), REDIS_URL: redis.urlFor(REDIS_URL!) },
      { withRedis: true },
    );
    partner = await createPartner(t);
    // The first request of a token loads its caller; every later one is served from memory.
    expect((await signedInject(t.app, partner, { method: 'GET', url: '/v1/oauth/me' })).statusCode).toBe(200);
  });
  afterAll(async () => {
    await t?.close();
    await Promise.all([postgres?.close(), redis?.close()]);
  });

  /** The response and the round trips it cost on each store. */
  async function counted(request: Parameters<typeof signedInject>[2]) {
    const before = { database: postgres.exchanges, redis: redis.received };
    const res = await signedInject(t.app, partner, request);
    return { res, database: postgres.exchanges - before.database, redis: redis.received - before.redis };
  }

  const create = (key: string, lastName: string) =>
    counted({
      method: 'POST',
      url: '/v1/customers',
      body: { firstName: 'Ada', lastName },
      idempotencyKey: key,
    });

  it('a signed idempotent POST /v1/customers with a new key: one database round trip and one Redis round trip', async () => {
    const { res, database, redis: r } = await create(randomUUID(), 'Lovelace');
    expect(res.statusCode, res.body).toBe(201);
    expect({ database, redis: r }).toEqual({ database: 1, redis: 1 });
  });

  it('its replay, and the same key with another body (422): one database round trip each', async () => {
    const key = randomUUID();
    const first = await create(key, 'Byron');
    const replay = await create(key, 'Byron');
    expect([replay.res.statusCode, replay.res.body, replay.res.headers['idempotent-replayed']]).toEqual([
      201,
      first.res.body,
      'true',
    ]);
    expect(replay.database).toBe(1);
    const mismatch = await create(key, 'King');
    expect([mismatch.res.statusCode, mismatch.res.json()]).toEqual([
      422,
      { error: 'Unprocessable Entity', message: ErrorMessage.idempotencyPayloadMismatch },
    ]);
    expect(mismatch.database).toBe(1);
  });

  it('a signed GET /v1/customers/{id}: one database round trip and one Redis round trip', async () => {
    const created = (await create(randomUUID(), 'Somerville')).res.json().data;
    const { res, database, redis: r } = await counted({ method: 'GET', url: `/v1/customers/${created.id}` });
    expect(res.statusCode).toBe(200);
    expect({ database, redis: r }).toEqual({ database: 1, redis: 1 });
  });

  it('GET /v1/oauth/me: one database round trip; GET /v1/customers: its page and its count side by side', async () => {
    await create(randomUUID(), 'Agnesi');
    const me = await counted({ method: 'GET', url: '/v1/oauth/me' });
    expect([me.res.statusCode, me.res.json().data.credentials.length]).toEqual([200, 1]);
    const list = await counted({ method: 'GET', url: '/v1/customers?limit=1' });
    expect(list.res.statusCode).toBe(200);
    expect([me.database, list.database]).toEqual([1, 2]);
  });

  it('a signed PATCH /v1/customers/{id}: the claim with the read, then one write, no transaction', async () => {
    const created = (await create(randomUUID(), 'Noether')).res.json().data;
    const {
      res,
      database,
      redis: r,
    } = await counted({
      method: 'PATCH',
      url: `/v1/customers/${created.id}`,
      body: { lastName: 'Germain' },
      idempotencyKey: randomUUID(),
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.lastName).toBe('Germain');
    expect({ database, redis: r }).toEqual({ database: 2, redis: 1 });
  });

  it('a USSD session opened, and a move without effects: two statements each', async () => {
    const customer = (await create(randomUUID(), 'Hopper')).res.json().data;
    const opened = await counted({
      method: 'POST',
      url: '/v1/ussd/session',
      body: { customerId: customer.id },
      idempotencyKey: randomUUID(),
    });
    expect(opened.res.statusCode, opened.res.body).toBe(201);
    const sessionId = opened.res.json().data.sessionId;
    const moved = await counted({
      method: 'POST',
      url: '/v1/ussd/process',
      body: { sessionId, choice: '1' },
      idempotencyKey: randomUUID(),
    });
    expect(moved.res.statusCode, moved.res.body).toBe(200);
    // The claim with the customer and the menu's data (open) or with the session and the data,
    // unlocked (move); the session's write with the stored answer, autocommit (the move's only if the
    // session is unchanged). No transaction: nothing to BEGIN or COMMIT.
    expect({ database: opened.database, redis: opened.redis }).toEqual({ database: 2, redis: 1 });
    expect({ database: moved.database, redis: moved.redis }).toEqual({ database: 2, redis: 1 });
  });

  it('a confirmed buy: the claim with the read, then one transaction of five statements', async () => {
    await ensureCatalog(t);
    const customerId = await insertCustomer(t, partner);
    const opened = await counted({
      method: 'POST',
      url: '/v1/ussd/session',
      body: { customerId },
      idempotencyKey: randomUUID(),
    });
    expect(opened.res.statusCode, opened.res.body).toBe(201);
    const sessionId = opened.res.json().data.sessionId;
    const choose = (choice: string) =>
      counted({
        method: 'POST',
        url: '/v1/ussd/process',
        body: { sessionId, choice },
        idempotencyKey: randomUUID(),
      });
    // HOME → STOCKS → SELECT_STOCK → BUY_AMOUNT → BUY_CONFIRM, then the confirmation.
    for (const choice of ['1', '1', '1', '1000']) expect((await choose(choice)).res.statusCode).toBe(200);
    const bought = await choose('1');
    expect(bought.res.statusCode, bought.res.body).toBe(200);
    expect(bought.res.json().data.currentState).toBe('BUY_SUBMITTED');
    // The claim with the session, unlocked; then BEGIN, the session locked with the snapshot, the
    // savepoint, the order with its collection and the collection's provider request (one
    // statement), the session with the stored answer, COMMIT.
    expect({ database: bought.database, redis: bought.redis }).toEqual({ database: 7, redis: 1 });
  });
});
