import { buildTestApp, REDIS_SKIP_REASON, type TestApp } from '@partner-api/testkit/app.ts';
import { JSON_HEADERS, redisReady, uniqueClientIp } from '@partner-api/testkit/helpers.ts';
import { createPartner, signedInject } from '@partner-api/testkit/partner.ts';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const GLOBAL_429 = {
  error: 'Too Many Requests',
  message: 'Too many requests. Please slow down and try again shortly.',
};
const TOKEN_429 = {
  error: 'Too Many Requests',
  message: 'Too many authentication attempts. Please try again in a few minutes.',
};
const KEY = '/v1/webhooks/key';
const SMALL_LIMITS = { RATE_LIMIT_GLOBAL: '3/60s', RATE_LIMIT_TOKEN: '2/900s' };
const RATE_LIMIT_HEADERS = ['ratelimit-policy', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset'];

const get = (t: TestApp, ip: string, url = '/v1/nothing', headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'GET', url, remoteAddress: ip, headers });
const postToken = (t: TestApp, ip: string, url = '/v1/oauth/token') =>
  t.app.inject({ method: 'POST', url, remoteAddress: ip, headers: JSON_HEADERS, payload: '{}' });

function expectLimitHeaders(res: LightMyRequestResponse, policy: string, remaining: number, window: number) {
  const [limit] = policy.split(';');
  expect(res.headers['ratelimit-policy']).toBe(policy);
  expect(res.headers['ratelimit-limit']).toBe(limit);
  expect(res.headers['ratelimit-remaining']).toBe(String(remaining));
  const reset = Number(res.headers['ratelimit-reset']);
  expect(Number.isInteger(reset)).toBe(true);
  expect(reset).toBeGreaterThanOrEqual(0);
  expect(reset).toBeLessThanOrEqual(window);
}

function expect429(res: LightMyRequestResponse, body: object, policy: string, window: number) {
  expect(res.statusCode).toBe(429);
  expect(res.json()).toEqual(body);
  expectLimitHeaders(res, policy, 0, window);
  const retryAfter = Number(res.headers['retry-after']);
  expect(Number.isInteger(retryAfter)).toBe(true);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(window);
}

