import type { ExchangeRecord } from './outcome.ts';

export type TokenResult =
  | { ok: true; token: string; exchanges: ExchangeRecord[] }
  | { ok: false; detail: string; exchanges: ExchangeRecord[] };

/** One token request's answer: the token and its stated lifetime, or why there is none. */
export type FetchedToken =
  | { ok: true; token: string; lifetimeSeconds: number; exchanges: ExchangeRecord[] }
  | { ok: false; detail: string; exchanges: ExchangeRecord[] };

/**
 * A provider's bearer token, provider-neutral: fetched on first use, reused until `margin` before
 * its lifetime runs out (the lifetime is trusted however short), one refresh at a time (callers
 * arriving during a refresh wait for it and get no exchange records of their own).
 */
export class BearerTokenCache {
  #current: { token: string; refreshAt: number } | null = null;
  #inflight: Promise<TokenResult> | null = null;

  constructor(
    private readonly fetchToken: () => Promise<FetchedToken>,
    private readonly now: () => number,
    private readonly marginSeconds: number,
  ) {}

  async get(): Promise<TokenResult> {
    if (this.#current && this.now() < this.#current.refreshAt) {
      return { ok: true, token: this.#current.token, exchanges: [] };
    }
    if (this.#inflight) return { ...(await this.#inflight), exchanges: [] };
    this.#inflight = this.#refresh().finally(() => {
      this.#inflight = null;
    });
    return this.#inflight;
  }

  /** Forgets `token` if it is still the cached one (the provider called it invalid). */
  drop(token: string): void {
    if (this.#current?.token === token) this.#current = null;
  }

  async #refresh(): Promise<TokenResult> {
    const fetched = await this.fetchToken();
    if (!fetched.ok) return fetched;
    const lifetime = fetched.lifetimeSeconds;
    const margin = Math.min(this.marginSeconds, lifetime / 2);
    this.#current = { token: fetched.token, refreshAt: this.now() + (lifetime - margin) * 1000 };
    return { ok: true, token: fetched.token, exchanges: fetched.exchanges };
  }
}
