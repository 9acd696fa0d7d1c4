import { randomBytes, randomUUID } from 'node:crypto';
import { POSTGRES_SKIP_REASON, REDIS_SKIP_REASON, tempDataDir } from '@partner-api/testkit/app.ts';
import { adminFetch, uniqueClientIp } from '@partner-api/testkit/helpers.ts';
import { createPartner, newSigningKey, type Partner, signedFetch } from '@partner-api/testkit/partner.ts';
import { type ServerProcess, startServers } from '@partner-api/testkit/process.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const enabled = Boolean(process.env.DATABASE_URL && process.env.REDIS_URL);
if (!enabled)
  console.info(
    `revocation race across processes: ${process.env.DATABASE_URL ? REDIS_SKIP_REASON : POSTGRES_SKIP_REASON}`,
  );

/** `partner-api serve`'s caller lookups from memory and from the database (/metrics). */
async function callerLookups(server: ServerProcess): Promise<{ memory: number; database: number }> {
  const text = await (await fetch(`${server.baseUrl}/metrics`)).text();
  const count = (source: string) =>
    Number(text.match(new RegExp(`auth_caller_lookups_total\\{source="${source}"\\} (\\d+)`))?.[1] ?? 0);
  return { memory: count('memory'), database: count('database') };
}

/**
 * B serves the caller from memory, and a change made through A is still exact on B. A
 * burst runs on B without pause while A revokes (or deactivates); every request B receives after
 * A's answer was received here must be refused.
 */
describe.skipIf(!enabled)('a change through A while B serves a burst from its caller cache', () => {
  const adminToken = randomBytes(24).toString('hex');
  let a: ServerProcess;
  let b: ServerProcess;
  const clientIp = { 'x-forwarded-for': uniqueClientIp() };

  beforeAll(async () => {
    const env = {
      JWT_SECRET: randomBytes(32).toString('hex'),
      ADMIN_TOKEN: adminToken,
      DATABASE_URL: process.env.DATABASE_URL!,
      REDIS_URL: process.env.REDIS_URL!,
      TRUST_PROXY: '127.0.0.1',
      RATE_LIMIT_GLOBAL: '1000000/60s',
      RATE_LIMIT_TOKEN: '100000/60s',
    };
    [a, b] = (await startServers([
      { ...env, DATA_DIR: tempDataDir() },
      { ...env, DATA_DIR: tempDataDir() },
    ])) as [ServerProcess, ServerProcess];
    for (const server of [a, b]) {
      const deadline = Date.now() + 10_000;
      while ((await (await fetch(`${server.baseUrl}/healthz`)).json()).checks?.redis !== 'ok') {
        if (Date.now() > deadline) throw new Error(`Redis never became ready:\n${server.output()}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  }, 120_000);
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
  });

  const partnerOn = async (server: ServerProcess): Promise<Partner> => ({
    ...(await createPartner(
      { baseUrl: a.baseUrl, adminUrl: a.adminUrl, adminToken },
      { name: `Race ${randomUUID().slice(0, 8)}`, keyPrefix: 'race', headers: clientIp },
    )),
    baseUrl: server.baseUrl,
  });

  /**
   * Sends GET `url` to B from `workers` loops until `stop` resolves, and then for 300 ms
   * more; each answer is recorded with when its request was started.
   */
  async function burst(partner: Partner, change: () => Promise<void>, url = '/v1/oauth/me', workers = 8) {
    const answers: { sentAt: number; status: number }[] = [];
    let stopAt = Number.POSITIVE_INFINITY;
    const loop = async () => {
      while (performance.now() < stopAt) {
        const sentAt = performance.now();
        const res = await signedFetch(partner, { method: 'GET', url }, { unsigned: clientIp });
        await res.arrayBuffer();
        answers.push({ sentAt, status: res.status });
      }
    };
    const loops = Array.from({ length: workers }, loop);
    // Let B warm its cache and serve from it for a while before the change.
    await new Promise((resolve) => setTimeout(resolve, 400));
    await change();
    const answeredAt = performance.now();
    stopAt = answeredAt + 300;
    await Promise.all(loops);
    return {
      before: answers.filter((x) => x.sentAt < answeredAt),
      after: answers.filter((x) => x.sentAt > answeredAt),
    };
  }

  it('revoke on A: no request sent to B after A answered is accepted', async () => {
    const p = await partnerOn(b);
    const lookupsBefore = await callerLookups(b);
    const { before, after } = await burst(p, async () => {
      const res = await signedFetch(
        { ...p, baseUrl: a.baseUrl },
        { method: 'POST', url: '/v1/oauth/revoke' },
        {
          unsigned: clientIp,
        },
      );
      expect(res.status).toBe(200);
    });
    const lookups = await callerLookups(b);
    // B did serve from memory: the test exercises the cache, not the database path.
    expect(lookups.memory - lookupsBefore.memory).toBeGreaterThan(20);
    expect(before.some((x) => x.status === 200)).toBe(true);
    expect(after.length).toBeGreaterThan(10);
    expect(after.filter((x) => x.status !== 401)).toEqual([]);
  }, 30_000);

  it('organization deactivated on A: no request sent to B after A answered is accepted', async () => {
    const p = await partnerOn(b);
    // Not a customer id: 400 (validation runs after authentication) while the caller is accepted,
    // 401 once it is refused.
    // (Not /oauth/me, which serves an inactive organization and reads its state from the database.)
    const url = '/v1/customers/not-an-id';
    const { before, after } = await burst(
      p,
      async () => {
        const res = await fetch(`${a.adminUrl}/admin/organizations/${p.organizationId}`, {
          method: 'PATCH',
          headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
          body: JSON.stringify({ isActive: false }),
        });
        expect(res.status).toBe(200);
      },
      url,
    );
    expect(before.some((x) => x.status === 400)).toBe(true);
    expect(after.length).toBeGreaterThan(10);
    expect(after.filter((x) => x.status !== 401)).toEqual([]);
  }, 30_000);

  it('signing key rotated on A: the old key is refused on B after A answered', async () => {
    const p = await partnerOn(b);
    const rotated = newSigningKey('race-rotated');
    const { before, after } = await burst(p, async () => {
      const res = await adminFetch(
        a.adminUrl,
        adminToken,
        'PUT',
        `/admin/credentials/${p.credentialId}/signing-key`,
        {
          publicKey: rotated.publicKeyPem,
          keyId: rotated.keyId,
        },
      );
      expect(res.status).toBe(200);
    });
    expect(before.some((x) => x.status === 200)).toBe(true);
    expect(after.length).toBeGreaterThan(10);
    expect(after.filter((x) => x.status !== 401)).toEqual([]);
    const withNewKey = await signedFetch(
      { ...p, keyId: rotated.keyId, privateKey: rotated.privateKey },
      { method: 'GET', url: '/v1/oauth/me' },
      { unsigned: clientIp },
    );
    expect(withNewKey.status).toBe(200);
  }, 30_000);
});
