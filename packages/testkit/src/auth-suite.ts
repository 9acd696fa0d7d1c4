import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { ErrorMessage, signRequest } from '@partner-api/contract';
import { expect, it } from 'vitest';
import type { TestApp } from './app.ts';
import { createPartner, type Partner, type SignedRequest, signedHeaders, signedInject } from './partner.ts';

/** A valid request to one authenticated route, built fresh for a partner (it may create what it needs). */
export type RouteCase = {
  name: string;
  mutating: boolean;
  build(t: TestApp, partner: Partner): Promise<Omit<SignedRequest, 'tamper' | 'created'>>;
  /** Mutating routes: the same request with another valid payload (for the 422 rule). */
  alter?: (body: Record<string, unknown>) => Record<string, unknown>;
};

const unauthorized = (message: string) => ({ error: 'Unauthorized', message });

/**
 * The shared suite every authenticated route must pass (auth/pipeline.test.ts runs it for each
 * authenticated route the app registers, in docs/decisions.md's pipeline order): token, client id,
 * allowlist, signing key, signature and digest rules, and for mutating routes the idempotency rules.
 */
export function authSuite(getApp: () => TestApp, route: RouteCase): void {
  // What a request needs (a customer, a session) is made by a healthy partner: every case below is
  // refused before any lookup, so whose resource it is does not matter.
  let setupPartner: Partner | undefined;
  const send = async (partner: Partner, change: Partial<SignedRequest> = {}) => {
    const t = getApp();
    setupPartner ??= await createPartner(t);
    const request = await route.build(t, setupPartner);
    return signedInject(t.app, partner, { ...request, ...change });
  };

  it(`${route.name}: missing token → 401`, async () => {
    const p = await createPartner(getApp());
    const res = await send(p, { tamper: (h) => delete h.authorization });
    expect([res.statusCode, res.json()]).toEqual([401, unauthorized(ErrorMessage.tokenRequired)]);
  });

  it(`${route.name}: bad token → 401`, async () => {
    const p = await createPartner(getApp());
    const res = await send({ ...p, token: `${p.token.slice(0, -4)}AAAA` });
    expect([res.statusCode, res.json()]).toEqual([401, unauthorized(ErrorMessage.tokenInvalid)]);
  });

  it(`${route.name}: revoked token → 401`, async () => {
    const p = await createPartner(getApp());
    const revoked = await signedInject(getApp().app, p, { method: 'POST', url: '/v1/oauth/revoke' });
    expect(revoked.statusCode).toBe(200);
    const res = await send(p);
    expect([res.statusCode, res.json()]).toEqual([401, unauthorized(ErrorMessage.tokenInvalid)]);
  });

  it(`${route.name}: missing and mismatched x-client-id → 401`, async () => {
    const p = await createPartner(getApp());
    const missing = await send(p, { tamper: (h) => delete h['x-client-id'] });
    expect([missing.statusCode, missing.json()]).toEqual([401, unauthorized(ErrorMessage.clientIdRequired)]);
    const other = await createPartner(getApp());
    const mismatched = await send(p, { headers: { 'x-client-id': other.clientId } });
    expect([mismatched.statusCode, mismatched.json()]).toEqual([
      401,
      unauthorized(ErrorMessage.clientIdMismatch),
    ]);
  });

  it(`${route.name}: client IP outside the allowlist → 403`, async () => {
    const p = await createPartner(getApp(), { trustedIps: ['10.0.0.0/8', '2001:db8::/32'] });
    const res = await send(p);
    expect([res.statusCode, res.json()]).toEqual([
      403,
      { error: 'Forbidden', message: ErrorMessage.ipNotAllowed },
    ]);
  });

  it(`${route.name}: credential without a signing key → 401`, async () => {
    const p = await createPartner(getApp(), { withKey: false });
    const res = await send(p);
    expect([res.statusCode, res.json()]).toEqual([401, unauthorized(ErrorMessage.noSigningKey)]);
  });

  const signatureCases: [string, Partial<SignedRequest> | ((p: Partner) => Partial<SignedRequest>)][] = [
    [
      'signature missing',
      {
        tamper: (h) => {
          delete h.signature;
          delete h['signature-input'];
        },
      },
    ],
    ['signature expired', () => ({ created: Math.floor(Date.now() / 1000) - 400 })],
    // Times are taken when each test runs: a long suite must not drift them into the valid window.
    ['signature from the future', () => ({ created: Math.floor(Date.now() / 1000) + 120 })],
    [
      'signature not verifying',
      { tamper: (h) => (h.signature = h.signature!.replace(/:(.)/, (_m, c) => `:${c === 'A' ? 'B' : 'A'}`)) },
    ],
    [
      'signed by another key',
      (p) => ({
        tamper: (h, target) => resign(h, target, p, undefined, generateKeyPairSync('ed25519').privateKey),
      }),
    ],
    [
      'missing required component authorization',
      (p) => ({ tamper: (h, target) => resign(h, target, p, 'authorization') }),
    ],
    [
      'missing required component @target-uri',
      (p) => ({ tamper: (h, target) => resign(h, target, p, '@target-uri') }),
    ],
  ];
  for (const [name, change] of signatureCases) {
    it(`${route.name}: ${name} → 401 Signature verification failed, with Signature-Debug in sandbox`, async () => {
      const p = await createPartner(getApp());
      const res = await send(p, typeof change === 'function' ? change(p) : change);
      expect([res.statusCode, res.json()]).toEqual([401, unauthorized(ErrorMessage.signatureFailed)]);
      expect(res.headers['signature-debug']).toMatch(/^reason="[^"]+", time=\d+/);
    });
  }

  if (route.mutating) {
    it(`${route.name}: body changed after signing → 401 Content-Digest verification failed`, async () => {
      const t = getApp();
      const p = await createPartner(t);
      const request = await route.build(t, p);
      const payload = JSON.stringify(request.body);
      const headers = signedHeaders(p, request, payload);
      const res = await t.app.inject({
        method: request.method,
        url: request.url,
        headers,
        payload: `${payload} `,
      });
      expect([res.statusCode, res.json()]).toEqual([401, unauthorized(ErrorMessage.digestFailed)]);
    });

    it(`${route.name}: idempotency — missing key 400, replay, 422 on another payload`, async () => {
      const t = getApp();
      const p = await createPartner(t);
      const request = await route.build(t, p);
      const missing = await signedInject(t.app, p, { ...request, idempotencyKey: false });
      expect([missing.statusCode, missing.json()]).toEqual([
        400,
        { error: 'Bad Request', message: ErrorMessage.idempotencyKeyRequired },
      ]);
      const key = randomUUID();
      const first = await signedInject(t.app, p, { ...request, idempotencyKey: key });
      expect(first.statusCode).toBeLessThan(500);
      const replay = await signedInject(t.app, p, { ...request, idempotencyKey: key });
      expect([replay.statusCode, replay.body, replay.headers['idempotent-replayed']]).toEqual([
        first.statusCode,
        first.body,
        'true',
      ]);
      const other = await signedInject(t.app, p, {
        ...request,
        body: route.alter!(request.body as Record<string, unknown>),
        idempotencyKey: key,
      });
      expect([other.statusCode, other.json()]).toEqual([
        422,
        { error: 'Unprocessable Entity', message: ErrorMessage.idempotencyPayloadMismatch },
      ]);
    });
  }
}

/** Re-signs the request with a covered-component list lacking `omit` (or with another key). */
function resign(
  headers: Record<string, string>,
  target: { method: string; url: string },
  partner: Partner,
  omit: string | undefined,
  privateKey = partner.privateKey,
): void {
  const inner = /\(([^)]*)\)/.exec(headers['signature-input']!)![1]!;
  const components = inner
    .split(' ')
    .map((c) => c.replaceAll('"', ''))
    .filter((c) => c !== omit);
  const created = Math.floor(Date.now() / 1000);
  const { signatureInput, signature } = signRequest({
    req: { method: target.method, targetUri: target.url, headers },
    components,
    keyId: partner.keyId,
    privateKey,
    created,
    expires: created + 300,
  });
  headers['signature-input'] = signatureInput;
  headers.signature = signature;
}
