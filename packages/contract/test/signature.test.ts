import crypto from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createSigner, createVerifier, httpbis } from 'http-message-signatures';
import { type InnerList, parseDictionary, serializeInnerList } from 'structured-headers';
import { describe, expect, it } from 'vitest';
import { computeContentDigest } from '../src/digest.ts';
import {
  buildSignatureBase,
  buildSignatureBaseFromInnerList,
  REVOKE_FORBIDDEN_COMPONENTS,
  readCanonicalSignature,
  readCanonicalSignatureInput,
  requiredComponentsFor,
  type SignableRequest,
  signRequest,
  type VerifyRequestOptions,
  verifyRequestSignature,
} from '../src/signature.ts';

const V = JSON.parse(readFileSync(new URL('./fixtures/rfc9421-vectors.json', import.meta.url), 'utf8'));
const rfcKey = V.rfc9421.keys['test-key-ed25519'];
const b26 = V.rfc9421.b26;
const tr = V.rfc9421.testRequest;
const lower = (h: Record<string, string>) =>
  Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toLowerCase(), v]));
const rfcReq: SignableRequest = { method: tr.method, targetUri: tr.url, headers: lower(tr.headers) };
const sigBytes = (header: string, label: string) =>
  Buffer.from((parseDictionary(header).get(label) as [ArrayBuffer, unknown])[0]);

describe('RFC 9421 vectors', () => {
  it('rebuilds the B.2.6 base byte for byte and verifies its signature with PEM and JWK keys', () => {
    const { base, signatureParams } = buildSignatureBase(rfcReq, b26.coveredComponents, {
      created: b26.created,
      keyid: b26.keyid,
    });
    expect(base).toBe(b26.signatureBase);
    expect(`${b26.label}=${signatureParams}`).toBe(b26.signatureInput);
    const inner = parseDictionary(b26.signatureInput).get(b26.label) as InnerList;
    expect(buildSignatureBaseFromInnerList(rfcReq, inner).base).toBe(b26.signatureBase);

    const sig = sigBytes(b26.signature, b26.label);
    const { kty, crv, x } = rfcKey.jwk;
    expect(crypto.verify(null, Buffer.from(base), crypto.createPublicKey(rfcKey.publicKeyPem), sig)).toBe(
      true,
    );
    expect(
      crypto.verify(
        null,
        Buffer.from(base),
        crypto.createPublicKey({ key: { kty, crv, x }, format: 'jwk' }),
        sig,
      ),
    ).toBe(true);
    expect(crypto.sign(null, Buffer.from(base), crypto.createPrivateKey(rfcKey.privateKeyPem))).toEqual(sig);
    expect(
      crypto.sign(null, Buffer.from(base), crypto.createPrivateKey({ key: rfcKey.jwk, format: 'jwk' })),
    ).toEqual(sig);
    expect(
      crypto.verify(null, Buffer.from(`${base} `), crypto.createPublicKey(rfcKey.publicKeyPem), sig),
    ).toBe(false);
  });

  it('rebuilds the B.2.3 base (with @query and content-digest) and the B.2.5 HMAC base', () => {
    const b23 = V.rfc9421.b23_fullCoverage_baseOnly.signatureBase as string;
    const comps = ['date', '@method', '@path', '@query', '@authority', 'content-type', 'content-digest'];
    const params = { created: 1618884473, keyid: 'test-key-rsa-pss' };
    expect(buildSignatureBase(rfcReq, [...comps, 'content-length'], params).base).toBe(b23);

    const b25 = V.rfc9421.b25_hmac;
    const inner = parseDictionary(b25.signatureInput).get('sig-b25') as InnerList;
    const { base } = buildSignatureBaseFromInnerList(rfcReq, inner);
    expect(base).toBe(b25.signatureBase);
    const secret = Buffer.from(V.rfc9421.keys['test-shared-secret'].base64, 'base64');
    expect(crypto.createHmac('sha256', secret).update(base).digest()).toEqual(
      sigBytes(b25.signature, 'sig-b25'),
    );
  });

  it('policy refuses the B.2.6 signature because it has no expires', () => {
    const res = verifyRequestSignature({
      req: rfcReq,
      signatureInputHeader: b26.signatureInput,
      signatureHeader: b26.signature,
      resolveKey: () => ({ publicKey: crypto.createPublicKey(rfcKey.publicKeyPem), alg: 'ed25519' }),
      now: b26.created,
      requiredComponents: [],
    });
    expect(res).toEqual({ ok: false, reason: 'missing created or expires', base: b26.signatureBase });
  });
});

