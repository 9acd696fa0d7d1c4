import { createPublicKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { ErrorMessage, signPartnerRequest, verifyRequestSignature } from '@partner-api/contract';
import { buildTestApp, type TestApp } from '@partner-api/testkit/app.ts';
import { BASE_URL, createPartner, type Partner, signedInject } from '@partner-api/testkit/partner.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXAMPLE_KEY, EXAMPLE_REQUEST, workedExample } from './signing-example.ts';

const GUIDE = readFileSync(new URL('../../../../docs/signing.md', import.meta.url), 'utf8');
const codeBlocks = [...GUIDE.matchAll(/```[a-z]*\n([\s\S]*?)\n```/g)].map((m) => m[1]!);

describe('docs/signing.md', () => {
  const example = workedExample();

  it("shows the worked example exactly as the contract's signer computes it", () => {
    expect(codeBlocks).toContain(example.base);
    expect(codeBlocks).toContain(EXAMPLE_REQUEST.body);
    expect(codeBlocks).toContain(EXAMPLE_KEY.privateKeyPem.trim());
    expect(codeBlocks).toContain(`Content-Digest: ${example.contentDigest}`);
    expect(codeBlocks).toContain(
      `Signature-Input: ${example.signatureInput}\nSignature: ${example.signature}`,
    );
    const headers = Object.entries(EXAMPLE_REQUEST.headers).map(([name, value]) => `${name}: ${value}`);
    expect(codeBlocks).toContain(headers.join('\n'));
  });

  it('shows a signature the server verifies, and a Signature-Debug that decodes to the worked base', () => {
    const verified = verifyRequestSignature({
      req: {
        method: EXAMPLE_REQUEST.method,
        targetUri: EXAMPLE_REQUEST.url,
        headers: {
          ...EXAMPLE_REQUEST.headers,
          'content-digest': example.contentDigest,
        },
      },
      signatureInputHeader: example.signatureInput,
      signatureHeader: example.signature,
      resolveKey: (keyId) =>
        keyId === EXAMPLE_KEY.keyId
          ? { publicKey: createPublicKey(EXAMPLE_KEY.publicKeyPem), alg: 'ed25519' }
          : undefined,
      requiredComponents: [
        '@method',
        '@target-uri',
        'authorization',
        'x-client-id',
        'content-digest',
        'x-idempotency-key',
      ],
      now: EXAMPLE_REQUEST.created + 12,
    });
    expect(verified).toEqual({ ok: true, keyId: EXAMPLE_KEY.keyId, label: 'sig1' });
    const debug = /Signature-Debug: (reason="[^"]+", time=\d+, base=:[A-Za-z0-9+/=]+:)/.exec(GUIDE)![1]!;
    const decoded = Buffer.from(debug.match(/base=:([^:]*):/)![1]!, 'base64').toString();
    expect(decoded).toBe(example.base);
  });
});

describe('reading Signature-Debug as the guide says (sandbox)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp('pglite');
  });
  afterAll(() => t?.close());

  it("gives the reason, the server time and the server's base, which shows the differing line", async () => {
    const partner = await createPartner(t);
    const before = Math.floor(Date.now() / 1000);
    // Signed for another host than the server's public base URL: the classic proxy mistake.
    const res = await signedInject(t.app, partner, {
      method: 'GET',
      url: '/v1/oauth/me',
      tamper: (headers) => {
        const other = signedInjectHeadersFor(partner, 'https://api.example.com/v1/oauth/me', headers);
        Object.assign(headers, other);
      },
    });
    expect([res.statusCode, res.json().message]).toEqual([401, ErrorMessage.signatureFailed]);
    const value = String(res.headers['signature-debug']);
    expect(value).toMatch(/^reason="bad signature", time=\d+, base=:[A-Za-z0-9+/=]+:$/);
    const time = Number(/time=(\d+)/.exec(value)![1]);
    expect(time).toBeGreaterThanOrEqual(before);
    const serverBase = Buffer.from(value.match(/base=:([^:]*):/)![1]!, 'base64').toString();
    expect(serverBase.split('\n')[1]).toBe(`"@target-uri": ${BASE_URL}/v1/oauth/me`);
  });

  it('is served rendered at /docs/signing', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/docs/signing' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toContain('<h1>Signing requests</h1>');
    expect(res.body).toContain(workedExample().signature);
    expect(res.headers['content-security-policy']).toContain("default-src 'self'");
  });
});

/** Re-signs the same headers for another target URI. */
function signedInjectHeadersFor(partner: Partner, url: string, headers: Record<string, string>) {
  const { signature: _s, 'signature-input': _i, ...own } = headers;
  return signPartnerRequest({
    method: 'GET',
    url,
    headers: own,
    keyId: partner.keyId,
    privateKey: partner.privateKey,
  });
}
