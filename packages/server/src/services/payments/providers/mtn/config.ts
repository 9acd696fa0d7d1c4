import { createHash } from 'node:crypto';

/** MTN's products each have their own subscription key, API user and API key (and token). */
export type MtnProduct = 'collection' | 'disbursement';

export type MtnCredentials = {
  /** `Ocp-Apim-Subscription-Key` of this product (the partner portal's profile). */
  subscriptionKey: string;
  /** The API user: a UUID. */
  apiUser: string;
  apiKey: string;
};

/** Everything the MTN MoMo adapter needs; settings.ts fills it from the MTN_ environment variables. */
export type MtnConfig = {
  /** `https://sandbox.momodeveloper.mtn.com`, `https://proxy.momoapi.mtn.com`, or the fake's URL. */
  baseUrl: string;
  /** `X-Target-Environment`: `sandbox`, or `mtn<country>` such as `mtnuganda`. */
  targetEnvironment: string;
  /** ISO 4217 of every amount; the sandbox takes EUR only. */
  currency: string;
  /** The country's dialling code (e.g. `256`): a local `0…` number is read in it. */
  countryCode: string;
  /** ISO 3166 alpha-2 of the target environment (`UG`); unset (the sandbox): any country routes here. */
  country?: string;
  collection: MtnCredentials;
  disbursement: MtnCredentials;
  /**
   * Public base of our callback routes, without the token, e.g.
   * `https://api.example.com/v1/payments/callbacks/mtn`.
   */
  callbackBaseUrl: string;
  /** The unguessable per-deployment path token. */
  callbackToken: string;
  /** Empty or absent: no source-IP check (MTN publishes no list; the token and the query defend). */
  callbackAllowedIps?: string[];
  /** How long after MTN accepted a request the reconciliation sweep waits before it queries. */
  reconcileAfterMs: number;
  timeouts?: {
    /** Token requests; default 10 s. */
    tokenMs?: number;
    /** Every other call; default 15 s. */
    requestMs?: number;
  };
  /** Refresh this long before `expires_in` runs out; default 60 s (at most half the lifetime). */
  tokenRefreshMarginSeconds?: number;
};

/** MTN's callback carries no X-Reference-Id: our route names it, under the token. */
export function mtnCallbackUrl(config: MtnConfig, referenceId: string): string {
  const base = config.callbackBaseUrl.replace(/\/+$/, '');
  return `${base}/${encodeURIComponent(config.callbackToken)}/${encodeURIComponent(referenceId)}`;
}

export const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

/**
 * The `X-Reference-Id` of one of our requests: a UUID of version-4 form derived from our request id
 * (SHA-256), so every retry, after any crash, sends the same reference and MTN answers 409 instead of
 * charging or paying twice. MTN requires a UUID v4 form; our ids are CUIDs, hence the derivation.
 */
export function mtnReferenceId(ourId: string): string {
  const bytes = createHash('sha256').update(`mtn-reference:${ourId}`).digest().subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x40;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
