import { z } from 'zod';
import { sendHttp } from '../http-exchange.ts';
import type { ExchangeRecord } from '../outcome.ts';
import type { MpesaConfig } from './config.ts';
import { errorEnvelopeOf } from './envelope.ts';

export const MPESA_SECRET_KEYS: ReadonlySet<string> = new Set([
  'Password',
  'SecurityCredential',
  'Authorization',
  'access_token',
]);

const tokenAnswer = z.object({
  access_token: z.string().min(1),
  // A number in the official sample, a string ("3599") in some copies.
  expires_in: z.union([z.number(), z.string().regex(/^\d+$/).transform(Number)]),
});

export type TokenResult =
  | { ok: true; token: string; exchanges: ExchangeRecord[] }
  | { ok: false; detail: string; exchanges: ExchangeRecord[] };

/**
 * One adapter's OAuth token: fetched on first use, reused until `margin` before `expires_in`, one
 * refresh at a time (callers arriving during a refresh wait for it). Each token request invalidates
 * the previous token at Daraja, so minting per call would break concurrent calls.
 */
export class TokenCache {
  #current: { token: string; refreshAt: number } | null = null;
  #inflight: Promise<TokenResult> | null = null;

  constructor(
    private readonly config: MpesaConfig,
    private readonly now: () => number,
    private readonly fetchImpl?: typeof fetch,
  ) {}

  async get(): Promise<TokenResult> {
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

  /** Forgets `token` if it is still the cached one (Daraja called it invalid). */
  drop(token: string): void {
    if (this.#current?.token === token) this.#current = null;
  }

  async #fetch(): Promise<TokenResult> {
    const basic = Buffer.from(`${this.config.consumerKey}:${this.config.consumerSecret}`).toString('base64');
    const { answer, record } = await sendHttp({
      provider: 'MPESA',
      operation: 'token',
      method: 'GET',
      url: `${this.config.baseUrl.replace(/\/+$/, '')}/oauth/v1/generate?grant_type=client_credentials`,
      headers: { authorization: `Basic ${basic}` },
      timeoutMs: this.config.timeouts?.tokenMs ?? 10_000,
      secretKeys: MPESA_SECRET_KEYS,
      fetch: this.fetchImpl,
    });
    const exchanges = [record];
    if (!answer.ok)
      return { ok: false, detail: `token request ${answer.failure}: ${answer.detail}`, exchanges };
    const parsed = answer.status === 200 ? tokenAnswer.safeParse(answer.json) : null;
    if (!parsed?.success) {
      const error = errorEnvelopeOf(answer.json);
      const why = error ? `${error.errorCode} ${error.errorMessage}` : 'unexpected body';
      return { ok: false, detail: `token request HTTP ${answer.status}: ${why}`, exchanges };
    }
    const lifetime = parsed.data.expires_in;
    const margin = Math.min(this.config.tokenRefreshMarginSeconds ?? 300, lifetime / 2);
    this.#current = { token: parsed.data.access_token, refreshAt: this.now() + (lifetime - margin) * 1000 };
    return { ok: true, token: parsed.data.access_token, exchanges };
  }
}
