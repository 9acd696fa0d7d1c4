import { createHash, timingSafeEqual } from 'node:crypto';
import { parseDictionary } from 'structured-headers';

/** RFC 9530 algorithms this side computes and checks; any other member of Content-Digest is ignored. */
export type DigestAlgorithm = 'sha-512' | 'sha-256';

const HASH_NAMES: Record<DigestAlgorithm, string> = { 'sha-512': 'sha512', 'sha-256': 'sha256' };

export type DigestResult =
  | { ok: true }
  | { ok: false; reason: 'digest mismatch' | 'malformed Content-Digest' | 'no supported digest algorithm' };

function digestBytes(body: string | Buffer, alg: DigestAlgorithm): Buffer {
  return createHash(HASH_NAMES[alg])
    .update(typeof body === 'string' ? Buffer.from(body, 'utf8') : body)
    .digest();
}

/** `Content-Digest` value for the raw content bytes, e.g. `sha-512=:…==:`. */
export function computeContentDigest(body: string | Buffer, alg: DigestAlgorithm = 'sha-512'): string {
  return `${alg}=:${digestBytes(body, alg).toString('base64')}:`;
}

/**
 * Every member with a known algorithm must match the raw body; at least one known member is required.
 * An absent or empty header has no known member.
 */
export function verifyContentDigest(headerValue: string | undefined, rawBody: Buffer | string): DigestResult {
  let dict: ReturnType<typeof parseDictionary>;
  try {
    dict = parseDictionary(headerValue ?? '');
  } catch {
    return { ok: false, reason: 'malformed Content-Digest' };
  }
  let known = 0;
  for (const [key, member] of dict) {
    if (!Object.hasOwn(HASH_NAMES, key)) continue;
    const value = member[0];
    if (!(value instanceof ArrayBuffer)) return { ok: false, reason: 'malformed Content-Digest' };
    const expected = digestBytes(rawBody, key as DigestAlgorithm);
    const got = Buffer.from(value);
    if (got.length !== expected.length || !timingSafeEqual(got, expected)) {
      return { ok: false, reason: 'digest mismatch' };
    }
    known++;
  }
  return known > 0 ? { ok: true } : { ok: false, reason: 'no supported digest algorithm' };
}
