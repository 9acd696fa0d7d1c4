import { z } from 'zod';
import { sendHttp } from '../http-exchange.ts';
import { BearerTokenCache, type FetchedToken } from '../token-cache.ts';
import type { MtnConfig, MtnProduct } from './settings.ts';

export const MTN_SECRET_KEYS: ReadonlySet<string> = new Set(['access_token', 'Authorization', 'apiKey']);

const tokenAnswer = z.object({
  access_token: z.string().min(1),
  // An integer in MTN's schema (3600 observed); a numeric string is read too.
  expires_in: z.union([z.number().positive(), z.string().regex(/^\d+$/).transform(Number)]),
});

export type { TokenResult as MtnTokenResult } from '../token-cache.ts';

/**
 * One product's access token (`POST /{product}/token/`, Basic apiUser:apiKey and the product's
 * subscription key, no body): fetched on first use, reused until `margin` before `expires_in`, one
 * refresh at a time (callers arriving during a refresh share it).
 */
export class MtnTokenCache extends BearerTokenCache {
  constructor(config: MtnConfig, product: MtnProduct, now: () => number, fetchImpl?: typeof fetch) {
    super(() => fetchMtnToken(config, product, fetchImpl), now, config.tokenRefreshMarginSeconds ?? 60);
  }
}

/** One MTN token request for `product`: the token and its `expires_in`, or why there is none. */
async function fetchMtnToken(
  config: MtnConfig,
  product: MtnProduct,
  fetchImpl?: typeof fetch,
): Promise<FetchedToken> {
  const credentials = config[product];
  const basic = Buffer.from(`${credentials.apiUser}:${credentials.apiKey}`).toString('base64');
  const { answer, record } = await sendHttp({
    provider: 'MTN',
    operation: `${product}-token`,
    method: 'POST',
    url: `${config.baseUrl.replace(/\/+$/, '')}/${product}/token/`,
    // No body: MTN answers 400 to a body on /token (its common-errors page).
    headers: { authorization: `Basic ${basic}`, 'ocp-apim-subscription-key': credentials.subscriptionKey },
    timeoutMs: config.timeouts?.tokenMs ?? 10_000,
    secretKeys: MTN_SECRET_KEYS,
    fetch: fetchImpl,
  });
  const exchanges = [record];
  if (!answer.ok)
    return { ok: false, detail: `${product} token request ${answer.failure}: ${answer.detail}`, exchanges };
  const parsed = answer.status === 200 ? tokenAnswer.safeParse(answer.json) : null;
  if (!parsed?.success) {
    const body = answer.json as { error?: unknown; message?: unknown } | undefined;
    const why = String(body?.error ?? body?.message ?? 'unexpected body');
    return { ok: false, detail: `${product} token request HTTP ${answer.status}: ${why}`, exchanges };
  }
  return { ok: true, token: parsed.data.access_token, lifetimeSeconds: parsed.data.expires_in, exchanges };
}