describe('rate limits in memory', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp('pglite', SMALL_LIMITS);
  });
  afterAll(() => t.close());

  it('uses the spec defaults when no override is given', async () => {
    const d = await buildTestApp('pglite', { RATE_LIMIT_GLOBAL: '300/60s', RATE_LIMIT_TOKEN: '10/900s' });
    try {
      const ip = uniqueClientIp();
      expectLimitHeaders(await get(d, ip), '300;w=60', 299, 60);
      expectLimitHeaders(await postToken(d, ip), '10;w=900', 9, 900);
    } finally {
      await d.close();
    }
  });

  it('sends the four RateLimit headers, counts down, then answers 429 with Retry-After', async () => {
    const ip = uniqueClientIp();
    for (const remaining of [2, 1, 0]) {
      const res = await get(t, ip);
      expect(res.statusCode).toBe(404); // unmatched routes count too: probing costs budget
      expectLimitHeaders(res, '3;w=60', remaining, 60);
      expect(res.headers['retry-after']).toBeUndefined();
    }
    expect429(await get(t, ip), GLOBAL_429, '3;w=60', 60);
    // Every endpoint shares the one budget.
    expect429(await get(t, ip, '/v1/webhooks/key'), GLOBAL_429, '3;w=60', 60);
    expect429(await postToken(t, ip), GLOBAL_429, '3;w=60', 60);
  });

  it('limits the token endpoint separately, and its headers replace the global ones', async () => {
    const ip = uniqueClientIp();
    const first = await postToken(t, ip);
    expect(first.statusCode).toBe(400);
    expectLimitHeaders(first, '2;w=900', 1, 900);
    expectLimitHeaders(await postToken(t, ip), '2;w=900', 0, 900);
    // Third attempt: the global budget (3) still has room; the token limiter refuses.
    expect429(await postToken(t, ip), TOKEN_429, '2;w=900', 900);
    // Token attempts counted against the global budget as well: it is now spent.
    expect429(await get(t, ip), GLOBAL_429, '3;w=60', 60);
  });

  it('cannot be dodged by percent-encoding the token path', async () => {
    const ip = uniqueClientIp();
    const encoded = '/v1/oauth/%74oken';
    const first = await postToken(t, ip, encoded);
    expect(first.statusCode).toBe(400); // the router decodes it: this is the token endpoint
    expectLimitHeaders(first, '2;w=900', 1, 900);
    await postToken(t, ip, encoded);
    expect429(await postToken(t, ip, encoded), TOKEN_429, '2;w=900', 900);
  });

  it('never limits /healthz and /metrics, and gives them no RateLimit headers', async () => {
    const ip = uniqueClientIp();
    for (let i = 0; i < 4; i++) await get(t, ip);
    expect((await get(t, ip)).statusCode).toBe(429);
    for (let i = 0; i < 5; i++) {
      for (const url of ['/healthz', '/metrics', '/healthz?verbose=1', '/%68ealthz']) {
        for (const method of ['GET', 'HEAD'] as const) {
          const res = await t.app.inject({ method, url, remoteAddress: ip });
          expect(res.statusCode, `${method} ${url}`).toBe(200);
          for (const header of [...RATE_LIMIT_HEADERS, 'retry-after']) {
            expect(res.headers[header], `${method} ${url} ${header}`).toBeUndefined();
          }
        }
      }
    }
  });

  it('gives each client IP its own budget', async () => {
    const a = uniqueClientIp();
    const b = uniqueClientIp();
    for (let i = 0; i < 3; i++) await get(t, a);
    expect((await get(t, a)).statusCode).toBe(429);
    const other = await get(t, b);
    expect(other.statusCode).toBe(404);
    expectLimitHeaders(other, '3;w=60', 2, 60);
    const v6 = await get(t, '2001:db8::1');
    expectLimitHeaders(v6, '3;w=60', 2, 60);
  });

  it('ignores X-Forwarded-For when TRUST_PROXY is unset (spoofing earns no fresh budget)', async () => {
    const ip = uniqueClientIp();
    for (let i = 0; i < 3; i++) await get(t, ip, '/v1/nothing', { 'x-forwarded-for': `10.0.0.${i + 1}` });
    const spoofed = await get(t, ip, '/v1/nothing', { 'x-forwarded-for': '10.0.0.99' });
    expect429(spoofed, GLOBAL_429, '3;w=60', 60);
  });

  it('counts refused requests in the rejection metric', async () => {
    const metrics = await t.app.inject({ method: 'GET', url: '/metrics' });
    expect(metrics.body).toMatch(/^http_rejections_total\{reason="rate_limit"\} [1-9]\d*$/m);
  });
});

describe('rate limits behind a trusted proxy (TRUST_PROXY=127.0.0.1)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp('pglite', { ...SMALL_LIMITS, TRUST_PROXY: '127.0.0.1' });
  });
  afterAll(() => t.close());

  it('keys the budget by the X-Forwarded-For client', async () => {
    const client = uniqueClientIp();
    const viaProxy = (xff: string) => get(t, '127.0.0.1', '/v1/nothing', { 'x-forwarded-for': xff });
    for (const remaining of [2, 1, 0]) expectLimitHeaders(await viaProxy(client), '3;w=60', remaining, 60);
    expect429(await viaProxy(client), GLOBAL_429, '3;w=60', 60);
    // Another client behind the same proxy has its own budget.
    expectLimitHeaders(await viaProxy(uniqueClientIp()), '3;w=60', 2, 60);
    // The client is the address the trusted proxy saw, not what the client claimed before it.
    expect429(await viaProxy(`10.1.2.3, ${client}`), GLOBAL_429, '3;w=60', 60);
  });

  it('does not trust X-Forwarded-For from an untrusted peer', async () => {
    const peer = uniqueClientIp();
    for (let i = 0; i < 3; i++) await get(t, peer, '/v1/nothing', { 'x-forwarded-for': `10.9.0.${i + 1}` });
    expect429(
      await get(t, peer, '/v1/nothing', { 'x-forwarded-for': '10.9.0.200' }),
      GLOBAL_429,
      '3;w=60',
      60,
    );
  });
});

