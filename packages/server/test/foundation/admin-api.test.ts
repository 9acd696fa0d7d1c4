import { generateKeyPairSync } from 'node:crypto';
import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { adminInject } from '@partner-api/testkit/helpers.ts';
import { listRoutes, urlOf } from '@partner-api/testkit/routes.ts';
import { eq } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { credentials } from '../../src/db/schema.ts';
import { verifySecret } from '../../src/lib/passwords.ts';

const CLIENT_ID = /^org_[a-f0-9]{32}$/;
const CLIENT_SECRET = /^[a-f0-9]{32}_[a-f0-9]{32}$/;
const SOME_ID = 'cjld2cjxh0000qzrmn831i7rn';

/**
 * The admin calls operators rely on (README.md, Operator CLI; docs/ussd-and-payments.md for stocks and
 * settlement): each must exist and refuse a caller without the token.
 */
const PRODUCT_ROUTES = [
  'POST /admin/organizations',
  'GET /admin/organizations',
  'POST /admin/organizations/:id/credentials',
  'PUT /admin/credentials/:id/signing-key',
  'PATCH /admin/credentials/:id',
  'POST /admin/stocks',
  'GET /admin/orders',
  'POST /admin/transactions/:id/settle',
];

const inject = (app: FastifyInstance, route: string, headers: Record<string, string>) => {
  const [method, pattern] = route.split(' ') as [string, string];
  return app.inject({
    method: method as 'GET',
    url: urlOf(pattern, SOME_ID),
    headers: { ...headers, ...(method === 'GET' ? {} : { 'content-type': 'application/json' }) },
    payload: method === 'GET' ? undefined : '{}',
  });
};

