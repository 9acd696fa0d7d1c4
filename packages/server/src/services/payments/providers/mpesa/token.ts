import { z } from 'zod';
import { sendHttp } from '../http-exchange.ts';
import { BearerTokenCache, type FetchedToken } from '../token-cache.ts';
import { errorEnvelopeOf } from './envelope.ts';
import type { MpesaConfig } from './settings.ts';

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

export type { TokenResult } from '../token-cache.ts';

/**
 * One adapter's OAuth token: fetched on first use, reused until `margin` before `expires_in`, one
 * refresh at a time (callers arriving during a refresh wait for it). Each token request invalidates
 * the previous token at Daraja, so minting per call would break concurrent calls.
 */
export class TokenCache extends BearerTokenCache {
  constructor(config: MpesaConfig, now: () => number, fetchImpl?: typeof fetch) {
    super(() => fetchDarajaToken(config, fetchImpl), now, config.tokenRefreshMarginSeconds ?? 300);
  }
}

/** One Daraja token request: the token and its `expires_in`, or why there is none. */
async function fetchDarajaToken(config: MpesaConfig, fetchImpl?: typeof fetch): Promise<FetchedToken> {
  const basic = Buffer.from(`${config.consumerKey}:${config.consumerSecret}`).toString('base64');
  const { answer, record } = await sendHttp({
    provider: 'MPESA',
    operation: 'token',
    method: 'GET',
    url: `${config.baseUrl.replace(/\/+$/, '')}/oauth/v1/generate?grant_type=client_credentials`,
    headers: { authorization: `Basic ${basic}` },
    timeoutMs: config.timeouts?.tokenMs ?? 10_000,
    secretKeys: MPESA_SECRET_KEYS,
    fetch: fetchImpl,
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
  return { ok: true, token: parsed.data.access_token, lifetimeSeconds: parsed.data.expires_in, exchanges };
}