describe('buildSignatureBase components', () => {
  const base = (targetUri: string, comps: string[], headers: SignableRequest['headers'] = {}) =>
    buildSignatureBase({ method: 'get', targetUri, headers }, comps, {}).base.split('\n').slice(0, -1);

  const U = 'HTTP://LocalHost:8080/a%20b/../c?x=%41&y';
  it.each([
    [U, '@method', 'get'],
    [U, '@target-uri', U],
    [U, '@authority', 'localhost:8080'],
    [U, '@scheme', 'http'],
    [U, '@path', '/a%20b/../c'],
    [U, '@query', '?x=%41&y'],
    [U, '@request-target', '/a%20b/../c?x=%41&y'],
    ['https://Example.com:443', '@authority', 'example.com'],
    ['https://Example.com:443', '@path', '/'],
    ['https://Example.com:443', '@query', '?'],
    ['https://Example.com:443', '@request-target', '/'],
    ['http://[::1]:80/p?', '@authority', '[::1]'],
    ['http://[::1]:80/p?', '@query', '?'],
  ])('derives from %s %s', (uri, comp, value) => {
    expect(base(uri, [comp])).toEqual([`"${comp}": ${value}`]);
  });

  it('trims field values and joins repeated ones', () => {
    const headers = { 'x-a': [' one ', '\ttwo'], 'x-b': '', 'X-C': 'upper-cased key' };
    const expected = ['"x-a": one, two', '"x-b": ', '"x-c": upper-cased key'];
    expect(base('http://h/', ['x-a', 'x-b', 'x-c'], headers)).toEqual(expected);
  });

  it.each([
    [['x-missing'], 'missing-header'],
    [['@method', '@method'], 'bad-component'],
    [['@status'], 'bad-component'],
    [['Content-Type'], 'bad-component'],
    [['x-latin'], 'bad-value'],
  ])('rejects %j with %s', (comps, code) => {
    const req = { method: 'GET', targetUri: 'http://h/', headers: { 'x-latin': 'caf\u00e9' } };
    const expected = expect.objectContaining({ name: 'SignatureError', code });
    expect(() => buildSignatureBase(req, comps, {})).toThrow(expected);
  });
});

describe('requiredComponentsFor', () => {
  it('adds content-digest and x-idempotency-key except on revoke', () => {
    const base = ['@method', '@target-uri', 'authorization', 'x-client-id'];
    const o = { method: 'POST', hasBody: true, hasIdempotencyKey: true };
    const full = [...base, 'content-digest', 'x-idempotency-key'];
    expect(requiredComponentsFor({ ...o, isRevoke: false })).toEqual(full);
    expect(requiredComponentsFor({ ...o, isRevoke: true })).toEqual(base);
    const bare = { ...o, hasBody: false, hasIdempotencyKey: false, isRevoke: false };
    expect(requiredComponentsFor(bare)).toEqual(base);
  });
});

const KEY_ID = 'staging-service-ed25519';
const keys = crypto.generateKeyPairSync('ed25519');
const otherKeys = crypto.generateKeyPairSync('ed25519');
// The spec's sample list of covered components.
const SAMPLE = ['content-type', 'content-digest', 'content-length', 'authorization', 'x-client-id'];
SAMPLE.push('x-idempotency-key', '@method', '@target-uri', '@path', '@query');
const BODY = '{"firstName":"Ada","phone":"+254700000001"}';
const URL_ = 'http://localhost:8080/v1/customers?page=1';
const HEADERS = {
  'content-type': 'application/json',
  'content-digest': computeContentDigest(BODY),
  'content-length': String(Buffer.byteLength(BODY)),
  authorization: 'Bearer eyJhbGciOiJIUzI1NiJ9.e30.sig',
  'x-client-id': 'org_0123456789abcdef0123456789abcdef',
  'x-idempotency-key': '3f0f1d7e-8a5c-4a51-9d6e-2f7b9c0a1b2c',
};
const SHAPE = { method: 'POST', hasBody: true, hasIdempotencyKey: true };
const REQUIRED = requiredComponentsFor({ ...SHAPE, isRevoke: false });
const resolveKey = (id: string) =>
  id === KEY_ID ? { publicKey: keys.publicKey, alg: 'ed25519' as const } : undefined;