describe('rate limits when the configured Redis cannot be reached', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp('pglite', { ...SMALL_LIMITS, REDIS_URL: 'redis://127.0.0.1:1' });
  });
  afterAll(() => t.close());

  it('keeps answering from memory, with headers and 429s, and counts the fallback', async () => {
    const ip = uniqueClientIp();
    for (const remaining of [2, 1, 0]) {
      const res = await get(t, ip);
      expect(res.statusCode).toBe(404);
      expectLimitHeaders(res, '3;w=60', remaining, 60);
    }
    expect429(await get(t, ip), GLOBAL_429, '3;w=60', 60);
    const metrics = await t.app.inject({ method: 'GET', url: '/metrics' });
    const count = Number(/^rate_limit_store_fallback_total (\d+)$/m.exec(metrics.body)?.[1]);
    expect(count).toBeGreaterThanOrEqual(4);
  });

  it('reports Redis as unavailable on /healthz without failing it (degraded, not down)', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/healthz' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ status: 'ok', checks: { database: 'ok', redis: 'unavailable' } });
  });
});

const REDIS = Boolean(process.env.REDIS_URL);
if (!REDIS) describe('rate limits in Redis', () => it.skip(REDIS_SKIP_REASON, () => {}));

describe.skipIf(!REDIS)('rate limits in Redis, shared by two app instances', () => {
  let a: TestApp;
  let b: TestApp;
  const rateLimitPrefix = `test:shared:${Math.random().toString(36).slice(2)}`;
  beforeAll(async () => {
    [a, b] = await Promise.all([
      buildTestApp('pglite', SMALL_LIMITS, { withRedis: true, rateLimitPrefix }),
      buildTestApp('pglite', SMALL_LIMITS, { withRedis: true, rateLimitPrefix }),
    ]);
    await Promise.all([redisReady(a.ctx.redis), redisReady(b.ctx.redis)]);
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
  });

  it('counts one budget across both instances', async () => {
    const ip = uniqueClientIp();
    expectLimitHeaders(await get(a, ip), '3;w=60', 2, 60);
    expectLimitHeaders(await get(b, ip), '3;w=60', 1, 60);
    expectLimitHeaders(await get(a, ip), '3;w=60', 0, 60);
    expect429(await get(b, ip), GLOBAL_429, '3;w=60', 60);
    expect429(await get(a, ip), GLOBAL_429, '3;w=60', 60);
  });

  it('decides a burst from one address exactly: each request counted once, in order, on both instances', async () => {
    const ip = uniqueClientIp();
    // Five at once on each instance: each instance's five share one command in one turn.
    const answers = await Promise.all([
      ...Array.from({ length: 5 }, () => get(a, ip)),
      ...Array.from({ length: 5 }, () => get(b, ip)),
    ]);
    const passed = answers.filter((res) => res.statusCode !== 429);
    const refused = answers.filter((res) => res.statusCode === 429);
    expect(passed).toHaveLength(3);
    expect(passed.map((res) => res.headers['ratelimit-remaining']).sort()).toEqual(['0', '1', '2']);
    for (const res of refused) expect429(res, GLOBAL_429, '3;w=60', 60);
    // Refused requests count too, as they do one at a time: the counter holds all ten.
    expect(await a.ctx.redis!.get(`${rateLimitPrefix}:global:${ip}`)).toBe('10');
    // Within one instance the earlier request gets the lower count.
    const other = uniqueClientIp();
    const inOrder = await Promise.all(Array.from({ length: 4 }, () => get(a, other)));
    expect(inOrder.map((res) => res.statusCode)).toEqual([404, 404, 404, 429]);
    expect(inOrder.slice(0, 3).map((res) => res.headers['ratelimit-remaining'])).toEqual(['2', '1', '0']);
  });

  it('shares the token budget too', async () => {
    const ip = uniqueClientIp();
    expectLimitHeaders(await postToken(a, ip), '2;w=900', 1, 900);
    expectLimitHeaders(await postToken(b, ip), '2;w=900', 0, 900);
    expect429(await postToken(a, ip), TOKEN_429, '2;w=900', 900);
  });

  it('keeps the counters in Redis, not in memory (no fallback taken)', async () => {
    const ip = uniqueClientIp();
    await get(a, ip);
    expect(await a.ctx.redis!.exists(`${rateLimitPrefix}:global:${ip}`)).toBe(1);
    const metrics = await a.app.inject({ method: 'GET', url: '/metrics' });
    expect(metrics.body).toMatch(/^rate_limit_store_fallback_total 0$/m);
    const health = await a.app.inject({ method: 'GET', url: '/healthz' });
    expect(health.json().checks.redis).toBe('ok');
  });

  it('keeps apps with different prefixes apart', async () => {
    const c = await buildTestApp('pglite', SMALL_LIMITS, { withRedis: true });
    try {
      await redisReady(c.ctx.redis);
      const ip = uniqueClientIp();
      for (let i = 0; i < 3; i++) await get(a, ip);
      expect((await get(a, ip)).statusCode).toBe(429);
      expectLimitHeaders(await get(c, ip), '3;w=60', 2, 60);
    } finally {
      await c.close();
    }
  });
});

