import { z } from 'zod';
import { isIpOrCidr } from '../../../../lib/ip-allowlist.ts';
import type { MtnConfig } from './config.ts';

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
  MTN_CALLBACK_ALLOWED_IPS: z
    .string()
    .transform((value, ctx): string[] => {
      const entries = value
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      const bad = entries.find((e) => !isIpOrCidr(e));
      if (bad !== undefined) {
        ctx.addIssue({ code: 'custom', message: `'${bad}' is not an address or CIDR range` });
        return z.NEVER;
      }
      return entries;
    })
    .optional(),
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
