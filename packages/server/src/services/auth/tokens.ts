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

/** As many tokens as fast-jwt's own cache would keep. */
const MAX_KEPT_TOKENS = 1000;

/**
 * HS256 with a synchronous HMAC verifier: fast-jwt verifies ~95,000/s per core where jose's
 * WebCrypto path manages ~4,000/s (docs/decisions.md, Stack).
 *
 * A partner sends the same token with every request for an hour, so the codec keeps what it
 * verified: a token seen before costs one map lookup instead of decoding, an HMAC and the claims'
 * checks. The map is keyed by the token itself, not by fast-jwt's cache, which keys by a SHA-256 of
 * the token: that hash (an OpenSSL digest looked up by name, the header decoded to choose it) was
 * ~1.2% of a signed GET's CPU, and fast-jwt's cheaper key (the token) warns at every start.
 * Holding tokens in memory gives a heap's reader nothing the signing secret beside them would not
 * (docs/performance.md, "The signed GET"). An entry is used only before the token's `exp`;
 * the oldest goes first when the map is full; failures are not kept. Revocation is not the
 * token's business: the caller check by `jti` follows on every request (plugins/auth.ts).
 */
export function createTokenCodec(secret: string) {
  const sign = createSigner({ key: secret, algorithm: 'HS256' });
  const verify = createVerifier({
    key: secret,
    algorithms: ['HS256'],
    requiredClaims: ['jti', 'sub', 'org', 'client_id', 'exp'],
  });
  const kept = new Map<string, TokenClaims>();
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
      const known = kept.get(token);
      if (known !== undefined) {
        if (known.exp * 1000 > Date.now()) return { ok: true, claims: known };
        kept.delete(token);
      }
      try {
        const claims = verify(token) as TokenClaims;
        if (kept.size >= MAX_KEPT_TOKENS) kept.delete(kept.keys().next().value as string);
        kept.set(token, claims);
        return { ok: true, claims };
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
