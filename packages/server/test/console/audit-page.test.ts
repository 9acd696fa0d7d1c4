import { randomBytes } from 'node:crypto';
import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { adminInject } from '@partner-api/testkit/helpers.ts';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { writeAudit } from '../../src/services/audit/log.ts';
import { type Browser, csrfOf, signedIn, visit } from './session-kit.ts';

/**
 * The Audit log page (docs/console.md): searched by actor, route, days and target id; body,
 * before and after shown escaped; a viewer reads it.
 */
describeStores('the console: the audit log page on %s', (store) => {
  let t: TestApp;
  const suffix = randomBytes(4).toString('hex');
  const target = `target-${suffix}`;
  let viewer: Browser;
  let operator: { browser: Browser; name: string; id: string };
  let orgId: string;

  beforeAll(async () => {
    t = await buildTestApp(store);
    ({ browser: viewer } = await signedIn(t, 'viewer'));
    operator = await signedIn(t, 'operator');
    // An admin-token change whose body carries markup.
    const org = await adminInject(t, 'POST', '/admin/organizations', { name: `Audit page ${suffix}` });
    orgId = (org.json() as { id: string }).id;
    const patched = await adminInject(t, 'PATCH', `/admin/organizations/${orgId}`, {
      description: '<script>alert("audit")</script>',
    });
    expect(patched.statusCode).toBe(200);
    // A console change with what it found and left, on a fixed day in the past.
    await writeAudit(t.ctx.database.db, {
      actor: { type: 'operator', id: operator.id, name: operator.name },
      method: 'POST',
      route: '/console/payments/:id/settle',
      targetId: target,
      body: { reason: 'customer called', csrf: '[REDACTED]' },
      before: { state: 'OPERATOR', amount: '1500.00' },
      after: { state: 'SUCCESS', amount: '1500.00', note: '<b>settled</b>' },
      status: 303,
      ip: '198.51.100.7',
      requestId: null,
      at: new Date('2021-03-04T10:00:00Z'),
    });
  });
  afterAll(() => t?.close());

  const rowsOf = (body: string) =>
    body.split('<tbody>')[1]?.split('</tbody>')[0]?.split('<tr').slice(1) ?? [];
  const search = async (query: Record<string, string>) => {
    const res = await visit(t, viewer, 'GET', `/console/audit?${new URLSearchParams(query)}`);
    expect(res.statusCode, JSON.stringify(query)).toBe(200);
    return res;
  };

  it('a viewer reads it: who, what, target, status, address, time, and before/after as escaped JSON', async () => {
    const res = await search({ target });
    const rows = rowsOf(res.body);
    expect(rows).toHaveLength(1);
    const row = rows[0]!;
    expect(row).toContain(operator.name);
    expect(row).toContain('POST <code>/console/payments/:id/settle</code>');
    expect(row).toContain(target);
    expect(row).toContain('>303<');
    expect(row).toContain('198.51.100.7');
    expect(row).toContain('2021-03-04 10:00:00Z');
    expect(row).toContain('<details><summary>Show</summary>');
    expect(row).toContain('&quot;state&quot;: &quot;OPERATOR&quot;');
    expect(row).toContain('&quot;state&quot;: &quot;SUCCESS&quot;');
    expect(row).toContain('&lt;b&gt;settled&lt;/b&gt;');
    expect(row).not.toContain('<b>settled');
    expect(row).toContain('&quot;reason&quot;: &quot;customer called&quot;');
  });

  it('escapes a body holding a script', async () => {
    const res = await search({ target: orgId });
    const row = rowsOf(res.body).find((r) => r.includes('/admin/organizations/:id'));
    expect(row).toBeDefined();
    expect(res.body).toContain('&lt;script&gt;alert(\\&quot;audit\\&quot;)&lt;/script&gt;');
    expect(res.body).not.toMatch(/<script/i);
  });

  it('finds rows by each filter', async () => {
    // Actor by name and by id; admin-token.
    for (const actor of [operator.name, operator.id]) {
      const rows = rowsOf((await search({ actor })).body);
      expect(
        rows.some((r) => r.includes(target)),
        actor,
      ).toBe(true);
      expect(
        rows.every((r) => r.includes(operator.name)),
        actor,
      ).toBe(true);
    }
    const byToken = rowsOf((await search({ actor: 'admin-token', target: orgId })).body);
    expect(byToken.length).toBeGreaterThan(0);
    expect(byToken.every((r) => r.includes('admin token'))).toBe(true);
    expect(rowsOf((await search({ actor: 'admin-token', target })).body)).toHaveLength(0);
    // Route pattern.
    const byRoute = rowsOf(
      (await search({ route: '/console/payments/:id/settle', actor: operator.name })).body,
    );
    expect(byRoute).toHaveLength(1);
    expect(rowsOf((await search({ route: '/admin/organizations', target })).body)).toHaveLength(0);
    // Days: from and to are both included.
    expect(rowsOf((await search({ from: '2021-03-04', to: '2021-03-04', target })).body)).toHaveLength(1);
    expect(rowsOf((await search({ from: '2021-03-05', target })).body)).toHaveLength(0);
    expect(rowsOf((await search({ to: '2021-03-03', target })).body)).toHaveLength(0);
    // Target id, a part of it.
    expect(rowsOf((await search({ target: suffix, actor: operator.name })).body)).toHaveLength(1);
  });

  it('refuses a bad search with 400 and a clear message', async () => {
    for (const [query, message] of [
      ['from=2021-02-30', 'YYYY-MM-DD'],
      ['to=yesterday', 'YYYY-MM-DD'],
      ['from=2021-03-05&to=2021-03-04', 'To must not be before from'],
      ['offset=abc', 'The offset must be'],
      [`target=${'x'.repeat(201)}`, 'too long'],
      ['actor=a&actor=b', 'Give each filter once'],
    ] as const) {
      const res = await visit(t, viewer, 'GET', `/console/audit?${query}`);
      expect(res.statusCode, query).toBe(400);
      expect(res.body).toContain(message);
    }
  });

  it('records a console change by the operator, shown on the page; nothing on it posts', async () => {
    const overview = await visit(t, operator.browser, 'GET', '/console');
    const done = await visit(t, operator.browser, 'POST', '/console/payments/reconcile', {
      csrf: csrfOf(overview),
    });
    expect(done.statusCode).toBe(303);
    const res = await visit(
      t,
      operator.browser,
      'GET',
      `/console/audit?actor=${encodeURIComponent(operator.name)}`,
    );
    expect(res.statusCode).toBe(200);
    const rows = rowsOf(res.body);
    expect(rows[0]).toContain('POST <code>/console/payments/reconcile</code>');
    expect(rows[0]).toContain('&quot;csrf&quot;: &quot;[REDACTED]&quot;');
    expect(res.body).not.toContain(`${csrfOf(overview).slice(0, 20)}"`);
    expect(res.body.match(/method="post"/g)).toHaveLength(1);
  });
});
