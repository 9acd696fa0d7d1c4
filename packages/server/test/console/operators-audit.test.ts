import { randomBytes } from 'node:crypto';
import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { adminInject } from '@partner-api/testkit/helpers.ts';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { one } from '../../src/db/query.ts';
import { verifyOperator } from '../../src/services/operators/accounts.ts';

type AuditEntry = {
  actor: { type: string; id?: string; name?: string };
  method: string;
  route: string;
  targetId: string | null;
  body: unknown;
  before?: unknown;
  after?: unknown;
  status: number;
  ip: string;
};

/** Operator accounts through the admin API, and the audit row each admin change writes (docs/console.md). */
describeStores('operators and the audit log on %s', (store) => {
  let t: TestApp;
  const suffix = randomBytes(4).toString('hex');
  beforeAll(async () => {
    t = await buildTestApp(store);
  });
  afterAll(() => t?.close());

  const audit = async (query: string) =>
    (await adminInject(t, 'GET', `/admin/audit?${query}`)).json() as AuditEntry[];

  it('creates an operator whose credential is shown once and stored only as a hash', async () => {
    const name = `ada-${suffix}`;
    const res = await adminInject(t, 'POST', '/admin/operators', { name, role: 'viewer' });
    expect(res.statusCode).toBe(201);
    const created = res.json() as { id: string; credential: string; role: string; isActive: boolean };
    expect(created).toMatchObject({ name, role: 'viewer', isActive: true });
    expect(created.credential).toMatch(/^op_[\w-]{43}$/);

    const stored = await one<{ hash: string }>(
      t.ctx.database.db,
      sql`select credential_hash as hash from operators where id = ${created.id}`,
    );
    expect(stored!.hash).toMatch(/^scrypt\$/);
    expect(stored!.hash).not.toContain(created.credential);
    expect(await verifyOperator(t.ctx.database.db, name, created.credential)).toMatchObject({
      id: created.id,
    });
    expect(await verifyOperator(t.ctx.database.db, name, `${created.credential}x`)).toBeUndefined();

    const list = await adminInject(t, 'GET', '/admin/operators');
    expect(list.body).not.toContain(created.credential);
    expect(list.body).not.toContain('scrypt');
    expect(list.json()).toContainEqual(expect.objectContaining({ id: created.id, name }));

    const again = await adminInject(t, 'POST', '/admin/operators', { name, role: 'operator' });
    expect(again.statusCode).toBe(409);
    expect((await adminInject(t, 'POST', '/admin/operators', { name: 'x', role: 'admin' })).statusCode).toBe(
      400,
    );
  });

  it('a deactivated operator no longer verifies; an unknown id is a 404', async () => {
    const name = `bo-${suffix}`;
    const created = (await adminInject(t, 'POST', '/admin/operators', { name, role: 'operator' })).json() as {
      id: string;
      credential: string;
    };
    const res = await adminInject(t, 'POST', `/admin/operators/${created.id}/deactivate`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: created.id, isActive: false });
    expect(await verifyOperator(t.ctx.database.db, name, created.credential)).toBeUndefined();
    expect((await adminInject(t, 'POST', `/admin/operators/nope-${suffix}/deactivate`)).statusCode).toBe(404);
  });

  it('every admin change writes one audit row: actor, route pattern, target, redacted body, status, IP', async () => {
    const name = `cy-${suffix}`;
    const created = (await adminInject(t, 'POST', '/admin/operators', { name, role: 'viewer' })).json() as {
      id: string;
      credential: string;
    };
    await adminInject(t, 'POST', `/admin/operators/${created.id}/deactivate`);
    const org = await adminInject(t, 'POST', '/admin/organizations', {
      name: `Audit ${suffix}`,
      description: `token ${t.ctx.secrets.adminToken}`,
    });
    expect(org.statusCode).toBe(201);
    const refused = await adminInject(t, 'POST', '/admin/operators', {
      name: '',
      role: 'viewer',
      secret: 's3',
    });
    expect(refused.statusCode).toBe(400);

    const creates = await audit(
      `route=${encodeURIComponent('/admin/operators')}&actor=admin-token&limit=1000`,
    );
    const mine = creates.find((e) => (e.body as { name?: string } | null)?.name === name);
    expect(mine).toMatchObject({
      actor: { type: 'admin-token' },
      method: 'POST',
      route: '/admin/operators',
      targetId: null,
      body: { name, role: 'viewer' },
      // The answer is the "after", its credential redacted; the admin API reads no "before".
      after: { id: created.id, name, role: 'viewer', credential: '[REDACTED]' },
      before: null,
      status: 201,
      ip: '127.0.0.1',
    });
    const rejected = creates.find((e) => e.status === 400 && (e.body as { secret?: string }).secret);
    expect(rejected?.body).toEqual({ name: '', role: 'viewer', secret: '[REDACTED]' });
    expect(rejected?.after).toBeNull();

    const deactivations = await audit(`route=${encodeURIComponent('/admin/operators/:id/deactivate')}`);
    expect(deactivations).toContainEqual(expect.objectContaining({ targetId: created.id, status: 200 }));

    const orgs = await audit(`route=${encodeURIComponent('/admin/organizations')}&limit=1000`);
    const orgEntry = orgs.find((e) => (e.body as { name?: string }).name === `Audit ${suffix}`);
    expect(orgEntry?.body).toMatchObject({ description: 'token [REDACTED]' });

    // The audit log answers never carry a credential or the admin token; reads are not audited.
    const all = await adminInject(t, 'GET', '/admin/audit?limit=1000');
    expect(all.body).not.toContain(created.credential);
    expect(all.body).not.toContain(t.ctx.secrets.adminToken);
    expect((all.json() as AuditEntry[]).some((e) => e.method === 'GET')).toBe(false);
  });

  it('a refused admin token writes no audit row; the filters narrow by time', async () => {
    const name = `dee-${suffix}`;
    const res = await adminInject(t, 'POST', '/admin/operators', { name, role: 'viewer' }, 'wrong');
    expect(res.statusCode).toBe(401);
    const found = await audit(`route=${encodeURIComponent('/admin/operators')}&limit=1000`);
    expect(found.some((e) => (e.body as { name?: string }).name === name)).toBe(false);
    const future = await audit(`from=${encodeURIComponent('9999-01-01T00:00:00Z')}`);
    expect(future).toEqual([]);
    expect((await adminInject(t, 'GET', '/admin/audit?limit=0')).statusCode).toBe(400);
  });

  it('records what jsonb cannot hold as U+FFFD, and a long body as its size only', async () => {
    const marker = `weird-${suffix}`;
    const nul = await adminInject(t, 'POST', '/admin/operators', {
      name: `a\u0000b`,
      role: 'viewer',
      marker,
    });
    expect(nul.statusCode).toBe(400);
    const lone = await adminInject(t, 'POST', '/admin/operators', {
      name: 'x\ud800y',
      role: 'viewer',
      marker,
    });
    expect(lone.statusCode).toBe(400);
    const long = await adminInject(t, 'POST', '/admin/operators', { name: 'n'.repeat(20_000), marker });
    expect(long.statusCode).toBe(400);
    const found = (await audit(`route=${encodeURIComponent('/admin/operators')}&limit=1000`)).map(
      (e) => e.body,
    );
    expect(found).toContainEqual({ name: 'a\ufffdb', role: 'viewer', marker });
    expect(found).toContainEqual({ name: 'x\ufffdy', role: 'viewer', marker });
    expect(found).toContainEqual({
      truncated: true,
      characters: 20_000 + JSON.stringify({ name: '', marker }).length,
    });
  });

  it('the audit log refuses UPDATE and DELETE', async () => {
    await adminInject(t, 'POST', '/admin/operators', { name: `eve-${suffix}`, role: 'viewer' });
    const db = t.ctx.database.db;
    const refusal = (statement: ReturnType<typeof sql>) =>
      db.execute(statement).then(
        () => 'accepted',
        (error: Error) => String((error.cause as Error | undefined)?.message ?? error.message),
      );
    expect(await refusal(sql`update audit_log set status = 500 where route = '/admin/operators'`)).toMatch(
      /append-only/,
    );
    expect(await refusal(sql`delete from audit_log where route = '/admin/operators'`)).toMatch(/append-only/);
  });
});
