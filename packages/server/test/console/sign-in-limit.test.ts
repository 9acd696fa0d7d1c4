import { buildTestApp, describeStores, REDIS_SKIP_REASON, type TestApp } from '@partner-api/testkit/app.ts';
import { adminInject, redisReady, uniqueClientIp } from '@partner-api/testkit/helpers.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signIn } from './session-kit.ts';

/** Long enough for 5 failures under a loaded run; the expiry test waits it out. */
const WINDOW_SECONDS = 8;

/**
 * The console's sign-in attempt limit (docs/console.md): past 5 failures for one operator name or
 * from one address within the window, sign-in answers 429 without checking the credential; after
 * the window the right credential is accepted. In memory and in Redis.
 */
function suite(build: (window: string) => Promise<TestApp>) {
  /** A short window for the expiry test; the usual 15 minutes for the others. */
  let short: TestApp;
  let t: TestApp;
  const operators: { name: string; credential: string }[] = [];
  const shortOps: { name: string; credential: string }[] = [];

  beforeAll(async () => {
    [short, t] = await Promise.all([build(`5/${WINDOW_SECONDS}s`), build('5/900s')]);
    for (const [app, list, count] of [
      [t, operators, 3],
      [short, shortOps, 2],
    ] as const)
      for (let i = 0; i < count; i++) {
        const name = `limit-${i}-${Math.random().toString(36).slice(2, 8)}`;
        const res = await adminInject(app, 'POST', '/admin/operators', { name, role: 'viewer' });
        list.push({ name, credential: (res.json() as { credential: string }).credential });
      }
  });
  afterAll(async () => {
    await short?.close();
    await t?.close();
  });

  const from = () => ({ cookies: new Map<string, string>(), ip: uniqueClientIp() });

  it('5 wrong credentials for one name: the right one is refused with 429 until the window ends', async () => {
    const [op] = shortOps;
    for (let i = 0; i < 5; i++) {
      // Each from a new address: the name's count alone stops it.
      const wrong = await signIn(short, op!.name, `${op!.credential}x`, from());
      expect(wrong.res.statusCode, `attempt ${i + 1}`).toBe(401);
    }
    const refused = await signIn(short, op!.name, op!.credential, from());
    expect(refused.res.statusCode).toBe(429);
    expect(refused.res.body).toContain('Too many failed sign-ins');
    expect(refused.res.body).toMatch(/try again after \d\d:\d\d:\d\d UTC/);
    expect(Number(refused.res.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(refused.res.headers['retry-after'])).toBeLessThanOrEqual(WINDOW_SECONDS);
    expect(refused.browser.cookies.has('console_session')).toBe(false);
    // Another operator is not stopped by it.
    expect((await signIn(short, shortOps[1]!.name, shortOps[1]!.credential, from())).res.statusCode).toBe(
      303,
    );

    await new Promise((resolve) =>
      setTimeout(resolve, Number(refused.res.headers['retry-after']) * 1000 + 300),
    );
    const accepted = await signIn(short, op!.name, op!.credential, from());
    expect(accepted.res.statusCode).toBe(303);
    expect(accepted.browser.cookies.has('console_session')).toBe(true);
  });

  it('5 failures from one address stop every name from it, not from another address', async () => {
    const browser = from();
    for (let i = 0; i < 5; i++) {
      const wrong = await signIn(t, `nobody-${i}-${Math.random()}`, 'op_wrong', {
        ...browser,
        cookies: new Map(),
      });
      expect(wrong.res.statusCode).toBe(401);
    }
    const op = operators[2]!;
    expect((await signIn(t, op.name, op.credential, { ...browser, cookies: new Map() })).res.statusCode).toBe(
      429,
    );
    expect((await signIn(t, op.name, op.credential, from())).res.statusCode).toBe(303);
  });

  it("a success clears the name's failures", async () => {
    const op = operators[1]!;
    for (let i = 0; i < 4; i++)
      expect((await signIn(t, op.name, 'op_wrong', from())).res.statusCode).toBe(401);
    expect((await signIn(t, op.name, op.credential, from())).res.statusCode).toBe(303);
    for (let i = 0; i < 4; i++)
      expect((await signIn(t, op.name, 'op_wrong', from())).res.statusCode).toBe(401);
    expect((await signIn(t, op.name, op.credential, from())).res.statusCode).toBe(303);
  });
}

describeStores('the console sign-in limit in memory on %s', (store) =>
  suite((limit) => buildTestApp(store, { CONSOLE_SIGN_IN_LIMIT: limit })),
);
if (!process.env.REDIS_URL)
  describe('the console sign-in limit in Redis', () => it.skip(REDIS_SKIP_REASON, () => {}));
describe.skipIf(!process.env.REDIS_URL)('the console sign-in limit in Redis', () =>
  suite(async (limit) => {
    const t = await buildTestApp('pglite', { CONSOLE_SIGN_IN_LIMIT: limit }, { withRedis: true });
    await redisReady(t.ctx.redis);
    return t;
  }),
);
