import {
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  randomBytes,
  sign,
  verify,
} from 'node:crypto';
import { webhookKeyId } from '@partner-api/contract';
import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeWebhookKey } from '../../src/services/webhooks/signing-key.ts';

const pem = (type: 'ed25519' | 'rsa') => {
  const { privateKey } =
    type === 'ed25519' ? generateKeyPairSync('ed25519') : generateKeyPairSync('rsa', { modulusLength: 1024 });
  return privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
};

describe('webhook key id and description', () => {
  it('names the environment and the generation', () => {
    expect(webhookKeyId('sandbox', 2)).toBe('service-staging-ed25519-2');
    expect(webhookKeyId('production', 2)).toBe('service-live-ed25519-2');
    expect(webhookKeyId('production', 3)).toBe('service-live-ed25519-3');
  });

  it('uses the id as keyId and kid, and refuses a key that is not Ed25519', () => {
    const described = describeWebhookKey({
      privateKeyPem: pem('ed25519'),
      appEnv: 'production',
      generation: 7,
    });
    expect(described.keyId).toBe('service-live-ed25519-7');
    expect(described.jwks.keys[0]?.kid).toBe('service-live-ed25519-7');
    expect(() => describeWebhookKey({ privateKeyPem: pem('rsa'), appEnv: 'sandbox', generation: 2 })).toThrow(
      'WEBHOOK_SIGNING_KEY must be an Ed25519 private key',
    );
  });
});

describeStores('GET /v1/webhooks/key on %s', (store) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp(store);
  });
  afterAll(() => t.close());

  it('serves the key without authentication, with cache and rate-limit headers', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/webhooks/key' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('public, max-age=300');
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.headers['ratelimit-limit']).toBeDefined();
    const body = res.json();
    expect(body).toEqual({
      keyId: 'service-staging-ed25519-2',
      algorithm: 'ED25519',
      publicKey: expect.stringMatching(/^-----BEGIN PUBLIC KEY-----\n[\s\S]+-----END PUBLIC KEY-----\n$/),
      jwks: {
        keys: [
          {
            kty: 'OKP',
            crv: 'Ed25519',
            x: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
            kid: 'service-staging-ed25519-2',
            alg: 'EdDSA',
            use: 'sig',
          },
        ],
      },
    });
  });

  it('the JWK and the PEM are the same key, and verify what the private key signs', async () => {
    const body = (await t.app.inject({ method: 'GET', url: '/v1/webhooks/key' })).json();
    const fromPem = createPublicKey(body.publicKey);
    const fromJwk = createPublicKey({ key: body.jwks.keys[0], format: 'jwk' });
    expect(fromPem.equals(fromJwk)).toBe(true);
    expect(fromPem.export({ format: 'jwk' }).x).toBe(body.jwks.keys[0].x);
    const message = Buffer.from('{"eventId":"e1","event":"WEBHOOK.CREATED"}');
    const signature = sign(null, message, createPrivateKey(t.ctx.secrets.webhookSigningKey));
    expect(verify(null, message, fromJwk, signature)).toBe(true);
    expect(verify(null, Buffer.from('tampered'), fromJwk, signature)).toBe(false);
  });

  it('other methods on the path are an unmatched route', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/v1/webhooks/key', payload: {} });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: 'Not Found' });
  });

  it('security: credentials sent anyway change nothing, and no private material is ever served', async () => {
    const anonymous = await t.app.inject({ method: 'GET', url: '/v1/webhooks/key' });
    const withJunk = await t.app.inject({
      method: 'GET',
      url: '/v1/webhooks/key',
      headers: { authorization: 'Bearer forged', 'x-client-id': 'org_x', signature: 'sig1=:AAAA:' },
    });
    expect(withJunk.statusCode).toBe(200);
    expect(withJunk.body).toBe(anonymous.body);
    expect(anonymous.body).not.toMatch(/PRIVATE/);
    expect(anonymous.json().jwks.keys[0]).not.toHaveProperty('d');
  });
});

// Production refuses to start without DATABASE_URL, so this suite needs the real PostgreSQL.
describe.skipIf(!process.env.DATABASE_URL)('GET /v1/webhooks/key in production', () => {
  let t: TestApp;
  const privateKeyPem = pem('ed25519');
  beforeAll(async () => {
    t = await buildTestApp('postgres', {
      APP_ENV: 'production',
      ADMIN_TOKEN: randomBytes(24).toString('hex'),
      JWT_SECRET: randomBytes(32).toString('hex'),
      WEBHOOK_SIGNING_KEY: privateKeyPem,
      WEBHOOK_KEY_GENERATION: '3',
      PROVIDER_CALLBACK_SECRET: randomBytes(16).toString('hex'),
      PUBLIC_BASE_URL: 'https://api.example.com',
    });
  });
  afterAll(() => t?.close());

  it('serves the live key id of the configured generation and the configured key', async () => {
    const body = (await t.app.inject({ method: 'GET', url: '/v1/webhooks/key' })).json();
    expect(body.keyId).toBe('service-live-ed25519-3');
    expect(body.jwks.keys[0].kid).toBe('service-live-ed25519-3');
    expect(body.publicKey).toBe(
      createPublicKey(privateKeyPem).export({ format: 'pem', type: 'spki' }).toString(),
    );
  });
});
