import { createId, SCOPES, TOKEN_TTL_SECONDS } from '@partner-api/contract';
import { createSigner, createVerifier, TokenError } from 'fast-jwt';

export type TokenClaims = {
  jti: string;
  sub: string; // credential id
  org: string;
  client_id: string;
  scope: string[];
  iat: number;
  exp: number;
};

export type TokenCheck =
  | { ok: true; claims: TokenClaims }
  | { ok: false; reason: 'malformed' | 'expired' | 'invalid' };

/**
 * HS256 with a synchronous HMAC verifier: fast-jwt verifies ~95,000/s per core where jose's
 * WebCrypto path manages ~4,000/s (docs/decisions.md, Stack).
 *
 * A partner sends the same token with every request for an hour, so the verifier keeps what it
 * verified (fast-jwt's own cache, 1,000 tokens, keyed by a hash of the whole token): a token seen
 * before costs one SHA-256 instead of decoding, an HMAC and the claims' checks (~1.9 µs of CPU
 * against ~4.8 µs in a loop: docs/performance.md, "Tokens verified once"). An entry lasts no
 * longer than the token's `exp`, so an expired token is refused as before; failures are not kept.
 * Revocation is not the token's business: the caller check by `jti` follows on every request
 * (plugins/auth.ts).
 */
export function createTokenCodec(secret: string) {
  const sign = createSigner({ key: secret, algorithm: 'HS256' });
  const verify = createVerifier({
    key: secret,
    algorithms: ['HS256'],
    requiredClaims: ['jti', 'sub', 'org', 'client_id', 'exp'],
    cache: true,
  });
  return {
    issue(
      input: { credentialId: string; organizationId: string; clientId: string },
      now = Math.floor(Date.now() / 1000),
    ) {
      const claims: TokenClaims = {
        jti: createId(),
        sub: input.credentialId,
        org: input.organizationId,
        client_id: input.clientId,
        scope: [...SCOPES],
        iat: now,
        exp: now + TOKEN_TTL_SECONDS,
      };
      return { token: sign(claims), claims };
    },
    check(token: string): TokenCheck {
      try {
        return { ok: true, claims: verify(token) as TokenClaims };
      } catch (error) {
        const code = error instanceof TokenError ? error.code : '';
        if (code === TokenError.codes.expired) return { ok: false, reason: 'expired' };
        if (code === TokenError.codes.malformed || code === TokenError.codes.invalidType)
          return { ok: false, reason: 'malformed' };
        return { ok: false, reason: 'invalid' };
      }
    },
  };
}

export type TokenCodec = ReturnType<typeof createTokenCodec>;
