import { createHash } from 'node:crypto';
import { z } from 'zod';
import { ipListSetting } from '../../../../lib/ip-allowlist.ts';
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

const nonBlank = z.string().trim().min(1, 'must not be blank');
const uuid = z
  .string()
  .regex(
    /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i,
    'must be a UUID (the API user id)',
  );
const positiveInt = z.coerce.number().int().positive();

/**
 * The MTN MoMo environment variables, all optional here: config.ts spreads them into its schema and
 * `mtnSettingsFrom` says whether MTN is configured (all of MTN_REQUIRED) or not (none of them).
 */
export const MTN_ENV_SHAPE = {
  /** Unset: MTN's sandbox base for target environment `sandbox`, its production proxy otherwise. */
  MTN_BASE_URL: z.url({ protocol: /^https?$/, error: 'must be a http:// or https:// URL' }).optional(),
  /** `sandbox`, or `mtn<country>` (mtnuganda, mtnghana, …): MTN's X-Target-Environment. */
  MTN_TARGET_ENVIRONMENT: z
    .string()
    .regex(/^(sandbox|mtn[a-z]+)$/, 'must be sandbox or mtn<country>, e.g. mtnuganda')
    .optional(),
  /** ISO 4217 of the target environment (UGX, GHS, …); the sandbox takes EUR only. */
  MTN_CURRENCY: z
    .string()
    .regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code such as UGX')
    .optional(),
  /** The country's dialling code; unset: known from MTN_TARGET_ENVIRONMENT (sandbox: 46). */
  MTN_COUNTRY_CODE: z
    .string()
    .regex(/^[1-9]\d{0,2}$/, 'must be a dialling code such as 256')
    .optional(),
  /** ISO 3166 alpha-2 of the country served; unset: known from MTN_TARGET_ENVIRONMENT (sandbox: any). */
  MTN_COUNTRY: z
    .string()
    .regex(/^[A-Z]{2}$/, 'must be an ISO 3166 alpha-2 code such as UG')
    .optional(),
  MTN_COLLECTION_SUBSCRIPTION_KEY: nonBlank.optional(),
  MTN_COLLECTION_API_USER: uuid.optional(),
  MTN_COLLECTION_API_KEY: nonBlank.optional(),
  MTN_DISBURSEMENT_SUBSCRIPTION_KEY: nonBlank.optional(),
  MTN_DISBURSEMENT_API_USER: uuid.optional(),
  MTN_DISBURSEMENT_API_KEY: nonBlank.optional(),
  /** The path token of the callback routes: unguessable, and safe in a URL path without escaping. */
  MTN_CALLBACK_TOKEN: z
    .string()
    .regex(/^[A-Za-z0-9_-]{32,128}$/, 'must be 32 to 128 characters of A-Z, a-z, 0-9, _ and -')
    .optional(),
  MTN_CALLBACK_ALLOWED_IPS: ipListSetting.optional(),
  /** How long after MTN accepted a request the sweep waits before it queries; default 60. */
  MTN_RECONCILE_AFTER_SECONDS: positiveInt.max(86_400, 'must be at most 86400').optional(),
  /** Client deadline of every MTN call but the token (which gets at most 10 s); default 15000. */
  MTN_REQUEST_TIMEOUT_MS: positiveInt.max(120_000, 'must be at most 120000').optional(),
};

export type MtnEnv = { [K in keyof typeof MTN_ENV_SHAPE]?: z.output<(typeof MTN_ENV_SHAPE)[K]> };

/** MTN is configured by all of these or by none of them. */
export const MTN_REQUIRED = [
  'MTN_TARGET_ENVIRONMENT',
  'MTN_CURRENCY',
  'MTN_COLLECTION_SUBSCRIPTION_KEY',
  'MTN_COLLECTION_API_USER',
  'MTN_COLLECTION_API_KEY',
  'MTN_DISBURSEMENT_SUBSCRIPTION_KEY',
  'MTN_DISBURSEMENT_API_USER',
  'MTN_DISBURSEMENT_API_KEY',
  'MTN_CALLBACK_TOKEN',
] as const;

export const MTN_BASE_URLS = {
  sandbox: 'https://sandbox.momodeveloper.mtn.com',
  production: 'https://proxy.momoapi.mtn.com',
} as const;

