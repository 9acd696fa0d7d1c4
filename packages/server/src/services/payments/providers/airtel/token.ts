import { z } from 'zod';
import { sendHttp } from '../http-exchange.ts';
import { BearerTokenCache, type FetchedToken } from '../token-cache.ts';
import type { AirtelConfig } from './settings.ts';

export const AIRTEL_SECRET_KEYS: ReadonlySet<string> = new Set([
  'client_secret',
  'access_token',
  'pin',
  'Authorization',
  'authorization',
  'x-key',
  'x-signature',
  'hash',
]);

const tokenAnswer = z.object({
  access_token: z.string().min(1),
  // A string ("180") in Airtel's documentation, a number in other copies: both are read.
  expires_in: z.union([
    z.number().positive(),
    z
      .string()
      .regex(/^\d+(\.\d+)?$/)
      .transform(Number),
  ]),
});
const tokenError = z.object({ error: z.string(), error_description: z.string().optional() });

/** One token request: `POST /auth/oauth2/token` with a JSON body (not a form, not Basic auth). */
export async function fetchAirtelToken(
  config: AirtelConfig,
  fetchImpl?: typeof fetch,
): Promise<FetchedToken> {
  const { answer, record } = await sendHttp({
    provider: 'AIRTEL',
    operation: 'token',
    method: 'POST',
    url: `${config.baseUrl.replace(/\/+$/, '')}/auth/oauth2/token`,
    headers: { accept: '*/*' },
    body: {
      client_id: config.clientId,
      client_secret: config.clientSecret,
      grant_type: 'client_credentials',
    },
    timeoutMs: config.timeouts?.tokenMs ?? 10_000,
    secretKeys: AIRTEL_SECRET_KEYS,
    fetch: fetchImpl,
  });
  const exchanges = [record];
  if (!answer.ok)
    return { ok: false, detail: `token request ${answer.failure}: ${answer.detail}`, exchanges };
  const parsed = answer.status === 200 ? tokenAnswer.safeParse(answer.json) : null;
  if (!parsed?.success) {
    const error = tokenError.safeParse(answer.json);
    const why = error.success
      ? `${error.data.error} ${error.data.error_description ?? ''}`.trim()
      : 'unexpected body';
    return { ok: false, detail: `token request HTTP ${answer.status}: ${why}`, exchanges };
  }
  return { ok: true, token: parsed.data.access_token, lifetimeSeconds: parsed.data.expires_in, exchanges };
}

/** The adapter's token: `expires_in` trusted however short (180 s in Airtel's docs), refreshed 5 s early. */
export function airtelTokenCache(config: AirtelConfig, now: () => number, fetchImpl?: typeof fetch) {
  return new BearerTokenCache(
    () => fetchAirtelToken(config, fetchImpl),
    now,
    config.tokenRefreshMarginSeconds ?? 5,
  );
}
