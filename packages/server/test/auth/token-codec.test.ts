import { TOKEN_TTL_SECONDS } from '@partner-api/contract';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createTokenCodec } from '../../src/services/auth/tokens.ts';

// The codec keeps the tokens it verified (a map keyed by the token): a token seen before must still be
// refused once it has expired, and a token changed by one character must never ride on it.
const input = { credentialId: 'cred_1', organizationId: 'org_1', clientId: 'client_1' };

describe('token codec: verified tokens kept (services/auth/tokens.ts)', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('refuses a token seen before once it has expired', () => {
    vi.useFakeTimers();
    vi.setSystemTime(new Date('2026-11-27T00:00:00Z'));
    const codec = createTokenCodec('s'.repeat(48));
    const { token, claims } = codec.issue(input);
    expect(codec.check(token)).toEqual({ ok: true, claims });
    vi.setSystemTime(new Date(claims.exp * 1000 - 1000));
    expect(codec.check(token)).toEqual({ ok: true, claims });
    vi.setSystemTime(new Date(claims.exp * 1000 + 1000));
    expect(codec.check(token)).toEqual({ ok: false, reason: 'expired' });
    expect(claims.exp - claims.iat).toBe(TOKEN_TTL_SECONDS);
  });

  it('refuses a token whose signature or payload was changed after the genuine one was verified', () => {
    const codec = createTokenCodec('s'.repeat(48));
    const { token } = codec.issue(input);
    expect(codec.check(token).ok).toBe(true);
    const [header, payload, signature] = token.split('.') as [string, string, string];
    const flip = (s: string) => s.slice(0, -2) + (s.at(-2) === 'A' ? 'B' : 'A') + s.slice(-1);
    expect(codec.check(`${header}.${payload}.${flip(signature)}`)).toEqual({ ok: false, reason: 'invalid' });
    expect(codec.check(`${header}.${flip(payload)}.${signature}`).ok).toBe(false);
    expect(codec.check(`${token} `).ok).toBe(false);
    expect(codec.check(token.slice(0, -1)).ok).toBe(false);
    // And the genuine token is still accepted.
    expect(codec.check(token).ok).toBe(true);
  });

  it('still verifies the first token after more tokens than it keeps, and refuses it once expired', () => {
    vi.useFakeTimers();
    vi.setSystemTime(new Date('2026-11-27T00:00:00Z'));
    const codec = createTokenCodec('s'.repeat(48));
    const first = codec.issue(input);
    expect(codec.check(first.token)).toEqual({ ok: true, claims: first.claims });
    for (let i = 0; i < 1200; i++) expect(codec.check(codec.issue(input).token).ok).toBe(true);
    expect(codec.check(first.token)).toEqual({ ok: true, claims: first.claims });
    vi.setSystemTime(new Date(first.claims.exp * 1000 + 1));
    expect(codec.check(first.token)).toEqual({ ok: false, reason: 'expired' });
  });

  it('does not accept a token signed with another secret, even one verified by another codec', () => {
    const ours = createTokenCodec('s'.repeat(48));
    const theirs = createTokenCodec('t'.repeat(48));
    const { token } = theirs.issue(input);
    expect(theirs.check(token).ok).toBe(true);
    expect(ours.check(token)).toEqual({ ok: false, reason: 'invalid' });
  });
});
