import { ErrorMessage, signRequest } from '@partner-api/contract';
import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { createPartner, signedInject } from '@partner-api/testkit/partner.ts';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { rows } from '../../src/db/query.ts';
import { createTokenCodec } from '../../src/services/auth/tokens.ts';

const adminHeaders = (t: TestApp) => ({ authorization: `Bearer ${t.ctx.secrets.adminToken}` });

describeStores('POST /v1/oauth/token, GET /v1/oauth/me, POST /v1/oauth/revoke on %s', (store) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp(store);
  });
  afterAll(() => t.close());

  const token = (payload: unknown) =>
    t.app.inject({ method: 'POST', url: '/v1/oauth/token', payload: payload as object });

  it('issues a token with every field of the spec', async () => {
    const p = await createPartner(t, { trustedIps: ['127.0.0.1'] });
    const res = await token({ clientId: p.clientId, clientSecret: p.clientSecret });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toEqual({
      message: 'Authentication successful',
      tokenId: expect.stringMatching(/^c[a-z0-9]{24}$/),
      token: expect.any(String),
      expiresIn: 3600,
      maxTTL: 86400,
      tokenType: 'Bearer',
      scope: ['READ', 'WRITE'],
      trustedIps: ['127.0.0.1'],
      organization: { id: p.organizationId, name: expect.any(String), clientId: p.clientId },
      createdAt: expect.any(Number),
      updatedAt: expect.any(Number),
    });
    const claims = JSON.parse(Buffer.from(body.token.split('.')[1], 'base64url').toString());
    expect(claims).toMatchObject({
      jti: body.tokenId,
      org: p.organizationId,
      client_id: p.clientId,
      sub: p.credentialId,
    });
    expect(claims.exp - claims.iat).toBe(3600);
    expect(Math.abs(body.createdAt - Date.now() / 1000)).toBeLessThan(5);
  });

  it('answers malformed credentials with the validation shape', async () => {
    const res = await token({ clientId: 'org_XYZ', clientSecret: 'nope' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      error: 'Validation failed',
      details: [
        { field: 'clientId', message: 'Invalid client ID format' },
        { field: 'clientSecret', message: 'Invalid client secret format' },
      ],
    });
    const missing = await token({});
    expect(missing.json().details.map((d: { field: string }) => d.field)).toEqual([
      'clientId',
      'clientSecret',
    ]);
  });

  it('refuses a wrong secret, an unknown client, and an inactive or expired credential alike', async () => {
    const p = await createPartner(t);
    const refused = { error: 'Unauthorized', message: ErrorMessage.invalidCredentials };
    const wrong = await token({ clientId: p.clientId, clientSecret: `${'0'.repeat(32)}_${'0'.repeat(32)}` });
    expect([wrong.statusCode, wrong.json()]).toEqual([401, refused]);
    const unknown = await token({ clientId: `org_${'a'.repeat(32)}`, clientSecret: p.clientSecret });
    expect([unknown.statusCode, unknown.json()]).toEqual([401, refused]);

    // Deactivating the credential refuses new tokens and kills the existing one at once.
    const before = await signedInject(t.app, p, { method: 'GET', url: '/v1/oauth/me' });
    expect(before.statusCode).toBe(200);
    await t.admin.inject({
      method: 'PATCH',
      url: `/admin/credentials/${p.credentialId}`,
      headers: adminHeaders(t),
      payload: { isActive: false },
    });
    const inactive = await token({ clientId: p.clientId, clientSecret: p.clientSecret });
    expect([inactive.statusCode, inactive.json()]).toEqual([401, refused]);
    const after = await signedInject(t.app, p, { method: 'GET', url: '/v1/oauth/me' });
    expect([after.statusCode, after.json()]).toEqual([
      401,
      { error: 'Unauthorized', message: ErrorMessage.tokenInvalid },
    ]);

    const q = await createPartner(t);
    await t.admin.inject({
      method: 'PATCH',
      url: `/admin/credentials/${q.credentialId}`,
      headers: adminHeaders(t),
      payload: { expiresAt: new Date(Date.now() - 1000).toISOString() },
    });
    const expired = await token({ clientId: q.clientId, clientSecret: q.clientSecret });
    expect([expired.statusCode, expired.json()]).toEqual([401, refused]);
    const expiredUse = await signedInject(t.app, q, { method: 'GET', url: '/v1/oauth/me' });
    expect(expiredUse.statusCode).toBe(401);
  });

  it('GET /oauth/me returns the organization with its active credentials only', async () => {
    const p = await createPartner(t);
    const second = await t.admin.inject({
      method: 'POST',
      url: `/admin/organizations/${p.organizationId}/credentials`,
      headers: adminHeaders(t),
      payload: { name: 'retired' },
    });
    await t.admin.inject({
      method: 'PATCH',
      url: `/admin/credentials/${second.json().id}`,
      headers: adminHeaders(t),
      payload: { isActive: false },
    });
    const res = await signedInject(t.app, p, { method: 'GET', url: '/v1/oauth/me' });
    expect(res.statusCode).toBe(200);
    const { data } = res.json();
    expect(Object.keys(data).sort()).toEqual(
      [
        'address',
        'createdAt',
        'credentials',
        'description',
        'email',
        'id',
        'isActive',
        'name',
        'phone',
        'updatedAt',
        'website',
      ].sort(),
    );
    expect(data.credentials).toHaveLength(1);
    expect(data.credentials[0]).toEqual({
      id: p.credentialId,
      name: 'test credential',
      clientId: p.clientId,
      expiresAt: null,
      lastUsedAt: expect.any(String),
      createdAt: expect.any(String),
    });
    expect(JSON.stringify(data)).not.toMatch(/secret|scrypt|PUBLIC KEY/i);
  });

  it('GET /oauth/me lists the unexpired active credentials newest first, with their instants to the millisecond', async () => {
    const p = await createPartner(t);
    const add = async (name: string, expiresAt?: string) => {
      const res = await t.admin.inject({
        method: 'POST',
        url: `/admin/organizations/${p.organizationId}/credentials`,
        headers: adminHeaders(t),
        payload: { name, ...(expiresAt ? { expiresAt } : {}) },
      });
      expect(res.statusCode, res.body).toBe(201);
      return res.json().id as string;
    };
    const later = await add('expires later', '2999-01-02T03:04:05.678Z');
    await add('expired', '2001-01-01T00:00:00.000Z');
    const newest = await add('newest');
    const res = await signedInject(t.app, p, { method: 'GET', url: '/v1/oauth/me' });
    expect(res.statusCode).toBe(200);
    const { credentials } = res.json().data as {
      credentials: { id: string; expiresAt: string | null; createdAt: string }[];
    };
    expect(credentials.map((c) => c.id)).toEqual([newest, later, p.credentialId]);
    expect(credentials[1]!.expiresAt).toBe('2999-01-02T03:04:05.678Z');
    const stored = await rows<{ id: string; createdAt: string }>(
      t.ctx.database.db,
      sql`select id, created_at::text as "createdAt" from credentials where organization_id = ${p.organizationId}`,
    );
    for (const c of credentials) {
      expect(c.createdAt).toBe(new Date(stored.find((s) => s.id === c.id)!.createdAt).toISOString());
    }
  });

  it('GET /oauth/me answers 404 Not found once the organization is gone, and never shows another organization', async () => {
    const p = await createPartner(t);
    const other = await createPartner(t);
    const mine = await signedInject(t.app, p, { method: 'GET', url: '/v1/oauth/me' });
    expect(mine.json().data.id).toBe(p.organizationId);
    expect(mine.body).not.toContain(other.organizationId);
    await t.admin.inject({
      method: 'PATCH',
      url: `/admin/organizations/${p.organizationId}`,
      headers: adminHeaders(t),
      payload: { isActive: false },
    });
    const gone = await signedInject(t.app, p, { method: 'GET', url: '/v1/oauth/me' });
    expect([gone.statusCode, gone.json()]).toEqual([404, { error: 'Not found' }]);
  });

  it('revokes the presented token: refused on every later request, 400 for malformed or expired tokens', async () => {
    const p = await createPartner(t);
    const res = await signedInject(t.app, p, { method: 'POST', url: '/v1/oauth/revoke' });
    expect([res.statusCode, res.json()]).toEqual([200, { message: 'Token revoked successfully' }]);
    const again = await signedInject(t.app, p, { method: 'POST', url: '/v1/oauth/revoke' });
    expect([again.statusCode, again.json()]).toEqual([
      401,
      { error: 'Unauthorized', message: ErrorMessage.tokenInvalid },
    ]);

    const q = await createPartner(t);
    const malformed = await signedInject(
      t.app,
      { ...q, token: 'not-a-jwt' },
      { method: 'POST', url: '/v1/oauth/revoke' },
    );
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json()).toEqual({ error: 'Bad Request', message: 'Token is malformed or expired' });
    const codec = createTokenCodec(t.ctx.secrets.jwtSecret);
    const old = codec.issue(
      { credentialId: q.credentialId, organizationId: q.organizationId, clientId: q.clientId },
      Math.floor(Date.now() / 1000) - 7200,
    );
    const expired = await signedInject(
      t.app,
      { ...q, token: old.token },
      { method: 'POST', url: '/v1/oauth/revoke' },
    );
    expect([expired.statusCode, expired.json().error]).toEqual([400, 'Bad Request']);
    // An expired token anywhere else is a 401.
    const elsewhere = await signedInject(
      t.app,
      { ...q, token: old.token },
      { method: 'GET', url: '/v1/oauth/me' },
    );
    expect([elsewhere.statusCode, elsewhere.json().message]).toEqual([401, ErrorMessage.tokenInvalid]);
  });

  it('refuses a revoke whose signature covers a body header', async () => {
    const p = await createPartner(t);
    for (const header of ['x-idempotency-key', 'content-type']) {
      const res = await signedInject(t.app, p, {
        method: 'POST',
        url: '/v1/oauth/revoke',
        headers: { [header]: header === 'content-type' ? 'application/json' : crypto.randomUUID() },
        tamper: (h, target) => {
          const created = Math.floor(Date.now() / 1000);
          const signed = signRequest({
            req: { method: target.method, targetUri: target.url, headers: h },
            components: ['@method', '@target-uri', 'authorization', 'x-client-id', header],
            keyId: p.keyId,
            privateKey: p.privateKey,
            created,
            expires: created + 60,
          });
          h['signature-input'] = signed.signatureInput;
          h.signature = signed.signature;
        },
      });
      expect([res.statusCode, res.json().message]).toEqual([401, ErrorMessage.signatureFailed]);
      expect(res.headers['signature-debug']).toContain(`component ${header} not allowed`);
    }
    const still = await signedInject(t.app, p, { method: 'GET', url: '/v1/oauth/me' });
    expect(still.statusCode).toBe(200);
  });
});
