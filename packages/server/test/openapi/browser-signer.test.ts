import { readFileSync } from 'node:fs';
import { runInNewContext } from 'node:vm';
import { buildSignatureBase, requiredComponentsFor, SignatureError } from '@partner-api/contract';
import { describe, expect, it } from 'vitest';
import { SERVER_FILES } from '../../src/lib/package-paths.ts';
import { EXAMPLE_KEY, EXAMPLE_REQUEST, workedExample } from './signing-example.ts';

type Signer = {
  importPrivateKey(pem: string): Promise<CryptoKey>;
  contentDigest(bytes: Uint8Array): Promise<string>;
  requiredComponents(opts: { hasBody: boolean; hasIdempotencyKey: boolean; isRevoke: boolean }): string[];
  signatureBase(
    request: { method: string; targetUri: string; headers: Record<string, string> },
    components: string[],
    params: { created: number; expires: number; keyId: string },
  ): { base: string; params: string };
  signRequest(opts: {
    request: { method: string; targetUri: string; headers: Record<string, string> };
    components: string[];
    keyId: string;
    key: CryptoKey;
    created?: number;
  }): Promise<{ 'signature-input': string; signature: string }>;
};

/** The page's script, run as a browser runs it: a global scope with WebCrypto, btoa and atob only. */
function loadSigner(scope: Record<string, unknown> = { crypto, btoa, atob, TextEncoder }): Signer {
  const source = readFileSync(`${SERVER_FILES.openApiAssets}/browser-signer.js`, 'utf8');
  const globalScope: Record<string, unknown> = { ...scope };
  globalScope.globalThis = globalScope;
  runInNewContext(source, globalScope);
  return globalScope.PartnerApiSigner as Signer;
}

describe('the reference page signer (browser-signer.js, WebCrypto)', () => {
  const signer = loadSigner();
  const example = workedExample();

  it('signs the worked example of docs/signing.md byte for byte as the contract does', async () => {
    const body = new TextEncoder().encode(EXAMPLE_REQUEST.body);
    const digest = await signer.contentDigest(body);
    expect(digest).toBe(example.contentDigest);
    const headers = { ...EXAMPLE_REQUEST.headers, 'content-digest': digest };
    const components = signer.requiredComponents({ hasBody: true, hasIdempotencyKey: true, isRevoke: false });
    expect(components).toEqual(
      requiredComponentsFor({ method: 'POST', hasBody: true, hasIdempotencyKey: true, isRevoke: false }),
    );
    const request = { method: EXAMPLE_REQUEST.method, targetUri: EXAMPLE_REQUEST.url, headers };
    const created = EXAMPLE_REQUEST.created;
    const { base } = signer.signatureBase(request, components, {
      created,
      expires: created + 300,
      keyId: EXAMPLE_KEY.keyId,
    });
    expect(base).toBe(example.base);
    const key = await signer.importPrivateKey(EXAMPLE_KEY.privateKeyPem);
    expect(key.extractable).toBe(false);
    const signed = await signer.signRequest({ request, components, keyId: EXAMPLE_KEY.keyId, key, created });
    expect(signed).toEqual({ 'signature-input': example.signatureInput, signature: example.signature });
  });

  it('covers neither body nor idempotency headers on revoke, as the server requires', () => {
    expect(signer.requiredComponents({ hasBody: true, hasIdempotencyKey: true, isRevoke: true })).toEqual(
      requiredComponentsFor({ method: 'POST', hasBody: true, hasIdempotencyKey: true, isRevoke: true }),
    );
    expect(signer.requiredComponents({ hasBody: false, hasIdempotencyKey: false, isRevoke: false })).toEqual([
      '@method',
      '@target-uri',
      'authorization',
      'x-client-id',
    ]);
  });

  it('escapes keyid as the structured-field serializer does, and refuses what cannot be signed', () => {
    const request = {
      method: 'GET',
      targetUri: 'http://localhost:8080/v1/oauth/me',
      headers: { authorization: 'Bearer t', 'x-client-id': 'org_1' },
    };
    const components = ['@method', '@target-uri', 'authorization', 'x-client-id'];
    const keyId = 'key "with" \\ quotes';
    const ours = signer.signatureBase(request, components, { created: 1, expires: 301, keyId });
    const theirs = buildSignatureBase(request, components, { created: 1, expires: 301, keyid: keyId });
    expect(ours.base).toBe(theirs.base);

    const lineFeed = { ...request, headers: { ...request.headers, 'x-client-id': 'org_1\n"@method": GET' } };
    expect(() =>
      signer.signatureBase(lineFeed, components, { created: 1, expires: 301, keyId: 'k' }),
    ).toThrow(/cannot cover/);
    expect(() => buildSignatureBase(lineFeed, components, { created: 1, expires: 301 })).toThrow(
      SignatureError,
    );
    const missing = { ...request, headers: { authorization: 'Bearer t' } };
    expect(() => signer.signatureBase(missing, components, { created: 1, expires: 301, keyId: 'k' })).toThrow(
      /x-client-id is covered but not sent/,
    );
  });

  it('takes only a PKCS#8 Ed25519 key, and says why otherwise', async () => {
    await expect(signer.importPrivateKey('-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n')).rejects.toThrow(
      /PKCS#8 PEM/,
    );
    const { generateKeyPairSync } = await import('node:crypto');
    const p256 = generateKeyPairSync('ec', { namedCurve: 'P-256' })
      .privateKey.export({ format: 'pem', type: 'pkcs8' })
      .toString();
    await expect(signer.importPrivateKey(p256)).rejects.toThrow(/Not an Ed25519 private key/);
  });

  it('says that signing needs a secure context when WebCrypto is absent', async () => {
    const insecure = loadSigner({ btoa, atob, TextEncoder });
    await expect(insecure.importPrivateKey(EXAMPLE_KEY.privateKeyPem)).rejects.toThrow(
      /HTTPS or on localhost/,
    );
  });
});
