import { POSTGRES_SKIP_REASON, REDIS_SKIP_REASON, tempDataDir } from '@partner-api/testkit/app.ts';
import { uniqueClientIp } from '@partner-api/testkit/helpers.ts';
import { type ServerProcess, startServers } from '@partner-api/testkit/process.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const DATABASE_URL = process.env.DATABASE_URL;
const REDIS_URL = process.env.REDIS_URL;
const READY = Boolean(DATABASE_URL && REDIS_URL);

if (!READY) {
  describe('two serve processes on one PostgreSQL and one Redis', () => {
    if (!DATABASE_URL) it.skip(POSTGRES_SKIP_REASON, () => {});
    if (!REDIS_URL) it.skip(REDIS_SKIP_REASON, () => {});
  });
}

/**
 * Two real `partner-api serve` processes on one PostgreSQL and one Redis behave as one service:
 * the per-IP budget is shared. Processes see 127.0.0.1 for every request and key Redis with the
 * fixed prefix `rl`, so each test trusts the loopback proxy and names a client address of its own.
 */
describe.skipIf(!READY)('two serve processes on one PostgreSQL and one Redis', () => {
  let a: ServerProcess;
  let b: ServerProcess;
  beforeAll(async () => {
    const env = {
      DATABASE_URL: DATABASE_URL!,
      REDIS_URL: REDIS_URL!,
      TRUST_PROXY: '127.0.0.1',
      RATE_LIMIT_GLOBAL: '4/60s',
      RATE_LIMIT_TOKEN: '2/900s',
    };
    [a, b] = (await startServers([
      { ...env, DATA_DIR: tempDataDir() },
      { ...env, DATA_DIR: tempDataDir() },
    ])) as [ServerProcess, ServerProcess];
    // A fresh process counts in memory until its Redis client connects (the documented fallback).
    for (const server of [a, b]) {
      const deadline = Date.now() + 10_000;
      for (;;) {
        const health = await (await fetch(`${server.baseUrl}/healthz`)).json();
        if (health.checks?.redis === 'ok') break;
        if (Date.now() > deadline) throw new Error(`Redis never became ready:\n${server.output()}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  }, 90_000);
  afterAll(async () => {
    const codes = await Promise.all([a?.stop('SIGTERM'), b?.stop('SIGTERM')]);
    expect(codes).toEqual([0, 0]);
  });

  const call = (server: ServerProcess, ip: string, init: RequestInit = {}, url = '/v1/nothing') =>
    fetch(`${server.baseUrl}${url}`, { ...init, headers: { ...init.headers, 'x-forwarded-for': ip } });
  const postToken = (server: ServerProcess, ip: string) =>
    call(
      server,
      ip,
      { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' },
      '/v1/oauth/token',
    );

  it('share one global budget', async () => {
    const ip = uniqueClientIp();
    const remaining: (string | null)[] = [];
    for (const server of [a, b, a, b]) {
      const res = await call(server, ip);
      expect(res.status).toBe(404);
      expect(res.headers.get('ratelimit-policy')).toBe('4;w=60');
      remaining.push(res.headers.get('ratelimit-remaining'));
    }
    expect(remaining).toEqual(['3', '2', '1', '0']);
    for (const server of [a, b]) {
      const res = await call(server, ip);
      expect(res.status).toBe(429);
      expect(await res.json()).toEqual({
        error: 'Too Many Requests',
        message: 'Too many requests. Please slow down and try again shortly.',
      });
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
    // Another client is untouched on either instance.
    expect((await call(b, uniqueClientIp())).headers.get('ratelimit-remaining')).toBe('3');
  });

  it('share one token-endpoint budget', async () => {
    const ip = uniqueClientIp();
    expect((await postToken(a, ip)).headers.get('ratelimit-remaining')).toBe('1');
    expect((await postToken(b, ip)).headers.get('ratelimit-remaining')).toBe('0');
    const refused = await postToken(a, ip);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('ratelimit-policy')).toBe('2;w=900');
    expect((await refused.json()).message).toBe(
      'Too many authentication attempts. Please try again in a few minutes.',
    );
  });
});