describe('interop with http-message-signatures', () => {
  it('accepts a request signed by the third-party library over the sample list', async () => {
    const now = Math.floor(Date.now() / 1000);
    const signed = await httpbis.signMessage(
      {
        key: createSigner(keys.privateKey, 'ed25519', KEY_ID),
        fields: SAMPLE,
        params: ['created', 'expires', 'keyid'],
        paramValues: { created: new Date(now * 1000), expires: new Date((now + 300) * 1000) },
      },
      { method: 'POST', url: URL_, headers: { ...HEADERS } },
    );
    const h = signed.headers as Record<string, string>;
    const res = verifyRequestSignature({
      req: { method: 'POST', targetUri: URL_, headers: h },
      signatureInputHeader: h['Signature-Input'],
      signatureHeader: h.Signature,
      resolveKey,
      now,
      requiredComponents: REQUIRED,
    });
    expect(res).toEqual({ ok: true, keyId: KEY_ID, label: 'sig' });
  });

  it('our signature verifies with the third-party verifier', async () => {
    const req = { method: 'POST', targetUri: URL_, headers: HEADERS };
    const out = signRequest({
      req,
      components: SAMPLE,
      keyId: KEY_ID,
      privateKey: keys.privateKey,
      nonce: 'n-1',
    });
    const message = {
      method: 'POST',
      url: URL_,
      headers: { ...HEADERS, 'signature-input': out.signatureInput, signature: out.signature },
    };
    const config = {
      keyLookup: async (p: { keyid?: string }) =>
        p.keyid === KEY_ID
          ? { id: KEY_ID, algs: ['ed25519'], verify: createVerifier(keys.publicKey, 'ed25519') }
          : null,
      requiredFields: SAMPLE,
      requiredParams: ['created', 'expires', 'keyid'],
      maxAge: 300,
    };
    expect(await httpbis.verifyMessage(config, message)).toBe(true);
    const tampered = { ...message, headers: { ...message.headers, 'x-client-id': 'org_other' } };
    expect(await httpbis.verifyMessage(config, tampered).catch(() => false)).not.toBe(true);
  });
});

