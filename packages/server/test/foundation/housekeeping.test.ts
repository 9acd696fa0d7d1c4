import { randomUUID } from 'node:crypto';
import { buildTestApp, describeStores, type TestApp, tempDataDir } from '@partner-api/testkit/app.ts';
import { runCli } from '@partner-api/testkit/helpers.ts';
import { createPartner, type Partner, signedInject } from '@partner-api/testkit/partner.ts';
import { startServer } from '@partner-api/testkit/process.ts';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { one, rows } from '../../src/db/query.ts';
import { purgeExpired } from '../../src/services/housekeeping/purge.ts';

const NOTHING_PURGED = {
  idempotencyKeys: 0,
  revokedTokens: 0,
  ussdSessions: 0,
  webhookAttempts: 0,
  webhookDeliveries: 0,
  webhookEvents: 0,
};

const count = async (t: TestApp, query: ReturnType<typeof sql>) => {
  const row = await one<{ n: number | string }>(t.ctx.database.db, query);
  return Number(row!.n);
};

describeStores('housekeeping: expired records are purged (%s)', (store) => {
  let t: TestApp;
  let partner: Partner;
  beforeAll(async () => {
    t = await buildTestApp(store);
    partner = await createPartner(t);
  });
  afterAll(async () => t?.close());

  const createCustomer = (key: string) =>
    signedInject(t.app, partner, {
      method: 'POST',
      url: '/v1/customers',
      body: { firstName: 'Purge', lastName: 'Test' },
      idempotencyKey: key,
    });
  const keyRows = (key: string) =>
    count(
      t,
      sql`select count(*) as n from idempotency_keys where credential_id = ${partner.credentialId} and key = ${key}`,
    );

  it('deletes idempotency records past retention, revocations of expired tokens and old USSD sessions; keeps the rest', async () => {
    const expiredKey = randomUUID();
    const lockedKey = randomUUID();
    const liveKey = randomUUID();
    const first = await createCustomer(expiredKey);
    expect(first.statusCode).toBe(201);
    expect((await createCustomer(liveKey)).statusCode).toBe(201);
    const customerId = first.json().data.id as string;
    const db = t.ctx.database.db;
    // Past retention; past retention but locked by a request still running (kept).
    await db.execute(sql`update idempotency_keys set expires_at = now() - interval '1 hour'
      where credential_id = ${partner.credentialId} and key = ${expiredKey}`);
    await db.execute(sql`insert into idempotency_keys (credential_id, key, fingerprint, locked_until, expires_at)
      values (${partner.credentialId}, ${lockedKey}, 'f', now() + interval '1 minute', now() - interval '1 hour')`);
    const [oldJti, recentJti, liveJti] = [randomUUID(), randomUUID(), randomUUID()];
    await db.execute(sql`insert into revoked_tokens (jti, expires_at) values
      (${oldJti}, now() - interval '2 minutes'), (${recentJti}, now() - interval '10 seconds'),
      (${liveJti}, now() + interval '1 hour')`);
    const sessions: string[] = [];
    for (let i = 0; i < 2; i++) {
      const opened = await signedInject(t.app, partner, {
        method: 'POST',
        url: '/v1/ussd/session',
        body: { customerId },
      });
      expect(opened.statusCode, opened.body).toBe(201);
      sessions.push(opened.json().data.sessionId);
    }
    await db.execute(
      sql`update ussd_sessions set expires_at = now() - interval '25 hours' where id = ${sessions[0]}`,
    );

    const deleted = await purgeExpired(db);
    // Other suites share a PostgreSQL database: at least ours, and ours exactly as below.
    expect(deleted.idempotencyKeys).toBeGreaterThanOrEqual(1);
    expect(deleted.revokedTokens).toBeGreaterThanOrEqual(1);
    expect(deleted.ussdSessions).toBeGreaterThanOrEqual(1);
    expect([await keyRows(expiredKey), await keyRows(lockedKey), await keyRows(liveKey)]).toEqual([0, 1, 1]);
    const revoked = await rows<{ jti: string }>(
      db,
      sql`select jti from revoked_tokens where jti in (${oldJti}, ${recentJti}, ${liveJti}) order by expires_at`,
    );
    expect(revoked.map((r) => r.jti)).toEqual([recentJti, liveJti]);
    const left = await rows<{ id: string }>(
      db,
      sql`select id from ussd_sessions where id in (${sessions[0]!}, ${sessions[1]!})`,
    );
    expect(left.map((r) => r.id)).toEqual([sessions[1]]);

    // A purged key is a key never seen: the same request runs again (as an expired one would).
    const again = await createCustomer(expiredKey);
    expect(again.statusCode).toBe(201);
    expect(again.json().data.id).not.toBe(customerId);
    // The live key still replays its first answer.
    const replay = await createCustomer(liveKey);
    expect(replay.statusCode).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
  });

  it('a second run finds nothing of what the first deleted, and the customer data is untouched', async () => {
    const before = await count(
      t,
      sql`select count(*) as n from customers where organization_id = ${partner.organizationId}`,
    );
    await purgeExpired(t.ctx.database.db);
    const second = await purgeExpired(t.ctx.database.db);
    if (store === 'pglite') expect(second).toEqual(NOTHING_PURGED);
    expect(
      await count(
        t,
        sql`select count(*) as n from customers where organization_id = ${partner.organizationId}`,
      ),
    ).toBe(before);
  });
});

describe('partner-api purge (operator CLI, embedded store)', () => {
  it('prints what it deleted as JSON, and refuses a DATA_DIR a running server holds', async () => {
    const dataDir = tempDataDir();
    const done = await runCli(['--json', 'purge'], { DATA_DIR: dataDir });
    expect(done.code, done.stderr).toBe(0);
    expect(JSON.parse(done.stdout)).toEqual({
      deleted: NOTHING_PURGED,
    });

    const server = await startServer({ DATA_DIR: dataDir });
    try {
      const refused = await runCli(['--json', 'purge'], { DATA_DIR: dataDir });
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(/DATA_DIR .* is in use by another partner-api server/);
      expect((await fetch(`${server.baseUrl}/healthz`)).status).toBe(200);
    } finally {
      expect(await server.stop('SIGTERM')).toBe(0);
    }
  }, 120_000);
});
