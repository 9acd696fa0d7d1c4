import { randomUUID } from 'node:crypto';
import { computeContentDigest, ErrorMessage } from '@partner-api/contract';
import { buildTestApp, type TestApp } from '@partner-api/testkit/app.ts';
import { BASE_URL, createPartner, type Partner } from '@partner-api/testkit/partner.ts';
import { createSigner, httpbis } from 'http-message-signatures';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** The spec's sample list of covered components: a client that signs all of them must pass. */
const SAMPLE = [
  'content-type',
  'content-digest',
  'content-length',
  'authorization',
  'x-client-id',
  'x-idempotency-key',
  '@method',
  '@target-uri',
  '@path',
  '@query',
];

type Wire = { method: string; path: string; headers: Record<string, string>; body?: string };

/** Signs with an independent RFC 9421 implementation from npm (used only in tests). */
async function signIndependently(p: Partner, wire: Wire, fields: string[]): Promise<Record<string, string>> {
  const now = Math.floor(Date.now() / 1000);
  const signed = await httpbis.signMessage(
    {
      key: createSigner(p.privateKey, 'ed25519', p.keyId),
      fields,
      params: ['created', 'expires', 'keyid'],
      paramValues: { created: new Date(now * 1000), expires: new Date((now + 120) * 1000) },
    },
    { method: wire.method, url: BASE_URL + wire.path, headers: wire.headers },
  );
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(signed.headers as Record<string, string>)) out[k.toLowerCase()] = v;
  return out;
}

function bodyWire(p: Partner, path: string, body: string): Wire {
  return {
    method: 'POST',
    path,
    body,
    headers: {
      authorization: `Bearer ${p.token}`,
      'x-client-id': p.clientId,
      'content-type': 'application/json',
      'content-digest': computeContentDigest(body),
      'content-length': String(Buffer.byteLength(body)),
      'x-idempotency-key': randomUUID(),
    },
  };
}

describe('requests signed by an independent RFC 9421 signer', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp('pglite');
  });
  afterAll(() => t.close());

  const send = (wire: Wire, headers: Record<string, string>) =>
    t.app.inject({ method: wire.method as 'GET', url: wire.path, headers, payload: wire.body });

  it('accepts GET with the sample components (no body: digest and body headers left out)', async () => {
    const p = await createPartner(t);
    const wire: Wire = {
      method: 'GET',
      path: '/v1/oauth/me?x=1',
      headers: { authorization: `Bearer ${p.token}`, 'x-client-id': p.clientId },
    };
    const headers = await signIndependently(p, wire, [
      'authorization',
      'x-client-id',
      '@method',
      '@target-uri',
      '@path',
      '@query',
    ]);
    const res = await send(wire, headers);
    expect(res.statusCode).toBe(200);
  });

  it('accepts a body request covering every sample component, and rejects each tampered variant', async () => {
    const p = await createPartner(t);
    const wire = bodyWire(p, '/v1/customers?source=interop', '{"firstName":"Ada","lastName":"Lovelace"}');
    const headers = await signIndependently(p, wire, SAMPLE);
    const ok = await send(wire, headers);
    expect([ok.statusCode, ok.json().message]).toEqual([201, 'Customer created successfully']);

    const failed = { error: 'Unauthorized', message: ErrorMessage.signatureFailed };
    const variants: [string, () => Promise<{ statusCode: number; json(): unknown }>, unknown][] = [
      [
        'other query',
        () =>
          t.app.inject({ method: 'POST', url: '/v1/customers?source=other', headers, payload: wire.body }),
        failed,
      ],
      [
        'other method',
        () => t.app.inject({ method: 'GET', url: '/v1/customers?source=interop', headers }),
        failed,
      ],
      [
        'other client id',
        () =>
          t.app.inject({
            method: 'POST',
            url: wire.path,
            headers: { ...headers, 'x-client-id': `org_${'0'.repeat(32)}` },
            payload: wire.body,
          }),
        { error: 'Unauthorized', message: ErrorMessage.clientIdMismatch },
      ],
      [
        'other body, same digest header',
        () =>
          t.app.inject({
            method: 'POST',
            url: wire.path,
            headers,
            payload: '{"firstName":"Eve","lastName":"Lovelace"}',
          }),
        { error: 'Unauthorized', message: ErrorMessage.digestFailed },
      ],
      [
        'other digest header',
        () =>
          t.app.inject({
            method: 'POST',
            url: wire.path,
            headers: { ...headers, 'content-digest': computeContentDigest('{}') },
            payload: wire.body,
          }),
        failed,
      ],
      [
        'other idempotency key',
        () =>
          t.app.inject({
            method: 'POST',
            url: wire.path,
            headers: { ...headers, 'x-idempotency-key': randomUUID() },
            payload: wire.body,
          }),
        failed,
      ],
    ];
    for (const [name, run, expected] of variants) {
      const res = await run();
      expect(res.statusCode, name).toBe(401);
      if (expected) expect(res.json(), name).toEqual(expected);
    }
  });

  it('a replayed signature after its expiry is refused', async () => {
    const p = await createPartner(t);
    const wire: Wire = {
      method: 'GET',
      path: '/v1/oauth/me',
      headers: { authorization: `Bearer ${p.token}`, 'x-client-id': p.clientId },
    };
    const now = Math.floor(Date.now() / 1000);
    const signed = await httpbis.signMessage(
      {
        key: createSigner(p.privateKey, 'ed25519', p.keyId),
        fields: ['authorization', 'x-client-id', '@method', '@target-uri'],
        params: ['created', 'expires', 'keyid'],
        paramValues: { created: new Date((now - 200) * 1000), expires: new Date((now - 10) * 1000) },
      },
      { method: 'GET', url: BASE_URL + wire.path, headers: wire.headers },
    );
    const res = await t.app.inject({
      method: 'GET',
      url: wire.path,
      headers: signed.headers as Record<string, string>,
    });
    expect(res.statusCode).toBe(401);
    expect(res.headers['signature-debug']).toContain('reason="expired"');
    const base = /base=:([^:]+):/.exec(String(res.headers['signature-debug']))![1]!;
    expect(Buffer.from(base, 'base64').toString()).toContain('"@method": GET');
  });
});

describe.skipIf(!process.env.DATABASE_URL)('production never sends Signature-Debug', () => {
  it('answers 401 without the debug header', async () => {
    const t = await buildTestApp('postgres', {
      APP_ENV: 'production',
      ADMIN_TOKEN: 'a'.repeat(32),
      JWT_SECRET: 'j'.repeat(40),
      PROVIDER_CALLBACK_SECRET: 'p'.repeat(32),
      WEBHOOK_SIGNING_KEY: (await import('node:crypto'))
        .generateKeyPairSync('ed25519')
        .privateKey.export({ format: 'pem', type: 'pkcs8' })
        .toString(),
      PUBLIC_BASE_URL: BASE_URL,
    });
    try {
      const p = await createPartner(t);
      const res = await t.app.inject({
        method: 'GET',
        url: '/v1/oauth/me',
        headers: { authorization: `Bearer ${p.token}`, 'x-client-id': p.clientId },
      });
      expect([res.statusCode, res.json().message]).toEqual([401, ErrorMessage.signatureFailed]);
      expect(res.headers['signature-debug']).toBeUndefined();
    } finally {
      await t.close();
    }
  });
});
