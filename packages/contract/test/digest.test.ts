import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { computeContentDigest, type DigestAlgorithm, verifyContentDigest } from '../src/digest.ts';

type Example = {
  name: string;
  alg: DigestAlgorithm;
  content: string;
  value: string;
  expectMismatch?: boolean;
};
const V = JSON.parse(readFileSync(new URL('./fixtures/rfc9421-vectors.json', import.meta.url), 'utf8'));
const examples: Example[] = V.contentDigest.examples;
const HELLO = '{"hello": "world"}';

describe('RFC 9530 Content-Digest', () => {
  it.each(examples.filter((e) => !e.expectMismatch))('computes and verifies: $name', (e) => {
    expect(computeContentDigest(e.content, e.alg)).toBe(e.value);
    expect(computeContentDigest(Buffer.from(e.content), e.alg)).toBe(e.value);
    expect(verifyContentDigest(e.value, Buffer.from(e.content))).toEqual({ ok: true });
  });

  it('rejects the §2 sha-256 member, which digests the brotli-encoded bytes', () => {
    const e = examples.find((x) => x.expectMismatch)!;
    expect(verifyContentDigest(e.value, e.content)).toEqual({ ok: false, reason: 'digest mismatch' });
  });

  it('defaults to sha-512', () => {
    expect(computeContentDigest(HELLO)).toBe(computeContentDigest(HELLO, 'sha-512'));
    expect(computeContentDigest(HELLO)).toMatch(/^sha-512=:[A-Za-z0-9+/]{86}==:$/);
  });

  it('requires every known member to match and ignores unknown ones', () => {
    const s512 = computeContentDigest(HELLO);
    const s256 = computeContentDigest(HELLO, 'sha-256');
    expect(verifyContentDigest(`${s256}, ${s512}`, HELLO)).toEqual({ ok: true });
    expect(verifyContentDigest(`md5=:AAAA:, unixsum=1, ${s512}`, HELLO)).toEqual({ ok: true });
    const wrong256 = computeContentDigest('other', 'sha-256');
    expect(verifyContentDigest(`${s512}, ${wrong256}`, HELLO)).toEqual({
      ok: false,
      reason: 'digest mismatch',
    });
    expect(verifyContentDigest(s512, `${HELLO} `)).toEqual({ ok: false, reason: 'digest mismatch' });
    expect(verifyContentDigest('sha-512=:AAAA:', HELLO)).toEqual({ ok: false, reason: 'digest mismatch' });
  });

  it('needs at least one supported algorithm', () => {
    const none = { ok: false, reason: 'no supported digest algorithm' };
    expect(verifyContentDigest('md5=:AAAA:, sha=:AAAA:', HELLO)).toEqual(none);
    expect(verifyContentDigest(undefined, HELLO)).toEqual(none);
    expect(verifyContentDigest('', '')).toEqual(none);
  });

  it.each(['sha-512', 'sha-512=abc', 'sha-512=:!!:', 'SHA-512=:AAAA:', 'sha-512=("x")', 'sha-512=:AAAA:,'])(
    'rejects malformed %j',
    (value) => {
      expect(verifyContentDigest(value, HELLO)).toEqual({ ok: false, reason: 'malformed Content-Digest' });
    },
  );
});