describe.skipIf(!REDIS)('a signed request and Redis', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp('pglite', {}, { withRedis: true });
    await redisReady(t.ctx.redis);
  });
  afterAll(async () => {
    await t?.close();
  });

  /** What the Redis socket hands the kernel while `work` runs: one entry per write, its chunk count. */
  async function redisWrites(work: () => Promise<void>): Promise<number[]> {
    type Chunked = (...args: unknown[]) => unknown;
    const socket = t.ctx.redis!.stream as unknown as { _write: Chunked; _writev: Chunked };
    const { _write, _writev } = socket;
    const writes: number[] = [];
    socket._write = function (this: unknown, ...args: unknown[]) {
      writes.push(1);
      return _write.apply(this, args);
    };
    socket._writev = function (this: unknown, ...args: unknown[]) {
      writes.push((args[0] as unknown[]).length);
      return _writev.apply(this, args);
    };
    try {
      await work();
    } finally {
      socket._write = _write;
      socket._writev = _writev;
    }
    return writes;
  }

  it('the shared limit and the revocation epoch leave in one write to Redis (docs/performance.md)', async () => {
    const partner = await createPartner(t);
    await signedInject(t.app, partner, { method: 'GET', url: '/v1/oauth/me' }); // scripts loaded
    const writes = await redisWrites(async () => {
      const res = await signedInject(t.app, partner, { method: 'GET', url: '/v1/oauth/me' });
      expect(res.statusCode, res.body).toBe(200);
    });
    expect(writes).toHaveLength(1);
  });

  it('the limit commands of requests in one event-loop turn leave in one write', async () => {
    await get(t, uniqueClientIp(), KEY); // the limiter's script loaded
    const writes = await redisWrites(async () => {
      const answers = await Promise.all([1, 2, 3].map(() => get(t, uniqueClientIp(), KEY)));
      expect(answers.map((a) => a.statusCode)).toEqual([200, 200, 200]);
    });
    expect(writes).toEqual([3]);
  });

  it('one address in one turn is one command, and its signed requests share one epoch reading', async () => {
    const partner = await createPartner(t);
    await signedInject(t.app, partner, { method: 'GET', url: '/v1/oauth/me' }); // scripts loaded
    const before = Number(await t.ctx.redis!.get(`${t.ctx.rateLimitPrefix}:global:127.0.0.1`));
    const writes = await redisWrites(async () => {
      const answers = await Promise.all(
        [1, 2, 3, 4].map(() => signedInject(t.app, partner, { method: 'GET', url: '/v1/oauth/me' })),
      );
      expect(answers.map((a) => a.statusCode)).toEqual([200, 200, 200, 200]);
      const remaining = answers.map((a) => Number(a.headers['ratelimit-remaining']));
      expect(remaining).toEqual([remaining[0], remaining[0]! - 1, remaining[0]! - 2, remaining[0]! - 3]);
    });
    // The limiter's command for the four, and the epoch script: two commands in one write.
    expect(writes).toEqual([2]);
    expect(Number(await t.ctx.redis!.get(`${t.ctx.rateLimitPrefix}:global:127.0.0.1`))).toBe(before + 4);
  });
});
