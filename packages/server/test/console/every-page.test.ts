import { randomBytes } from 'node:crypto';
import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { CONSOLE_CSP } from '../../src/console/routes.ts';
import { one, rows } from '../../src/db/query.ts';
import { seedPayments } from './charts-seed.ts';
import { type Account, addOperator, consoleClient, PROVIDER_SECRETS } from './client.ts';
import { type SeededPartner, seedPartner } from './partners-seed.ts';
import { seedSms } from './session-kit.ts';

/** Tables a console request may write without changing anything: its audit row and the session's last-seen time. */
const BOOKKEEPING = new Set(['audit_log', 'console_sessions', '__drizzle_migrations']);

/**
 * Every console route at once (the admin app lists them in `consoleRoutes`): a viewer is refused
 * every change and nothing in the store moves; every change refuses a POST without the session's
 * CSRF token; every page reached by following the console's own links from the Overview answers
 * 200 with the strict CSP and carries no configured secret.
 */
describeStores('every console page and change on %s', (store) => {
  let t: TestApp;
  const suffix = randomBytes(4).toString('hex');
  let viewer: Account;
  let operator: Account;
  let partner: SeededPartner;
  const { pages, visit, session } = consoleClient(() => t);

  beforeAll(async () => {
    t = await buildTestApp(store, PROVIDER_SECRETS);
    viewer = await addOperator(t, `viewer-${suffix}`, 'viewer');
    operator = await addOperator(t, `operator-${suffix}`, 'operator');
    // Data on every page, so that the crawl reaches the detail pages too (a partner, its deliveries, a payment, an SMS).
    partner = await seedPartner(t, `Every page ${suffix}`);
    await seedPayments(t, new Date(), [
      { adapter: 'mpesa', minutesAgo: 30, status: 'SUCCESS', latencyMs: 120 },
      { adapter: 'mpesa', minutesAgo: 20, status: 'PENDING' },
    ]);
    await seedSms(t, `Every page SMS ${suffix}`, [
      { msisdn: '254712345678', state: 'DELIVERED', createdAt: new Date(), deliveredAt: new Date() },
    ]);
  });
  afterAll(() => t?.close());

  const changes = () =>
    (t.admin.consoleRoutes ?? []).filter(
      (r) => r.method === 'POST' && !['/console/sign-in', '/console/sign-out'].includes(r.url),
    );
  /** A URL for a route pattern: every parameter an id that exists nowhere. */
  const urlOf = (pattern: string) => pattern.replace(/:[A-Za-z]+/g, `c${suffix}nothing`);

  /**
   * A fingerprint of every table but the console's bookkeeping: equal before and after means nothing
   * changed. Only on the embedded store, which is this suite's own: the PostgreSQL database is
   * shared with the suites running beside it, whose writes would move it.
   */
  async function fingerprint(): Promise<Record<string, string>> {
    if (store !== 'pglite') return {};
    const tables = await rows<{ name: string }>(
      t.ctx.database.db,
      sql`select table_name as name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'`,
    );
    const found: Record<string, string> = {};
    for (const { name } of tables) {
      if (BOOKKEEPING.has(name)) continue;
      const row = await one<{ digest: string | null }>(
        t.ctx.database.db,
        sql`select md5(coalesce(string_agg(x::text, '|' order by x::text), '')) as digest from ${sql.identifier(name)} x`,
      );
      found[name] = row?.digest ?? '';
    }
    return found;
  }

  it('lists the changes of every page', () => {
    expect(changes().map((r) => r.url)).toContain('/console/payments/reconcile');
  });

  it('a viewer is refused every change with 403, each refusal audited, and nothing in the store moves', async () => {
    const { browser, csrf } = await session(viewer);
    const before = await fingerprint();
    for (const route of changes()) {
      const res = await visit(browser, 'POST', urlOf(route.url), { csrf, reason: 'a viewer tries' });
      expect(res.statusCode, route.url).toBe(403);
      expect(res.body, route.url).toContain('A viewer cannot change anything');
      const audited = await one<{ status: number }>(
        t.ctx.database.db,
        sql`select status from audit_log where route = ${route.url} and operator_id = ${viewer.id} order by at desc limit 1`,
      );
      expect(audited?.status, route.url).toBe(403);
    }
    expect(await fingerprint()).toEqual(before);
  });

  it('every change refuses a POST without the session’s CSRF token, and nothing moves', async () => {
    const { browser } = await session(operator);
    const before = await fingerprint();
    for (const route of changes()) {
      const forms: Record<string, string>[] = [
        { reason: 'no token' },
        { csrf: randomBytes(32).toString('base64url') },
      ];
      for (const form of forms) {
        const res = await visit(browser, 'POST', urlOf(route.url), form);
        expect(res.statusCode, route.url).toBe(403);
        expect(res.body, route.url).toContain('did not come from the console');
      }
    }
    expect(await fingerprint()).toEqual(before);
  });

  it('every page reached from the Overview answers 200 with the strict CSP, and none carries a secret', async () => {
    const { browser } = await session(operator);
    const seen = new Set<string>();
    // The Overview first; then the seeded partner's search, since on PostgreSQL the newest partners
    // listed may be the suites' beside this one.
    const queue = ['/console', `/console/partners?q=${encodeURIComponent(`Every page ${suffix}`)}`];
    while (queue.length > 0 && seen.size < 300) {
      const url = queue.shift()!;
      if (seen.has(url)) continue;
      seen.add(url);
      const res = await visit(browser, 'GET', url);
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['content-security-policy'], url).toBe(CONSOLE_CSP);
      for (const [, href] of res.body.matchAll(/href="(\/console[^"#]*)"/g)) {
        const link = href!.replace(/&amp;/g, '&');
        if (!link.startsWith('/console/assets/') && !seen.has(link)) queue.push(link);
      }
    }
    const standalone = (t.admin.consoleRoutes ?? []).filter(
      (r) => r.method === 'GET' && !r.url.includes(':') && !/^\/console\/(assets|sign-in)/.test(r.url),
    );
    for (const page of standalone) expect(seen, 'reached from the navigation').toContain(page.url);

    const secrets = [
      ...Object.values(t.ctx.secrets).map((s) => s.split('\n')[1] ?? s),
      ...Object.entries(PROVIDER_SECRETS)
        .filter(([key]) => !/SHORTCODE|INITIATOR_NAME/.test(key))
        .map(([, value]) => value),
      viewer.credential,
      operator.credential,
      partner.clientSecret,
    ];
    expect([...seen].some((url) => url.startsWith(`/console/partners/${partner.organizationId}`))).toBe(true);
    for (const res of pages) {
      const cookie = /console_session=([^;]+)/.exec(String(res.headers['set-cookie']))?.[1];
      for (const secret of [...secrets, ...(cookie ? [cookie] : [])])
        expect(res.body.includes(secret), `${res.statusCode} page carries a secret`).toBe(false);
    }
  });
});
