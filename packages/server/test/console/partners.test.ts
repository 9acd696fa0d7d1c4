import { randomBytes } from 'node:crypto';
import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { adminInject } from '@partner-api/testkit/helpers.ts';
import { sql } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { one, rows, run } from '../../src/db/query.ts';
import { claimDueDeliveries } from '../../src/services/webhooks/delivery-store.ts';
import { publicKeyPem, type SeededPartner, seedPartner } from './partners-seed.ts';

type Session = { cookies: Map<string, string>; csrf: string };

/**
 * The Partners page (docs/console.md, "Partners"): organizations, credentials, the webhook and its
 * deliveries; each change (create, rotate, trusted IPs, deactivate, resend) made, audited with
 * before/after, refused to a viewer, to a bad CSRF token and to bad input with nothing changed; no
 * secret on any page; one organization's page shows nothing of another's.
 */
describeStores('the console’s Partners page on %s', (store) => {
  let t: TestApp;
  const suffix = randomBytes(4).toString('hex');
  const accounts = {} as Record<'viewer' | 'operator', { id: string; name: string; credential: string }>;
  const pages: LightMyRequestResponse[] = [];
  /** Client secrets the console showed once (on creation's answer, which is left out of `pages`). */
  const secrets: string[] = [];
  let a: SeededPartner;
  let b: SeededPartner;
  let operator: Session;
  let viewer: Session;
  const nameA = `Acme ${suffix}`;
  const nameB = `Beta ${suffix}`;

  async function visit(s: Session, method: 'GET' | 'POST', url: string, form?: Record<string, string>) {
    const res = await t.admin.inject({
      method,
      url,
      headers: {
        cookie: [...s.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
        ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      payload: form ? new URLSearchParams(form).toString() : undefined,
    });
    for (const header of [res.headers['set-cookie'] ?? []].flat()) {
      const [pair] = header.split(';');
      const [name, value] = pair!.split('=') as [string, string];
      s.cookies.set(name, value);
    }
    const csrf = /name="csrf" value="([^"]+)"/.exec(res.body)?.[1];
    if (csrf) s.csrf = csrf;
    pages.push(res);
    return res;
  }
  async function signIn(role: 'viewer' | 'operator'): Promise<Session> {
    const s: Session = { cookies: new Map(), csrf: '' };
    await visit(s, 'GET', '/console/sign-in');
    const { name, credential } = accounts[role];
    expect((await visit(s, 'POST', '/console/sign-in', { csrf: s.csrf, name, credential })).statusCode).toBe(
      303,
    );
    await visit(s, 'GET', '/console/partners');
    return s;
  }
  const post = (s: Session, url: string, form: Record<string, string> = {}) =>
    visit(s, 'POST', url, { csrf: s.csrf, ...form });

  const credentialOf = (id: string) =>
    one<{ trustedIps: string[]; isActive: boolean; keyId: string | null; publicKey: string | null }>(
      t.ctx.database.db,
      sql`select trusted_ips as "trustedIps", is_active as "isActive", key_id as "keyId", public_key as "publicKey"
  from credentials where id = ${id}`,
    );
  const auditRows = (route: string, targetId: string) =>
    rows<{ status: number; before: unknown; after: unknown; operatorName: string; body: unknown }>(
      t.ctx.database.db,
      sql`select status, before, after, operator_name as "operatorName", body from audit_log
  where route = ${route} and target_id = ${targetId} order by at, id`,
    );
  const base = (p: SeededPartner) => `/console/partners/${p.organizationId}`;
  const credentialUrl = (p: SeededPartner, what: string) =>
    `${base(p)}/credentials/${p.credentialId}/${what}`;

  beforeAll(async () => {
    t = await buildTestApp(store);
    for (const role of ['viewer', 'operator'] as const) {
      const name = `${role}-${suffix}`;
      const res = await adminInject(t, 'POST', '/admin/operators', { name, role });
      accounts[role] = { name, ...(res.json() as { id: string; credential: string }) };
    }
    a = await seedPartner(t, nameA);
    b = await seedPartner(t, nameB);
    operator = await signIn('operator');
    viewer = await signIn('viewer');
  });
  afterAll(() => t?.close());

  it('lists organizations with status, active credentials, webhook, SMS switch and language', async () => {
    const res = await visit(viewer, 'GET', `/console/partners?q=${encodeURIComponent(suffix)}`);
    expect(res.statusCode).toBe(200);
    const row = res.body.split('<tr').find((r) => r.includes(nameA))!;
    expect(row).toContain(`href="/console/partners/${a.organizationId}"`);
    for (const cell of ['>Active<', '>1 of 1<', '>Active<', '>On<', '>sw<']) expect(row).toContain(cell);
    expect(res.body).toContain(nameB);
    const none = await visit(viewer, 'GET', '/console/partners?q=no-such-organization-at-all');
    expect(none.body).toContain('No organization matches the search.');
    const anonymous = await t.admin.inject({ method: 'GET', url: '/console/partners' });
    expect(anonymous.statusCode).toBe(303);
  });

  it('shows an organization: its credentials, webhook and deliveries, none of another organization', async () => {
    const res = await visit(viewer, 'GET', base(a));
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain(`<h1>${nameA}</h1>`);
    for (const text of [
      a.clientId,
      'settlement-2026-01',
      '203.0.113.0/24<br>198.51.100.7',
      'https://hooks.example.com/partner-api',
      'HTTP 503',
      '>FAILED<',
      '>DELIVERED<',
      `/deliveries/${a.deliveries[0]!.id}"`,
    ])
      expect(res.body).toContain(text);
    // A viewer gets no change form; an operator does.
    expect(res.body).toContain('Changes here need the operator role.');
    expect(res.body).not.toContain('/trusted-ips"');
    expect((await visit(operator, 'GET', base(a))).body).toContain(
      `/credentials/${a.credentialId}/trusted-ips"`,
    );
    for (const text of [b.clientId, b.credentialId, ...b.deliveries.map((d) => d.id), nameB])
      expect(res.body).not.toContain(text);

    const delivery = await visit(viewer, 'GET', `${base(a)}/deliveries/${a.deliveries[0]!.id}`);
    expect(delivery.statusCode).toBe(200);
    const attempts = delivery.body.split('<tbody>')[1]!.split('<tr').slice(1);
    expect(attempts).toHaveLength(2);
    expect(attempts[0]).toContain('no answer');
    expect(attempts[0]).toContain('timeout after 10 s');
    expect(attempts[1]).toContain('>503<');
    expect(attempts[1]).toContain('412 ms');
    // Another organization's delivery under A's page is not found; an unknown organization neither.
    expect((await visit(viewer, 'GET', `${base(a)}/deliveries/${b.deliveries[0]!.id}`)).statusCode).toBe(404);
    expect((await visit(viewer, 'GET', '/console/partners/no-such-org')).statusCode).toBe(404);
  });

  it('a viewer is refused every change, with nothing changed', async () => {
    const before = await credentialOf(a.credentialId);
    const count = async () =>
      (await one<{ n: number }>(
        t.ctx.database.db,
        sql`select count(*)::int as n from credentials where organization_id = ${a.organizationId}`,
      ))!.n;
    const deliveries = async () =>
      (await one<{ n: number }>(
        t.ctx.database.db,
        sql`select count(*)::int as n from webhook_deliveries where organization_id = ${a.organizationId}`,
      ))!.n;
    const [credentials, sent] = [await count(), await deliveries()];
    for (const [url, form] of [
      [`${base(a)}/credentials`, { name: 'viewer made' }],
      [credentialUrl(a, 'trusted-ips'), { trustedIps: '10.0.0.0/8' }],
      [credentialUrl(a, 'signing-key'), { publicKey: publicKeyPem(), keyId: 'viewer-key' }],
      [credentialUrl(a, 'deactivate'), { confirm: 'yes' }],
      [`${base(a)}/deliveries/${a.deliveries[0]!.id}/resend`, {}],
    ] as const) {
      const res = await post(viewer, url, form);
      expect(res.statusCode, url).toBe(403);
      expect(res.body).toContain('A viewer cannot change anything');
    }
    expect(await credentialOf(a.credentialId)).toEqual(before);
    expect(await count()).toBe(credentials);
    expect(await deliveries()).toBe(sent);
  });

  it('a change without the session’s CSRF token is refused, with nothing changed', async () => {
    const before = await credentialOf(a.credentialId);
    for (const csrf of ['', 'wrong']) {
      const res = await visit(operator, 'POST', credentialUrl(a, 'trusted-ips'), {
        csrf,
        trustedIps: '10.0.0.0/8',
      });
      expect(res.statusCode).toBe(403);
      expect(res.body).toContain('did not come from the console');
    }
    expect(await credentialOf(a.credentialId)).toEqual(before);
  });

  it('bad input is refused (400) with nothing changed: a bad CIDR, a bad key, no name, no confirmation', async () => {
    const before = await credentialOf(a.credentialId);
    const ips = await post(operator, credentialUrl(a, 'trusted-ips'), {
      trustedIps: '10.0.0.0/8\n10.0.0.0/33',
    });
    expect(ips.statusCode).toBe(400);
    expect(ips.body).toContain('Trusted IPs, line 2 (“10.0.0.0/33”): must be an IP address or CIDR range');
    const key = await post(operator, credentialUrl(a, 'signing-key'), {
      publicKey: 'not a key',
      keyId: 'k2',
    });
    expect(key.statusCode).toBe(400);
    expect(key.body).toContain('Public key: must be an SPKI PEM or a JWK public key');
    const empty = await post(operator, credentialUrl(a, 'signing-key'), { publicKey: '', keyId: 'k2' });
    expect(empty.statusCode).toBe(400);
    const confirm = await post(operator, credentialUrl(a, 'deactivate'), {});
    expect(confirm.statusCode).toBe(400);
    expect(confirm.body).toContain('I understand partners using it are refused at once');
    expect(await credentialOf(a.credentialId)).toEqual(before);

    const count = () =>
      one<{ n: number }>(
        t.ctx.database.db,
        sql`select count(*)::int as n from credentials where organization_id = ${a.organizationId}`,
      );
    const credentials = await count();
    for (const form of [
      { name: '' },
      { name: 'x', publicKey: 'not a key', keyId: 'k' },
      { name: 'x', publicKey: publicKeyPem() },
      { name: 'x', trustedIps: 'example.com' },
    ] as Record<string, string>[])
      expect((await post(operator, `${base(a)}/credentials`, form)).statusCode, JSON.stringify(form)).toBe(
        400,
      );
    expect(await count()).toEqual(credentials);
    // B's credential under A's address is not found, and stays as it was.
    const foreign = await post(operator, `${base(a)}/credentials/${b.credentialId}/deactivate`, {
      confirm: 'yes',
    });
    expect(foreign.statusCode).toBe(404);
    expect((await credentialOf(b.credentialId))!.isActive).toBe(true);
  });

  it('sets trusted IPs, audited with before and after', async () => {
    const res = await post(operator, credentialUrl(a, 'trusted-ips'), {
      trustedIps: ' 10.1.0.0/16\r\n\r\n2001:db8::/32 ',
    });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe(`${base(a)}?done=ips`);
    expect((await credentialOf(a.credentialId))!.trustedIps).toEqual(['10.1.0.0/16', '2001:db8::/32']);
    const [audit] = await auditRows(
      '/console/partners/:id/credentials/:credentialId/trusted-ips',
      a.credentialId,
    );
    expect(audit).toMatchObject({
      status: 303,
      operatorName: accounts.operator.name,
      before: { id: a.credentialId, trustedIps: ['203.0.113.0/24', '198.51.100.7'] },
      after: { id: a.credentialId, trustedIps: ['10.1.0.0/16', '2001:db8::/32'] },
    });
    const page = await visit(operator, 'GET', res.headers.location as string);
    expect(page.body).toContain('Trusted IPs saved.');
  });

  it('rotates the signing key, audited with the key ids before and after', async () => {
    const pem = publicKeyPem();
    const res = await post(operator, credentialUrl(a, 'signing-key'), {
      publicKey: pem,
      keyId: 'settlement-2026-02',
    });
    expect(res.statusCode).toBe(303);
    const now = (await credentialOf(a.credentialId))!;
    expect(now.keyId).toBe('settlement-2026-02');
    expect(now.publicKey).toBe(pem);
    const [audit] = await auditRows(
      '/console/partners/:id/credentials/:credentialId/signing-key',
      a.credentialId,
    );
    expect(audit).toMatchObject({
      before: { keyId: 'settlement-2026-01' },
      after: { keyId: 'settlement-2026-02' },
    });
  });

  it('creates a credential and shows its secret once, never again nor in the audit log', async () => {
    const res = await post(operator, `${base(a)}/credentials`, {
      name: 'Reporting',
      publicKey: publicKeyPem(),
      keyId: 'reporting-1',
      trustedIps: '192.0.2.1',
      expiresAt: '2030-01-01',
    });
    expect(res.statusCode).toBe(201);
    const secret = /<code class="secret"><span class="volatile">([^<]+)</.exec(res.body)?.[1];
    expect(secret).toMatch(/^[0-9a-f]{32}_[0-9a-f]{32}$/);
    expect(res.body).toContain('shown only on this page, once');
    const made = (await one<{ id: string; clientId: string; secretHash: string; trustedIps: string[] }>(
      t.ctx.database.db,
      sql`select id, client_id as "clientId", secret_hash as "secretHash", trusted_ips as "trustedIps"
  from credentials where organization_id = ${a.organizationId} and name = 'Reporting'`,
    ))!;
    expect(made.secretHash).not.toContain(secret);
    expect(made.trustedIps).toEqual(['192.0.2.1']);
    // The partner can use it: the token endpoint takes the id and the secret.
    const token = await t.app.inject({
      method: 'POST',
      url: '/v1/oauth/token',
      payload: { clientId: made.clientId, clientSecret: secret },
    });
    expect(token.statusCode).toBe(200);
    const [audit] = await auditRows('/console/partners/:id/credentials', made.id);
    expect(audit).toMatchObject({
      status: 201,
      before: null,
      after: { id: made.id, clientId: made.clientId, keyId: 'reporting-1' },
    });
    expect(JSON.stringify(audit)).not.toContain(secret!);
    const page = await visit(operator, 'GET', base(a));
    expect(page.body).toContain(made.clientId);
    expect(page.body).not.toContain(secret);
    pages.splice(pages.indexOf(res), 1);
    secrets.push(secret!);
  });

  it('deactivates a credential: its partner is refused at once', async () => {
    const token = await t.app.inject({
      method: 'POST',
      url: '/v1/oauth/token',
      payload: { clientId: b.clientId, clientSecret: b.clientSecret },
    });
    expect(token.statusCode).toBe(200);
    const res = await post(operator, credentialUrl(b, 'deactivate'), { confirm: 'yes' });
    expect(res.statusCode).toBe(303);
    expect((await credentialOf(b.credentialId))!.isActive).toBe(false);
    const [audit] = await auditRows(
      '/console/partners/:id/credentials/:credentialId/deactivate',
      b.credentialId,
    );
    expect(audit).toMatchObject({ before: { isActive: true }, after: { isActive: false } });
    const refused = await t.app.inject({
      method: 'POST',
      url: '/v1/oauth/token',
      payload: { clientId: b.clientId, clientSecret: b.clientSecret },
    });
    expect(refused.statusCode).toBe(401);
    const page = await visit(operator, 'GET', `${base(b)}?done=deactivated`);
    expect(page.body).toContain('Credential deactivated');
    expect(page.body).toContain('>Deactivated<');
    expect(page.body).not.toContain(`/credentials/${b.credentialId}/deactivate`);
  });

  it('resends a delivery’s event: a new PENDING delivery the webhook worker claims, audited', async () => {
    const [failed] = a.deliveries;
    const res = await post(operator, `${base(a)}/deliveries/${failed!.id}/resend`);
    expect(res.statusCode).toBe(303);
    const location = res.headers.location as string;
    const newId = /\/deliveries\/([^?]+)\?done=resent$/.exec(location)?.[1];
    expect(newId).toBeDefined();
    const row = await one<{ eventId: string; state: string; attempts: number; organizationId: string }>(
      t.ctx.database.db,
      sql`select event_id as "eventId", state, attempts, organization_id as "organizationId"
  from webhook_deliveries where id = ${newId!}`,
    );
    expect(row).toEqual({
      eventId: failed!.eventId,
      state: 'PENDING',
      attempts: 0,
      organizationId: a.organizationId,
    });
    const [audit] = await auditRows('/console/partners/:id/deliveries/:deliveryId/resend', failed!.id);
    expect(audit).toMatchObject({
      before: { id: failed!.id, state: 'FAILED' },
      after: { id: newId, state: 'PENDING' },
    });
    const page = await visit(operator, 'GET', location);
    expect(page.body).toContain('A new delivery of the event is queued');
    const claimed = await claimDueDeliveries(t.ctx.database.db, {
      limit: 10,
      now: new Date(),
      leaseUntil: new Date(Date.now() + 60_000),
      organizations: [a.organizationId],
    });
    expect(claimed.map((d) => d.id)).toEqual([newId]);
    expect(claimed[0]).toMatchObject({
      eventId: failed!.eventId,
      url: 'https://hooks.example.com/partner-api',
    });
    // No resend to a deactivated webhook (409), nothing written.
    await run(
      t.ctx.database.db,
      sql`update webhooks set status = 'DEACTIVED' where organization_id = ${b.organizationId}`,
    );
    const count = async () =>
      (await one<{ n: number }>(
        t.ctx.database.db,
        sql`select count(*)::int as n from webhook_deliveries where organization_id = ${b.organizationId}`,
      ))!.n;
    const deliveries = await count();
    const deactivated = await post(operator, `${base(b)}/deliveries/${b.deliveries[0]!.id}/resend`);
    expect(deactivated.statusCode).toBe(409);
    expect(deactivated.body).toContain('The webhook is deactivated');
    expect(await count()).toBe(deliveries);
    const list = await visit(operator, 'GET', `/console/partners?q=${encodeURIComponent(nameB)}`);
    expect(list.body.split('<tr').find((r) => r.includes(`>${nameB}</a>`))).toMatch(
      /class="attention"[\s\S]*Deactivated/,
    );
    // Another organization's delivery cannot be resent from A's page.
    const foreign = await post(operator, `${base(a)}/deliveries/${b.deliveries[0]!.id}/resend`);
    expect(foreign.statusCode).toBe(404);
  });

  it('no page carries a client secret, a secret hash, the webhook signing secret or the admin token', async () => {
    const hashes = await rows<{ secretHash: string }>(
      t.ctx.database.db,
      sql`select secret_hash as "secretHash" from credentials where organization_id in (${a.organizationId}, ${b.organizationId})`,
    );
    const forbidden = [
      a.clientSecret,
      b.clientSecret,
      ...secrets,
      ...hashes.map((h) => h.secretHash),
      ...hashes.map((h) => h.secretHash.split('$').at(-1)!),
      t.ctx.secrets.adminToken,
      ...t.ctx.secrets.webhookSigningKey.split('\n').filter((line) => line.length > 20),
    ];
    expect(secrets).toHaveLength(1);
    expect(pages.length).toBeGreaterThan(20);
    for (const res of pages)
      for (const secret of forbidden)
        expect(res.body.includes(secret), `${res.statusCode} page carries a secret`).toBe(false);
  });
});
