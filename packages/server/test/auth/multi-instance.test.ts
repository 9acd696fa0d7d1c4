import { randomBytes, randomUUID } from 'node:crypto';
import { ErrorMessage } from '@partner-api/contract';
import { buildTestApp, POSTGRES_SKIP_REASON, type TestApp } from '@partner-api/testkit/app.ts';
import { createPartner, signedHeaders, signedInject } from '@partner-api/testkit/partner.ts';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const shared = {
  JWT_SECRET: randomBytes(32).toString('hex'),
  ADMIN_TOKEN: randomBytes(24).toString('hex'),
};

if (!process.env.DATABASE_URL)
  console.info(`multi-instance idempotency and revocation: ${POSTGRES_SKIP_REASON}`);

describe.skipIf(!process.env.DATABASE_URL)('two instances on one PostgreSQL behave as one service', () => {
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    [a, b] = await Promise.all([buildTestApp('postgres', shared), buildTestApp('postgres', shared)]);
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
  });

  it('a token revoked through instance A is refused by instance B on the next request', async () => {
    const p = await createPartner(a);
    expect((await signedInject(b.app, p, { method: 'GET', url: '/v1/oauth/me' })).statusCode).toBe(200);
    expect((await signedInject(a.app, p, { method: 'POST', url: '/v1/oauth/revoke' })).statusCode).toBe(200);
    const res = await signedInject(b.app, p, { method: 'GET', url: '/v1/oauth/me' });
    expect([res.statusCode, res.json()]).toEqual([
      401,
      { error: 'Unauthorized', message: ErrorMessage.tokenInvalid },
    ]);
  });

  it('50 concurrent requests with one key and one body over two instances execute exactly once', async () => {
    const p = await createPartner(a);
    const key = randomUUID();
    const lastName = `Once-${randomUUID()}`;
    const payload = JSON.stringify({ firstName: 'Concurrent', lastName });
    const request = { method: 'POST' as const, url: '/v1/customers', idempotencyKey: key };
    const responses = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        (i % 2 ? b : a).app.inject({
          method: 'POST',
          url: '/v1/customers',
          headers: signedHeaders(p, request, payload),
          payload,
        }),
      ),
    );
    const created = responses.filter((r) => r.statusCode === 201);
    const conflicts = responses.filter((r) => r.statusCode === 409);
    expect(created.length + conflicts.length).toBe(50);
    const executed = created.filter((r) => r.headers['idempotent-replayed'] === undefined);
    expect(executed).toHaveLength(1);
    for (const replay of created) expect(replay.body).toBe(executed[0]!.body);
    for (const conflict of conflicts) {
      expect(conflict.json()).toEqual({ error: 'Conflict', message: ErrorMessage.idempotencyInProgress });
    }
    const rows = await a.ctx.database.db.execute(
      sql`select count(*)::int as n from customers where last_name = ${lastName}`,
    );
    expect((rows as unknown as { rows: { n: number }[] }).rows[0]!.n).toBe(1);
    // Once settled, every retry on either instance replays the same bytes.
    const later = await signedInject(b.app, p, { ...request, body: payload });
    expect([later.statusCode, later.body, later.headers['idempotent-replayed']]).toEqual([
      201,
      executed[0]!.body,
      'true',
    ]);
  });
});
