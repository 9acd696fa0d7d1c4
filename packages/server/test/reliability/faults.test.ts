/**
 * Fault tests (issue 9). PostgreSQL and Redis are reached through a TCP relay (support/faults.ts)
 * that is cut and restored; the machine's real servers are never stopped (other suites share them).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POSTGRES_SKIP_REASON, REDIS_SKIP_REASON, tempDataDir } from '../support/app.ts';
import { type Relay, startRelay, targetOf } from '../support/faults.ts';
import { type ServerProcess, startServer } from '../support/process.ts';
import { tally } from './oracle.ts';

const DATABASE_URL = process.env.DATABASE_URL;
const REDIS_URL = process.env.REDIS_URL;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
let faults = 0;

afterAll(() => {
  tally.inputs += 0;
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
    it(`Redis ${mode === 'refuse' ? 'stopped' : 'frozen (partition)'}: every request still answers, from memory, logged and counted; back to Redis when it returns`, async () => {
      const before = await metric(server, 'rate_limit_store_fallback_total');
      await relay.cut(mode);
      faults += 1;
      for (let i = 0; i < 5; i++) {
        const res = await key();
        expect(res.status, res.body).toBe(200);
        expect(res.headers.get('ratelimit-limit')).toBe('100000');
        expect(res.ms).toBeLessThan(3000);
      }
      const during = await metric(server, 'rate_limit_store_fallback_total');
      expect(during).toBeGreaterThanOrEqual(before + 5);
      // Degraded, not down. (A frozen connection still reads as connected to the client library.)
      expect(await health()).toMatchObject({
        status: 'ok',
        checks: { redis: mode === 'refuse' ? 'unavailable' : 'ok' },
      });
      expect(server.output()).toMatch(/Redis unreachable: rate limits fall back to this instance's memory/);

      await relay.restore();
      await waitForRedis();
      const after = await metric(server, 'rate_limit_store_fallback_total');
      for (let i = 0; i < 3; i++) expect((await key()).status).toBe(200);
      expect(await metric(server, 'rate_limit_store_fallback_total')).toBe(after);
    });
  }
});