describeStores('admin API on %s', (store) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp(store);
  });
  afterAll(() => t.close());

  const createOrg = async (name = `Org ${Math.random().toString(36).slice(2)}`) => {
    const res = await adminInject(t, 'POST', '/admin/organizations', { name });
    expect(res.statusCode).toBe(201);
    return res.json() as { id: string; name: string };
  };

  it('has every call operators rely on', () => {
    const routes = listRoutes(t.admin);
    for (const route of PRODUCT_ROUTES) expect(routes).toContain(route);
  });

  it('refuses every route without the token, with a wrong one, or with a malformed header', async () => {
    // The console's pages authenticate by session instead (test/console/console.test.ts); its
    // unknown paths are refused like any other.
    const tokenRoutes = listRoutes(t.admin).filter((route) => !route.split(' ')[1]!.startsWith('/console'));
    const routes = [
      ...new Set([
        ...tokenRoutes,
        ...PRODUCT_ROUTES,
        'GET /admin/no-such-route',
        'GET /console/no-such-page',
      ]),
    ];
    expect(routes.length).toBeGreaterThanOrEqual(PRODUCT_ROUTES.length + 1);
    const token = t.ctx.secrets.adminToken;
    const refusals: Record<string, string>[] = [
      {},
      { authorization: 'Bearer wrong-token' },
      { authorization: `Bearer ${token}x` },
      { authorization: `Bearer ${token.slice(0, -1)}` },
      { authorization: token },
      { authorization: `Basic ${token}` },
      { authorization: 'Bearer ' },
      { 'x-admin-token': token },
    ];
    for (const route of routes) {
      for (const headers of refusals) {
        const res = await inject(t.admin, route, headers);
        expect(res.statusCode, `${route} ${JSON.stringify(headers)}`).toBe(401);
        const body = res.json();
        expect(Object.keys(body).sort()).toEqual(['error', 'message']);
        expect(body.error).toBe('Unauthorized');
        expect(typeof body.message).toBe('string');
      }
    }
  });

  it('does not refuse a caller with the token (sanity check of the refusal test)', async () => {
    const res = await inject(t.admin, 'GET /admin/organizations', {
      authorization: `Bearer ${t.ctx.secrets.adminToken}`,
    });
    expect(res.statusCode).toBe(200);
  });

  it('creates an organization (201) and lists it', async () => {
    const res = await adminInject(t, 'POST', '/admin/organizations', {
      name: 'Acme Capital',
      email: 'ops@acme.example',
    });
    expect(res.statusCode).toBe(201);
    const org = res.json();
    expect(org).toMatchObject({ name: 'Acme Capital', email: 'ops@acme.example', isActive: true });
    expect(org.id).toMatch(/^c[a-z0-9]{24}$/);
    const list = await adminInject(t, 'GET', '/admin/organizations');
    expect(list.json().map((o: { id: string }) => o.id)).toContain(org.id);
  });

  it('validates organization input in the spec’s shape', async () => {
    const res = await adminInject(t, 'POST', '/admin/organizations', { name: '', color: 'red' });
    expect(res.statusCode).toBe(400);
    const body = res.json();
    expect(body.error).toBe('Validation failed');
    expect(body.details.map((d: { field: string }) => d.field).sort()).toEqual(['color', 'name']);
  });

  it('creates a credential whose secret is shown once, stored only as a hash that verifies it', async () => {
    const org = await createOrg();
    const res = await adminInject(t, 'POST', `/admin/organizations/${org.id}/credentials`, { name: 'prod' });
    expect(res.statusCode).toBe(201);
    const created = res.json();
    expect(created.clientId).toMatch(CLIENT_ID);
    expect(created.clientSecret).toMatch(CLIENT_SECRET);
    expect(Object.keys(created)).not.toContain('secretHash');

    const [row] = await t.ctx.database.db.select().from(credentials).where(eq(credentials.id, created.id));
    expect(row).toBeDefined();
    expect(row!.clientId).toBe(created.clientId);
    expect(row!.secretHash).not.toContain(created.clientSecret);
    expect(JSON.stringify(row)).not.toContain(created.clientSecret);
    expect(await verifySecret(created.clientSecret, row!.secretHash)).toBe(true);
    const wrong = `${created.clientSecret.slice(0, -1)}${created.clientSecret.endsWith('0') ? '1' : '0'}`;
    expect(await verifySecret(wrong, row!.secretHash)).toBe(false);
    expect(await verifySecret('', row!.secretHash)).toBe(false);
    expect(await verifySecret(created.clientSecret, 'scrypt$$')).toBe(false);
    expect(await verifySecret(created.clientSecret, 'not a hash')).toBe(false);

    // Listing never shows the secret or its hash.
    for (const url of ['/admin/credentials', `/admin/credentials?organizationId=${org.id}`]) {
      const list = await adminInject(t, 'GET', url);
      expect(list.statusCode).toBe(200);
      const listed = list.json().find((c: { id: string }) => c.id === created.id);
      expect(listed).toMatchObject({ id: created.id, clientId: created.clientId });
      expect(list.body).not.toContain(created.clientSecret);
      expect(list.body).not.toContain(row!.secretHash);
      expect(list.body).not.toMatch(/secretHash|clientSecret/);
    }

    // Two credentials never share a secret or a salt.
    const second = (
      await adminInject(t, 'POST', `/admin/organizations/${org.id}/credentials`, { name: 'other' })
    ).json();
    expect(second.clientSecret).not.toBe(created.clientSecret);
    expect(second.clientId).not.toBe(created.clientId);
  });

  it('issues a token for the clientId and secret it created', async () => {
    const org = await createOrg('Token Org');
    const created = (
      await adminInject(t, 'POST', `/admin/organizations/${org.id}/credentials`, { name: 'c' })
    ).json();
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/oauth/token',
      payload: { clientId: created.clientId, clientSecret: created.clientSecret },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      message: 'Authentication successful',
      tokenType: 'Bearer',
      organization: { id: org.id, name: 'Token Org', clientId: created.clientId },
    });
    const wrong = await t.app.inject({
      method: 'POST',
      url: '/v1/oauth/token',
      payload: { clientId: created.clientId, clientSecret: `${'0'.repeat(32)}_${'0'.repeat(32)}` },
    });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json()).toEqual({ error: 'Unauthorized', message: 'Invalid client credentials' });
  });

  it('accepts an Ed25519 public key as SPKI PEM or JWK, and names publicKey when it is invalid', async () => {
    const org = await createOrg();
    const url = `/admin/organizations/${org.id}/credentials`;
    const { publicKey } = generateKeyPairSync('ed25519');
    const pem = publicKey.export({ format: 'pem', type: 'spki' }).toString();
    const jwk = publicKey.export({ format: 'jwk' });
    for (const key of [pem, jwk]) {
      const res = await adminInject(t, 'POST', url, { name: 'k', publicKey: key, keyId: 'partner-1' });
      expect(res.statusCode).toBe(201);
      expect(res.json().keyId).toBe('partner-1');
    }
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey;
    for (const bad of [
      'not a key',
      '-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----',
      rsa.export({ format: 'pem', type: 'spki' }).toString(),
      { kty: 'OKP' },
    ]) {
      const res = await adminInject(t, 'POST', url, { name: 'k', publicKey: bad, keyId: 'partner-1' });
      expect(res.statusCode).toBe(400);
      const body = res.json();
      expect(body.error).toBe('Validation failed');
      expect(body.details).toHaveLength(1);
      expect(body.details[0].field).toBe('publicKey');
    }
  });

  it('validates trustedIps entries as IP addresses or CIDR ranges', async () => {
    const org = await createOrg();
    const url = `/admin/organizations/${org.id}/credentials`;
    const good = ['203.0.113.7', '10.0.0.0/8', '2001:db8::1', '2001:db8::/32'];
    const ok = await adminInject(t, 'POST', url, { name: 'ips', trustedIps: good });
    expect(ok.statusCode).toBe(201);
    expect(ok.json().trustedIps).toEqual(good);

    const bad = ['not-an-ip', '10.0.0.0/33', '256.1.1.1', '10.0.0.0/8/8', '2001:db8::/129', ''];
    const res = await adminInject(t, 'POST', url, { name: 'ips', trustedIps: ['1.2.3.4', ...bad] });
    expect(res.statusCode).toBe(400);
    expect(res.json().details.map((d: { field: string }) => d.field)).toEqual(
      bad.map((_, i) => `trustedIps.${i + 1}`),
    );

    const created = ok.json();
    const patch = await adminInject(t, 'PATCH', `/admin/credentials/${created.id}`, { trustedIps: ['nope'] });
    expect(patch.statusCode).toBe(400);
    expect(patch.json().details[0].field).toBe('trustedIps.0');
  });

  it('answers 404 for a credential of an organization that does not exist', async () => {
    const res = await adminInject(t, 'POST', `/admin/organizations/${SOME_ID}/credentials`, { name: 'x' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: 'Not found', message: 'Organization not found' });
  });
});