/** Where our MTN callback routes live, under PUBLIC_BASE_URL. */
export const MTN_CALLBACK_PATH = '/v1/payments/callbacks/mtn';

/**
 * Dialling code and country of the target environments MTN's SDK names. The sandbox serves no one
 * country (its test numbers are +46 733…); `mtnrwanda` is the name used in practice for Rwanda.
 */
export const MTN_TARGET_ENVIRONMENTS: Readonly<Record<string, { dial: string; country?: string }>> = {
  sandbox: { dial: '46' },
  mtnuganda: { dial: '256', country: 'UG' },
  mtnghana: { dial: '233', country: 'GH' },
  mtnivorycoast: { dial: '225', country: 'CI' },
  mtnzambia: { dial: '260', country: 'ZM' },
  mtncameroon: { dial: '237', country: 'CM' },
  mtnbenin: { dial: '229', country: 'BJ' },
  mtncongo: { dial: '242', country: 'CG' },
  mtnswaziland: { dial: '268', country: 'SZ' },
  mtnguineaconakry: { dial: '224', country: 'GN' },
  mtnsouthafrica: { dial: '27', country: 'ZA' },
  mtnliberia: { dial: '231', country: 'LR' },
  mtnrwanda: { dial: '250', country: 'RW' },
};

/**
 * The MTN config from the parsed variables: undefined when none of MTN_REQUIRED is set; an Error
 * naming every missing or contradictory variable when only some are (a partial configuration is a
 * mistake, never a choice).
 */
export function mtnSettingsFrom(env: MtnEnv, publicBaseUrl: string): MtnConfig | undefined {
  const given = MTN_REQUIRED.filter((name) => env[name] !== undefined && env[name] !== '');
  if (given.length === 0) return undefined;
  const problems = MTN_REQUIRED.filter((name) => !given.includes(name)).map(
    (name) => `${name}: required with the other MTN settings (${given.join(', ')} set)`,
  );
  const target = env.MTN_TARGET_ENVIRONMENT;
  const known = target ? MTN_TARGET_ENVIRONMENTS[target] : undefined;
  const countryCode = env.MTN_COUNTRY_CODE ?? known?.dial;
  const country = env.MTN_COUNTRY ?? known?.country;
  if (target && countryCode === undefined)
    problems.push(`MTN_COUNTRY_CODE: required for target environment ${target}`);
  if (target && target !== 'sandbox' && country === undefined)
    problems.push(`MTN_COUNTRY: required for target environment ${target}`);
  if (target === 'sandbox' && env.MTN_CURRENCY && env.MTN_CURRENCY !== 'EUR')
    problems.push(`MTN_CURRENCY: the MTN sandbox takes EUR only, not ${env.MTN_CURRENCY}`);
  if (problems.length > 0) throw new Error(problems.join('\n'));
  const required = (value: string | undefined) => value as string;
  const timeoutMs = env.MTN_REQUEST_TIMEOUT_MS ?? 15_000;
  return {
    baseUrl: env.MTN_BASE_URL ?? (target === 'sandbox' ? MTN_BASE_URLS.sandbox : MTN_BASE_URLS.production),
    targetEnvironment: required(target),
    currency: required(env.MTN_CURRENCY),
    countryCode: required(countryCode),
    ...(country ? { country } : {}),
    collection: {
      subscriptionKey: required(env.MTN_COLLECTION_SUBSCRIPTION_KEY),
      apiUser: required(env.MTN_COLLECTION_API_USER),
      apiKey: required(env.MTN_COLLECTION_API_KEY),
    },
    disbursement: {
      subscriptionKey: required(env.MTN_DISBURSEMENT_SUBSCRIPTION_KEY),
      apiUser: required(env.MTN_DISBURSEMENT_API_USER),
      apiKey: required(env.MTN_DISBURSEMENT_API_KEY),
    },
    callbackBaseUrl: `${publicBaseUrl.replace(/\/+$/, '')}${MTN_CALLBACK_PATH}`,
    callbackToken: required(env.MTN_CALLBACK_TOKEN),
    callbackAllowedIps: env.MTN_CALLBACK_ALLOWED_IPS ?? [],
    reconcileAfterMs: (env.MTN_RECONCILE_AFTER_SECONDS ?? 60) * 1000,
    timeouts: { tokenMs: Math.min(10_000, timeoutMs), requestMs: timeoutMs },
  };
}
