import type { TokenResponse } from '@partner-api/contract';

/** A bearer token and when this client stops using it (ms since the epoch, client clock). */
export type CachedToken = { token: string; tokenId?: string; expiresAt: number };

/** Where a token outlives the process (the partner CLI keeps it next to its profile). */
export interface TokenStore {
  load(): CachedToken | undefined | Promise<CachedToken | undefined>;
  save(token: CachedToken | undefined): void | Promise<void>;
}

/** Tokens are dropped this long before they expire, so no request leaves with a token about to die. */
export const TOKEN_REFRESH_MARGIN_MS = 60_000;

/**
 * Fetches the token lazily, shares one fetch between concurrent callers, and reuses it until
 * TOKEN_REFRESH_MARGIN_MS before expiry (spec, Limits rule 5: the token endpoint allows 10 per
 * 15 minutes per IP, so a token per request would lock a partner out).
 */
export class TokenManager {
  private cached: CachedToken | undefined;
  private loaded = false;
  private inflight: Promise<TokenResponse> | undefined;

  constructor(
    private readonly fetchToken: () => Promise<TokenResponse>,
    private readonly store?: TokenStore,
    private readonly now: () => number = Date.now,
  ) {}

  private usable(token: CachedToken | undefined): token is CachedToken {
    return token !== undefined && token.expiresAt - TOKEN_REFRESH_MARGIN_MS > this.now();
  }

  /** The current token, fetching one when there is none or it is about to expire. */
  async get(): Promise<string> {
    if (!this.loaded && this.store) {
      this.loaded = true;
      this.cached ??= (await this.store.load()) ?? undefined;
    }
    if (this.usable(this.cached)) return this.cached.token;
    return (await this.refresh()).token;
  }

  /** Always asks the server for a new token and caches it. */
  refresh(): Promise<TokenResponse> {
    this.inflight ??= (async () => {
      try {
        const response = await this.fetchToken();
        this.cached = {
          token: response.token,
          tokenId: response.tokenId,
          expiresAt: this.now() + response.expiresIn * 1000,
        };
        await this.store?.save(this.cached);
        return response;
      } finally {
        this.inflight = undefined;
      }
    })();
    return this.inflight;
  }

  /** Forgets `token` if it is still the cached one (a concurrent refresh may already have replaced it). */
  async invalidate(token: string): Promise<void> {
    if (this.cached?.token !== token) return;
    this.cached = undefined;
    await this.store?.save(undefined);
  }
}