describe('verifyRequestSignature policy', () => {
  const NOW = 1_750_000_000;
  const pem = keys.privateKey.export({ format: 'pem', type: 'pkcs8' }) as string;
  type Case = { components?: string[]; created?: number; expires?: number; keyId?: string };
  const signed = (c: Case = {}) => {
    const req = { method: 'POST', targetUri: URL_, headers: HEADERS };
    const { keyId = KEY_ID, components = SAMPLE, created = NOW, expires } = c;
    const s = signRequest({ req, components, keyId, privateKey: pem, created, expires });
    return { req, signatureInputHeader: s.signatureInput, signatureHeader: s.signature };
  };
  const s0 = signed();
  const check = (over: Partial<VerifyRequestOptions> = {}) =>
    verifyRequestSignature({ ...s0, resolveKey, now: NOW, requiredComponents: REQUIRED, ...over });
  const hdr = (h: Record<string, string | undefined>) => ({
    req: { ...s0.req, headers: { ...HEADERS, ...h } },
  });
  const inp = (f: (s: string) => string) => ({ signatureInputHeader: f(s0.signatureInputHeader) });
  const REVOKE = requiredComponentsFor({ ...SHAPE, hasBody: false, isRevoke: true });
  const second = signRequest({ req: s0.req, components: SAMPLE, keyId: KEY_ID, privateKey: pem, label: 'b' });

  it('accepts a valid request', () => {
    expect(check()).toEqual({ ok: true, keyId: KEY_ID, label: 'sig1' });
  });

  const [BAD, ONE, MALFORMED_INPUT] = [
    'bad signature',
    'expected exactly one signature',
    'malformed Signature-Input',
  ];
  it.each<[string, Partial<VerifyRequestOptions>, string]>([
    ['other path', { req: { ...s0.req, targetUri: `${URL_}&x=1` } }, BAD],
    ['other method', { req: { ...s0.req, method: 'PUT' } }, BAD],
    ['other method case', { req: { ...s0.req, method: 'post' } }, BAD],
    ['other body digest', hdr({ 'content-digest': computeContentDigest('{}') }), BAD],
    ['other client id', hdr({ 'x-client-id': 'org_x' }), BAD],
    ['expired', signed({ created: NOW - 200, expires: NOW - 1 }), 'expired'],
    ['future created', signed({ created: NOW + 31 }), 'not yet valid'],
    ['created too old', signed({ created: NOW - 301, expires: NOW }), 'created too old'],
    ['window too long', signed({ expires: NOW + 301 }), 'validity window too long'],
    [
      'no x-client-id',
      signed({ components: SAMPLE.filter((c) => c !== 'x-client-id') }),
      'missing component x-client-id',
    ],
    [
      'forbidden component on revoke',
      {
        ...signed({ components: [...REVOKE, 'content-type'] }),
        requiredComponents: REVOKE,
        forbiddenComponents: REVOKE_FORBIDDEN_COMPONENTS,
      },
      'component content-type not allowed',
    ],
    ['covered header absent', hdr({ 'content-length': undefined }), 'header content-length not present'],
    [
      'two signatures, bad then good',
      { signatureInputHeader: [second.signatureInput, s0.signatureInputHeader] },
      ONE,
    ],
    ['label mismatch', { signatureHeader: s0.signatureHeader.replace('sig1=', 'sig2=') }, ONE],
    ['no headers', { signatureInputHeader: undefined, signatureHeader: undefined }, ONE],
    ['bad base64', { signatureHeader: 'sig1=:!!!:' }, 'malformed Signature'],
    ['signature not bytes', { signatureHeader: 'sig1=abc' }, 'malformed Signature'],
    ['short signature', { signatureHeader: 'sig1=:AAAA:' }, BAD],
    ['unparsable input', { signatureInputHeader: 'sig1=("@method"' }, MALFORMED_INPUT],
    ['input not a list', { signatureInputHeader: 'sig1="x"' }, MALFORMED_INPUT],
    ['component parameter', inp((s) => s.replace('"@query"', '"@query";req')), MALFORMED_INPUT],
    ['duplicate component', inp((s) => s.replace('"@query"', '"@path"')), MALFORMED_INPUT],
    [
      'created not an integer',
      inp((s) => s.replace(/created=\d+/, 'created="1"')),
      'missing created or expires',
    ],
    ['unsupported alg', inp((s) => `${s};alg="rsa-pss-sha512"`), 'unsupported alg'],
    ['unknown keyid', signed({ keyId: 'other-key' }), 'unknown keyid'],
    ['wrong key', { resolveKey: () => ({ publicKey: otherKeys.publicKey, alg: 'ed25519' }) }, BAD],
  ])('rejects %s', (_name, over, expected) => {
    const r = check(over);
    expect(r.ok ? 'ok' : r.reason).toBe(expected);
  });

  it('returns the server base once it could be built', () => {
    const r = check({ req: { ...s0.req, method: 'PUT' } });
    expect(!r.ok && r.base?.startsWith('"content-type": application/json\n')).toBe(true);
    expect(!r.ok && r.base?.includes('\n"@method": PUT\n')).toBe(true);
    expect(check({ signatureHeader: 'sig1=:!!!:' })).not.toHaveProperty('base');
  });

  it('accepts alg="ed25519", any label and a revoke signature without forbidden components', () => {
    const req = { method: 'POST', targetUri: 'http://localhost:8080/v1/oauth/revoke', headers: HEADERS };
    const params = { created: NOW, expires: NOW + 300, keyid: KEY_ID, alg: 'ed25519' };
    const { base, signatureParams } = buildSignatureBase(req, REVOKE, params);
    const sig = crypto.sign(null, Buffer.from(base), keys.privateKey).toString('base64');
    const over = { req, requiredComponents: REVOKE, forbiddenComponents: REVOKE_FORBIDDEN_COMPONENTS };
    const r = check({
      ...over,
      signatureInputHeader: `my-s=${signatureParams}`,
      signatureHeader: `my-s=:${sig}:`,
    });
    expect(r).toEqual({ ok: true, keyId: KEY_ID, label: 'my-s' });
  });

  it('never throws on hostile header values', () => {
    const junk = ['', ',', 'sig1=', 'sig1=()', 'sig1=(1);created=1', 'sig1=("@x");created=1;expires=2', 'é'];
    for (const signatureInputHeader of [...junk, 'a=:=:', 'sig1=("\\\\")']) {
      for (const signatureHeader of junk) {
        expect(() => check({ signatureInputHeader, signatureHeader })).not.toThrow();
      }
    }
  });
});

