import { randomBytes } from 'node:crypto';
import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { adminInject } from '@partner-api/testkit/helpers.ts';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { one } from '../../src/db/query.ts';
import { type Browser, consoleClient, csrfOf, PROVIDER_SECRETS } from './client.ts';

const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'";

/**
 * The operator console on the admin app (docs/console.md): sign-in and sign-out, the idle timeout,
 * CSRF, a viewer refused every change, the audit rows of console changes, the security headers,
 * the public port's 404, and no configured secret on any page.
 */
describeStores('the operator console on %s', (store) => {
  let t: TestApp;
  const suffix = randomBytes(4).toString('hex');
  const accounts: Record<'viewer' | 'operator', { id: string; name: string; credential: string }> =
    {} as never;

  beforeAll(async () => {
    t = await buildTestApp(store, { ...PROVIDER_SECRETS, CONSOLE_IDLE_MINUTES: '30' });
    for (const role of ['viewer', 'operator'] as const) {
      const name = `${role}-${suffix}`;
      const res = await adminInject(t, 'POST', '/admin/operators', { name, role });
      accounts[role] = { name, ...(res.json() as { id: string; credential: string }) };
    }
  });
  afterAll(() => t?.close());

  const { pages, visit, signIn } = consoleClient(() => t);
  async function overview(browser: Browser) {
    return visit(browser, 'GET', '/console');
  }
  const auditOf = (route: string, operatorId: string) =>
    one<{ status: number; body: unknown; actorType: string; operatorName: string; ip: string }>(
      t.ctx.database.db,
      sql`select status, body, actor_type as "actorType", operator_name as "operatorName", ip from audit_log
  where route = ${route} and operator_id = ${operatorId} order by at desc limit 1`,
    );

  it('the public port answers the console as an unknown route', async () => {
    for (const url of ['/console', '/console/sign-in', '/console/assets/console.css']) {
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(404);
      expect(res.body).not.toContain('Sign in');
    }
    expect((await t.app.inject({ method: 'POST', url: '/console/sign-in' })).statusCode).toBe(404);
  });

  it('the sign-in page: strict CSP, no script, cookies HttpOnly and SameSite=Strict, Secure off localhost', async () => {
    const res = await t.admin.inject({ method: 'GET', url: '/console/sign-in' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-security-policy']).toBe(CSP);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['referrer-policy']).toBe('no-referrer');
    expect(res.body).not.toMatch(/<script|<style|\sstyle=|\son[a-z]+=/i);
    expect(res.body).toContain('href="/console/assets/console.css"');
    const local = String(res.headers['set-cookie']);
    expect(local).toMatch(/HttpOnly/);
    expect(local).toMatch(/SameSite=Strict/);
    expect(local).not.toMatch(/Secure/);
    const remote = await t.admin.inject({
      method: 'GET',
      url: '/console/sign-in',
      headers: { host: 'ops.example.com' },
    });
    expect(String(remote.headers['set-cookie'])).toMatch(/; Secure/);
    const css = await t.admin.inject({ method: 'GET', url: '/console/assets/console.css' });
    expect(css.headers['content-type']).toMatch(/^text\/css/);
    // Without a session the Overview sends the browser to sign in.
    const anonymous = await t.admin.inject({ method: 'GET', url: '/console' });
    expect(anonymous.statusCode).toBe(303);
    expect(anonymous.headers.location).toBe('/console/sign-in');
  });

  it('signs in with the right credential only; a deactivated operator cannot', async () => {
    const wrong = await signIn(accounts.viewer.name, `${accounts.viewer.credential}x`);
    expect(wrong.res.statusCode).toBe(401);
    expect(wrong.res.body).toContain('Wrong name or credential');
    expect(wrong.browser.cookies.has('console_session')).toBe(false);
    expect((await signIn(`nobody-${suffix}`, accounts.viewer.credential)).res.statusCode).toBe(401);

    const noCsrf = await t.admin.inject({
      method: 'POST',
      url: '/console/sign-in',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({
        name: accounts.viewer.name,
        credential: accounts.viewer.credential,
      }).toString(),
    });
    expect(noCsrf.statusCode).toBe(403);
    expect(noCsrf.headers['set-cookie']).not.toMatch(/console_session=\w/);

    const { browser, res } = await signIn(accounts.viewer.name, accounts.viewer.credential);
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/console');
    const page = await overview(browser);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<h1>Overview</h1>');
    expect(page.body).toContain(`${accounts.viewer.name}</span> (viewer)`);
    expect(await auditOf('/console/sign-in', accounts.viewer.id)).toMatchObject({
      status: 303,
      actorType: 'operator',
      operatorName: accounts.viewer.name,
      body: { name: accounts.viewer.name, credential: '[REDACTED]', csrf: '[REDACTED]' },
    });

    const name = `leaving-${suffix}`;
    const leaving = (await adminInject(t, 'POST', '/admin/operators', { name, role: 'operator' })).json() as {
      id: string;
      credential: string;
    };
    const before = await signIn(name, leaving.credential);
    expect(before.res.statusCode).toBe(303);
    await adminInject(t, 'POST', `/admin/operators/${leaving.id}/deactivate`);
    // Its open session ends with it, and it cannot sign in again.
    expect((await overview(before.browser)).headers.location).toBe('/console/sign-in');
    expect((await signIn(name, leaving.credential)).res.statusCode).toBe(401);
  });

  it('signs out: the session is gone from the store and its cookie no longer opens the console', async () => {
    const { browser } = await signIn(accounts.operator.name, accounts.operator.credential);
    const token = browser.cookies.get('console_session')!;
    const page = await overview(browser);
    const res = await visit(browser, 'POST', '/console/sign-out', { csrf: csrfOf(page) });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/console/sign-in');
    const replay: Browser = { cookies: new Map([['console_session', token]]) };
    expect((await overview(replay)).headers.location).toBe('/console/sign-in');
  });

  it('a session ends after CONSOLE_IDLE_MINUTES without a request, counted from the last one', async () => {
    const start = new Date();
    t.ctx.clock = () => start;
    try {
      const { browser } = await signIn(accounts.viewer.name, accounts.viewer.credential);
      t.ctx.clock = () => new Date(start.getTime() + 29 * 60_000);
      expect((await overview(browser)).statusCode).toBe(200);
      t.ctx.clock = () => new Date(start.getTime() + 58 * 60_000);
      expect((await overview(browser)).statusCode).toBe(200);
      t.ctx.clock = () => new Date(start.getTime() + 89 * 60_000);
      const expired = await overview(browser);
      expect(expired.statusCode).toBe(303);
      expect(expired.headers.location).toBe('/console/sign-in?expired=1');
      // Ended for good: the same cookie does not come back to life.
      t.ctx.clock = () => new Date(start.getTime() + 90 * 60_000);
      expect((await overview(browser)).headers.location).toBe('/console/sign-in');
      const signInAgain = await visit(browser, 'GET', '/console/sign-in?expired=1');
      expect(signInAgain.body).toContain('sign in again');
    } finally {
      t.ctx.clock = () => new Date();
    }
  });

  it('a POST without the session’s CSRF token is refused, and changes nothing', async () => {
    const { browser } = await signIn(accounts.operator.name, accounts.operator.credential);
    for (const csrf of ['', 'x'.repeat(43), randomBytes(32).toString('base64url')]) {
      const res = await visit(
        browser,
        'POST',
        '/console/payments/reconcile',
        csrf ? { csrf } : { other: '1' },
      );
      expect(res.statusCode).toBe(403);
      expect(res.body).toContain('did not come from the console');
    }
    const signOut = await visit(browser, 'POST', '/console/sign-out', { csrf: 'wrong' });
    expect(signOut.statusCode).toBe(403);
    expect((await overview(browser)).statusCode).toBe(200);
  });

  it('a viewer is refused the change an operator makes; both are audited with the operator as actor', async () => {
    const viewer = await signIn(accounts.viewer.name, accounts.viewer.credential);
    const viewerPage = await overview(viewer.browser);
    const refused = await visit(viewer.browser, 'POST', '/console/payments/reconcile', {
      csrf: csrfOf(viewerPage),
    });
    expect(refused.statusCode).toBe(403);
    expect(refused.body).toContain('A viewer cannot change anything');
    expect(await auditOf('/console/payments/reconcile', accounts.viewer.id)).toMatchObject({
      status: 403,
      actorType: 'operator',
      body: { csrf: '[REDACTED]' },
    });

    const operator = await signIn(accounts.operator.name, accounts.operator.credential);
    const page = await overview(operator.browser);
    const done = await visit(operator.browser, 'POST', '/console/payments/reconcile', { csrf: csrfOf(page) });
    expect(done.statusCode).toBe(303);
    expect(done.headers.location).toMatch(/^\/console\?reconciled=\d+$/);
    expect(await auditOf('/console/payments/reconcile', accounts.operator.id)).toMatchObject({
      status: 303,
      operatorName: accounts.operator.name,
      ip: '127.0.0.1',
    });
    const after = await visit(operator.browser, 'GET', done.headers.location as string);
    expect(after.body).toContain('payment requests made due now');
  });

  it('the Overview shows live state, an item needing a person marked in words', async () => {
    const { browser } = await signIn(accounts.viewer.name, accounts.viewer.credential);
    const symbol = `QSHORT${suffix}`.toUpperCase();
    t.ctx.bookCheck = { checkedAt: new Date(), date: '2026-11-27', shortfall: [symbol] };
    try {
      const page = await overview(browser);
      const row = page.body.split('<tr').find((r) => r.includes('beyond the pooled position'))!;
      expect(row).toContain('class="attention"');
      expect(row).toContain('Needs attention');
      expect(row).toContain(symbol);
      for (const label of [
        'Store (',
        'Redis',
        'Provider mpesa: breaker',
        'Operator queue',
        'Held prices',
        'Webhook deliveries',
        'Investor SMS',
      ])
        expect(page.body).toContain(label);
    } finally {
      t.ctx.bookCheck = undefined;
    }
    const page = await overview(browser);
    const row = page.body.split('<tr').find((r) => r.includes('beyond the pooled position'))!;
    expect(row).toContain('not checked yet');
    expect(row).toContain('class="ok"');
  });

  it('no page carries a configured secret, a credential or a session token', () => {
    const secrets = [
      ...Object.values(t.ctx.secrets).map((s) => s.split('\n')[1] ?? s),
      PROVIDER_SECRETS.MPESA_CONSUMER_KEY,
      PROVIDER_SECRETS.MPESA_CONSUMER_SECRET,
      PROVIDER_SECRETS.MPESA_PASSKEY,
      PROVIDER_SECRETS.MPESA_SECURITY_CREDENTIAL,
      PROVIDER_SECRETS.MPESA_CALLBACK_TOKEN,
      accounts.viewer.credential,
      accounts.operator.credential,
    ];
    expect(pages.length).toBeGreaterThan(20);
    for (const res of pages) {
      const sessionCookie = /console_session=([^;]+)/.exec(String(res.headers['set-cookie']))?.[1];
      for (const secret of [...secrets, ...(sessionCookie ? [sessionCookie] : [])])
        expect(res.body.includes(secret), `${res.statusCode} page carries a secret`).toBe(false);
      for (const secret of secrets) expect(JSON.stringify(res.headers).includes(secret)).toBe(false);
    }
  });
});
