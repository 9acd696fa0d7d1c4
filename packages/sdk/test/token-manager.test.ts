import type { TokenResponse } from '@partner-api/contract';
import { describe, expect, it } from 'vitest';
import { type CachedToken, TOKEN_REFRESH_MARGIN_MS } from '../src/index.ts';
import { TokenManager } from '../src/token-manager.ts';

function tokenSource() {
  let issued = 0;
  const fetchToken = async (): Promise<TokenResponse> => {
    issued += 1;
    await new Promise((r) => setTimeout(r, 5));
    return { token: `t${issued}`, tokenId: `jti${issued}`, expiresIn: 3600 } as TokenResponse;
  };
  return { fetchToken, issued: () => issued };
}

describe('TokenManager', () => {
  it('fetches lazily and reuses the token until the refresh margin before expiry', async () => {
    const source = tokenSource();
    let now = 1_000_000;
    const tokens = new TokenManager(source.fetchToken, undefined, () => now);
    expect(source.issued()).toBe(0);
    expect(await tokens.get()).toBe('t1');
    now += 3600_000 - TOKEN_REFRESH_MARGIN_MS - 1;
    expect(await tokens.get()).toBe('t1');
    now += 1;
    expect(await tokens.get()).toBe('t2');
    expect(source.issued()).toBe(2);
  });

  it('shares one fetch between concurrent callers', async () => {
    const source = tokenSource();
    const tokens = new TokenManager(source.fetchToken);
    const all = await Promise.all(Array.from({ length: 10 }, () => tokens.get()));
    expect(new Set(all)).toEqual(new Set(['t1']));
    expect(source.issued()).toBe(1);
  });

  it('invalidate forgets only the token it names (a concurrent refresh may have replaced it)', async () => {
    const source = tokenSource();
    const tokens = new TokenManager(source.fetchToken);
    await tokens.get();
    await tokens.refresh();
    await tokens.invalidate('t1');
    expect(await tokens.get()).toBe('t2');
    await tokens.invalidate('t2');
    expect(await tokens.get()).toBe('t3');
  });

  it('loads from and saves to a token store', async () => {
    const source = tokenSource();
    const saved: Array<CachedToken | undefined> = [];
    const store = {
      load: () => ({ token: 'stored', expiresAt: Date.now() + 3600_000 }),
      save: (token: CachedToken | undefined) => {
        saved.push(token);
      },
    };
    const tokens = new TokenManager(source.fetchToken, store);
    expect(await tokens.get()).toBe('stored');
    expect(source.issued()).toBe(0);
    await tokens.invalidate('stored');
    expect(await tokens.get()).toBe('t1');
    expect(saved.map((t) => t?.token)).toEqual([undefined, 't1']);
  });

  it('ignores a stored token that is about to expire', async () => {
    const source = tokenSource();
    const store = { load: () => ({ token: 'stale', expiresAt: Date.now() + 1000 }), save: () => {} };
    expect(await new TokenManager(source.fetchToken, store).get()).toBe('t1');
  });
});