describe('signature headers in canonical form', () => {
  const NOW = 1_750_000_000;
  const pem = keys.privateKey.export({ format: 'pem', type: 'pkcs8' }) as string;
  const req = { method: 'POST', targetUri: URL_, headers: HEADERS };
  const sdk = (components: string[], extra: { nonce?: string; label?: string } = {}) =>
    signRequest({ req, components, keyId: KEY_ID, privateKey: pem, created: NOW, ...extra });

  /** structured-headers' reading of a dictionary with exactly one member, or undefined. */
  const onlyMember = (value: string) => {
    try {
      const dict = parseDictionary(value);
      const [entry] = dict;
      return dict.size === 1 ? entry : undefined;
    } catch {
      return undefined;
    }
  };
  const library = (value: string) => {
    const entry = onlyMember(value);
    if (!entry || !Array.isArray(entry[1][0])) return undefined;
    const list = entry[1] as InnerList;
    return { label: entry[0], list, serialized: serializeInnerList(list) };
  };
  const librarySignature = (value: string) => {
    const entry = onlyMember(value);
    if (!entry || !(entry[1][0] instanceof ArrayBuffer)) return undefined;
    return { label: entry[0], bytes: Buffer.from(entry[1][0]), params: entry[1][1].size };
  };
  /** Whatever the fast reading accepts, structured-headers reads alike and writes back unchanged. */
  const agrees = (value: string) => {
    const fast = readCanonicalSignatureInput(value);
    if (fast === undefined) return true;
    const slow = library(value);
    expect(slow, value).toBeDefined();
    expect(fast, value).toEqual(slow);
    expect(fast.serialized, value).toBe(slow?.serialized);
    expect(`${fast.label}=${fast.serialized}`).toBe(value);
    return false;
  };
  const agreesSignature = (value: string) => {
    const fast = readCanonicalSignature(value);
    if (fast === undefined) return true;
    expect(librarySignature(value), value).toEqual({ ...fast, params: 0 });
    return false;
  };

  it('reads every header the SDK writes without the general parser, as structured-headers does', () => {
    const sets = [SAMPLE, REQUIRED, ['@method', '@target-uri', 'authorization', 'x-client-id'], []];
    for (const components of sets) {
      for (const extra of [{}, { nonce: 'n-1;x=2 y' }, { label: 'my-sig.2' }]) {
        const { signatureInput, signature } = sdk(components, extra);
        expect(readCanonicalSignatureInput(signatureInput), signatureInput).toBeDefined();
        expect(agrees(signatureInput)).toBe(false);
        expect(readCanonicalSignature(signature), signature).toBeDefined();
        expect(agreesSignature(signature)).toBe(false);
      }
    }
    // RFC 9421's own example (B.2.6) is canonical too.
    expect(agrees(V.rfc9421.b26.signatureInput)).toBe(false);
    expect(agreesSignature(V.rfc9421.b26.signature)).toBe(false);
  });

  it.each([
    ['leading zero', 'sig1=("@method");created=0123'],
    ['negative zero', 'sig1=("@method");created=-0'],
    ['sixteen digits', 'sig1=("@method");created=1234567890123456'],
    ['a decimal', 'sig1=("@method");created=1.5'],
    ['an escaped string', 'sig1=("@method");keyid="a\\"b"'],
    ['a boolean parameter', 'sig1=("@method");created=1;flag'],
    ['a token parameter', 'sig1=("@method");alg=ed25519'],
    ['a repeated parameter', 'sig1=("@method");created=1;created=2'],
    ['a parameter on an item', 'sig1=("@query";req);created=1'],
    ['two members', 'sig1=("@method");created=1, sig2=("@method");created=1'],
    ['a space after the bracket', 'sig1=( "@method");created=1'],
    ['two spaces between items', 'sig1=("@method"  "@path");created=1'],
    ['a space before a parameter', 'sig1=("@method"); created=1'],
    ['leading white space', ' sig1=("@method");created=1'],
    ['an upper-case key', 'Sig1=("@method");created=1'],
    ['a member without a value', 'sig1;created=1'],
    ['a non-ASCII character', 'sig1=("@méthod");created=1'],
    ['a trailing comma', 'sig1=("@method");created=1,'],
  ])('leaves a Signature-Input with %s to structured-headers', (_name, value) => {
    expect(readCanonicalSignatureInput(value)).toBeUndefined();
  });

  it.each([
    ['no padding', 'sig1=:AAAAAA:'],
    ['too much padding', 'sig1=:A===:'],
    ['padding inside', 'sig1=:AA=A:'],
    ['a parameter', 'sig1=:AAAA:;x=1'],
    ['two members', 'sig1=:AAAA:, sig2=:AAAA:'],
    ['a bad character', 'sig1=:AA-A:'],
  ])('leaves a Signature with %s to structured-headers', (_name, value) => {
    expect(readCanonicalSignature(value)).toBeUndefined();
  });

  it('agrees with structured-headers on 30,000 mutations of real headers', () => {
    // A seeded generator, so that a failure repeats.
    let seed = 0x9e3779b9;
    const next = (n: number) => {
      seed = (Math.imul(seed ^ (seed >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0;
      return seed % n;
    };
    const alphabet = ' \t"\\;=,()-.*:0123456789aAz@é+/';
    const mutate = (value: string) => {
      let out = value;
      for (let edits = 1 + next(3); edits > 0; edits--) {
        const at = next(out.length + 1);
        const ch = alphabet[next(alphabet.length)]!;
        const op = next(3);
        out =
          op === 0
            ? out.slice(0, at) + ch + out.slice(at)
            : op === 1
              ? out.slice(0, at) + out.slice(at + 1)
              : out.slice(0, at) + ch + out.slice(at + 1);
      }
      return out;
    };
    const seeds = [
      sdk(SAMPLE, { nonce: 'abc' }),
      sdk(['@method', 'x-client-id']),
      { signatureInput: 'a=("x" "y");created=0;expires=-12;keyid="k"', signature: 'a=:AAA=:' },
    ];
    let fastInputs = 0;
    let fastSignatures = 0;
    for (let i = 0; i < 30_000; i++) {
      const { signatureInput, signature } = seeds[i % seeds.length]!;
      if (!agrees(mutate(signatureInput))) fastInputs++;
      if (!agreesSignature(mutate(signature))) fastSignatures++;
    }
    // Some mutations stay canonical (a digit for a digit, a letter in a string), so both paths ran.
    expect(fastInputs).toBeGreaterThan(1000);
    expect(fastSignatures).toBeGreaterThan(1000);
  });

  it('still verifies a signature whose Signature-Input is valid but not canonical', () => {
    const { signatureInput, signature } = sdk(SAMPLE);
    const spaced = signatureInput.replace('("', '( "').replace('"@method" ', '"@method"  ');
    expect(readCanonicalSignatureInput(spaced)).toBeUndefined();
    const result = verifyRequestSignature({
      req,
      signatureInputHeader: spaced,
      signatureHeader: signature,
      resolveKey,
      now: NOW,
      requiredComponents: REQUIRED,
    });
    expect(result).toEqual({ ok: true, keyId: KEY_ID, label: 'sig1' });
  });
});
