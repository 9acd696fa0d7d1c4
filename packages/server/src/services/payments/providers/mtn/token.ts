import { z } from 'zod';
import { sendHttp } from '../http-exchange.ts';
import type { ExchangeRecord } from '../outcome.ts';
import type { MtnConfig, MtnProduct } from './config.ts';

export const MTN_SECRET_KEYS: ReadonlySet<string> = new Set(['access_token', 'Authorization', 'apiKey']);

const tokenAnswer = z.object({
  access_token: z.string().min(1),
  // An integer in MTN's schema (3600 observed); a numeric string is read too.
  expires_in: z.union([z.number().positive(), z.string().regex(/^\d+$/).transform(Number)]),
});

export type MtnTokenResult =
  | { ok: true; token: string; exchanges: ExchangeRecord[] }
  | { ok: false; detail: string; exchanges: ExchangeRecord[] };

/**
 * One product's access token (`POST /{product}/token/`, Basic apiUser:apiKey and the product's
 * subscription key, no body): fetched on first use, reused until `margin` before `expires_in`, one
 * refresh at a time (callers arriving during a refresh share it).
 */
export class MtnTokenCache {
  #current: { token: string; refreshAt: number } | null = null;
  #inflight: Promise<MtnTokenResult> | null = null;

  constructor(
    private readonly config: MtnConfig,
    private readonly product: MtnProduct,
    private readonly now: () => number,
    private readonly fetchImpl?: typeof fetch,
  ) {}

  async get(): Promise<MtnTokenResult> {
    if (this.#current && this.now() < this.#current.refreshAt) {
      return { ok: true, token: this.#current.token, exchanges: [] };
    }
    if (this.#inflight) {
      const shared = await this.#inflight;
      return { ...shared, exchanges: [] };
    }
    this.#inflight = this.#fetch().finally(() => {
      this.#inflight = null;
    });
    return this.#inflight;
  }

  /** Forgets `token` if it is still the cached one (MTN answered 401 to it). */
  drop(token: string): void {
    if (this.#current?.token === token) this.#current = null;
  }

  async #fetch(): Promise<MtnTokenResult> {
    const credentials = this.config[this.product];
    const basic = Buffer.from(`${credentials.apiUser}:${credentials.apiKey}`).toString('base64');
    const { answer, record } = await sendHttp({
      provider: 'MTN',
      operation: `${this.product}-token`,
      method: 'POST',
      url: `${this.config.baseUrl.replace(/\/+$/, '')}/${this.product}/token/`,
      // No body: MTN answers 400 to a body on /token (its common-errors page).
      headers: { authorization: `Basic ${basic}`, 'ocp-apim-subscription-key': credentials.subscriptionKey },
      timeoutMs: this.config.timeouts?.tokenMs ?? 10_000,
      secretKeys: MTN_SECRET_KEYS,
      fetch: this.fetchImpl,
    });
    const exchanges = [record];
    if (!answer.ok)
      return {
        ok: false,
        detail: `${this.product} token request ${answer.failure}: ${answer.detail}`,
        exchanges,
      };
    const parsed = answer.status === 200 ? tokenAnswer.safeParse(answer.json) : null;
    if (!parsed?.success) {
      const body = answer.json as { error?: unknown; message?: unknown } | undefined;
      const why = String(body?.error ?? body?.message ?? 'unexpected body');
      return { ok: false, detail: `${this.product} token request HTTP ${answer.status}: ${why}`, exchanges };
    }
    const lifetime = parsed.data.expires_in;
    const margin = Math.min(this.config.tokenRefreshMarginSeconds ?? 60, lifetime / 2);
    this.#current = { token: parsed.data.access_token, refreshAt: this.now() + (lifetime - margin) * 1000 };
    return { ok: true, token: parsed.data.access_token, exchanges };
  }
}
