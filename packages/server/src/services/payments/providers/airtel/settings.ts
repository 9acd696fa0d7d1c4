import { z } from 'zod';
import { isIpOrCidr } from '../../../../lib/ip-allowlist.ts';
import { airtelPublicKey } from './crypto.ts';
/** RSA padding for the encrypted PIN and for `x-key` (the sources disagree: docs/payments-airtel.md). */
export type RsaPadding = 'pkcs1' | 'oaep-sha1' | 'oaep-sha256';

/** How the callback `hash` is computed (the canonical input is not documented; docs/payments-airtel.md). */
export type CallbackHashInput = 'transaction' | 'body';

/** Everything the Airtel adapter needs; settings.ts fills it from the AIRTEL_ variables. */
export type AirtelConfig = {
  /** `https://openapiuat.airtel.africa`, `https://openapi.airtel.africa`, a country host, or the fake. */
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  /** ISO 3166 alpha-2 of the wallet (`X-Country`), e.g. `KE`. */
  country: string;
  /** ISO 4217 of the wallet (`X-Currency`), e.g. `KES`. */
  currency: string;
  /** The country's calling code without `+` (`254`): stripped from the msisdn, which Airtel takes without it. */
  callingCode: string;
  /** Decimals Airtel takes in an amount for this wallet: 0 (KES, UGX, …) or 2 (ZMW, …). */
  amountDecimals: 0 | 2;
  /**
   * Public base of our callback route, without the token, e.g.
   * `https://api.example.com/v1/payments/callbacks/airtel`. Airtel takes the callback URL in its
   * portal, not per request: register `{callbackBaseUrl}/{callbackToken}` there.
   */
  callbackBaseUrl: string;
  callbackToken: string;
  /** The portal's callback private key when "Callback with authentication" is on; unset: no `hash` check. */
  callbackHmacKey?: string;
  /** What the `hash` covers; default `transaction` (HMAC over JSON of the `transaction` object). */
  callbackHashInput?: CallbackHashInput;
  /** USSD push path version: `v1` (unsigned, the default) or `v2` (message signing). */
  collectionApi?: 'v1' | 'v2';
  /** Disbursement path version: `v1` (the default), `v2`, or `v3` (message signing). */
  disbursementApi?: 'v1' | 'v2' | 'v3';
  /** The disbursement wallet's 4-digit PIN (encrypted with `rsaPublicKey` before it is sent). */
  disbursementPin?: string;
  /**
   * Airtel's RSA public key (PEM, or the portal's bare base64 SPKI): PIN encryption and `x-key`.
   * Unset: fetched once from `GET /v1/rsa/encryption-keys`.
   */
  rsaPublicKey?: string;
  /** PIN encryption padding; default `pkcs1` (docs/payments-airtel.md, "Decisions"). */
  pinPadding?: RsaPadding;
  /** `x-key` padding; default `pkcs1`. */
  signingKeyPadding?: RsaPadding;
  /** Disbursement `transaction.type` for v2/v3: `B2C` (the default) for subscribers. */
  disbursementType?: 'B2C' | 'B2B';
  /** How long after acceptance the sweep waits before it enquires; default 180 s (Airtel: ≥ 3 minutes). */
  reconcileAfterMs?: number;
  timeouts?: {
    /** Token request; default 10 s. */
    tokenMs?: number;
    /** Every other call; default 15 s. */
    requestMs?: number;
  };
  /** Refresh this long before `expires_in` runs out; default 5 s (at most half the lifetime). */
  tokenRefreshMarginSeconds?: number;
};

/** The URL to register in Airtel's portal (one per application; collections and payouts alike). */
export function callbackUrl(config: Pick<AirtelConfig, 'callbackBaseUrl' | 'callbackToken'>): string {
  return `${config.callbackBaseUrl.replace(/\/+$/, '')}/${encodeURIComponent(config.callbackToken)}`;
}

/** Calling codes of the countries Airtel Money serves. */
export const AIRTEL_CALLING_CODES: Readonly<Record<string, string>> = {
  KE: '254',
  UG: '256',
  TZ: '255',
  RW: '250',
  ZM: '260',
  MW: '265',
  NG: '234',
  CD: '243',
  CG: '242',
  GA: '241',
  TD: '235',
  NE: '227',
  MG: '261',
  SC: '248',
};

/** Currencies taken with two decimals by default (the rest: whole units). */
export const TWO_DECIMAL_CURRENCIES: ReadonlySet<string> = new Set(['ZMW', 'USD', 'SCR', 'MWK', 'NGN']);

/** Where our Airtel callback route lives; the URL registered in Airtel's portal adds `/{token}`. */
export const AIRTEL_CALLBACK_PATH = '/v1/payments/callbacks/airtel';

export const AIRTEL_BASE_URLS = {
  production: 'https://openapi.airtel.africa',
  sandbox: 'https://openapiuat.airtel.africa',
} as const;

const nonBlank = z.string().trim().min(1, 'must not be blank');
const padding = z.enum(['pkcs1', 'oaep-sha1', 'oaep-sha256']);
const seconds = z.coerce.number().int().positive();

/**
 * The AIRTEL_ environment variables, every one optional (config.ts spreads this into its schema).
 * Each field's output has its input's type, so parsing twice gives the same values.
 */
export const AIRTEL_ENV_SHAPE = {
  /** Unset: Airtel's production base in production, its UAT base otherwise. */
  AIRTEL_BASE_URL: z.url({ protocol: /^https?$/, error: 'must be a http:// or https:// URL' }).optional(),
  AIRTEL_CLIENT_ID: nonBlank.optional(),
  AIRTEL_CLIENT_SECRET: nonBlank.optional(),
  /** ISO 3166 alpha-2 of the wallet: X-Country. */
  AIRTEL_COUNTRY: z
    .string()
    .refine((c) => Object.hasOwn(AIRTEL_CALLING_CODES, c), {
      message: `must be one of ${Object.keys(AIRTEL_CALLING_CODES).join(', ')}`,
    })
    .optional(),
  /** ISO 4217 of the wallet: X-Currency; the only currency this provider serves. */
  AIRTEL_CURRENCY: z
    .string()
    .regex(/^[A-Z]{3}$/, 'must be a three-letter currency code')
    .optional(),
  /** Decimals in an amount: 0 or 2; unset: 2 for ZMW, USD, SCR, MWK, NGN and 0 otherwise. */
  AIRTEL_AMOUNT_DECIMALS: z.coerce
    .number()
    .refine((n) => n === 0 || n === 2, 'must be 0 or 2')
    .optional(),
  /** The path token of the callback route: unguessable, safe in a URL path. */
  AIRTEL_CALLBACK_TOKEN: z
    .string()
    .regex(/^[A-Za-z0-9_-]{32,128}$/, 'must be 32 to 128 characters of A-Z, a-z, 0-9, _ and -')
    .optional(),
  /** The portal's callback private key ("Callback with authentication"); unset: no hash check. */
  AIRTEL_CALLBACK_HMAC_KEY: nonBlank.optional(),
  /** What the hash covers: `transaction` (default) or `body` (the body without `hash`). */
  AIRTEL_CALLBACK_HASH_INPUT: z.enum(['transaction', 'body']).optional(),
  AIRTEL_CALLBACK_ALLOWED_IPS: z
    .string()
    .refine(
      (v) =>
        v
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)
          .every(isIpOrCidr),
      'must be a comma list of addresses or CIDR ranges',
    )
    .optional(),
  /** The disbursement wallet's 4-digit PIN (sent RSA-encrypted). */
  AIRTEL_DISBURSEMENT_PIN: z
    .string()
    .regex(/^\d{4}$/, 'must be 4 digits')
    .optional(),
  /** Airtel's RSA public key: PEM or the portal's bare base64; unset: fetched from /v1/rsa/encryption-keys. */
  AIRTEL_RSA_PUBLIC_KEY: z
    .string()
    .refine((key) => {
      try {
        airtelPublicKey(key.replaceAll('\\n', '\n'));
        return true;
      } catch {
        return false;
      }
    }, 'must be an RSA public key (PEM or base64 SPKI)')
    .optional(),
  AIRTEL_PIN_PADDING: padding.optional(),
  AIRTEL_SIGNING_KEY_PADDING: padding.optional(),
  /** `v2` signs each push (x-signature, x-key). */
  AIRTEL_COLLECTION_API: z.enum(['v1', 'v2']).optional(),
  /** `v3` signs each payout. */
  AIRTEL_DISBURSEMENT_API: z.enum(['v1', 'v2', 'v3']).optional(),
  /** How long after acceptance the sweep waits before it enquires; Airtel advises ≥ 180 s. */
  AIRTEL_RECONCILE_AFTER_SECONDS: seconds.max(86_400, 'must be at most 86400').optional(),
  /** Client deadline of every Airtel call but the token (at most 10 s); default 15 s. */
  AIRTEL_REQUEST_TIMEOUT_MS: seconds.max(120_000, 'must be at most 120000').optional(),
};

/** Airtel is configured by all of these or by none of them. */
export const AIRTEL_REQUIRED = [
  'AIRTEL_CLIENT_ID',
  'AIRTEL_CLIENT_SECRET',
  'AIRTEL_COUNTRY',
  'AIRTEL_CURRENCY',
  'AIRTEL_CALLBACK_TOKEN',
  'AIRTEL_DISBURSEMENT_PIN',
] as const;

/** The Airtel settings once complete: the adapter's config plus what the route needs. */
export type AirtelSettings = AirtelConfig & {
  reconcileAfterMs: number;
  /** Empty: no source-IP check (Airtel publishes no list). */
  callbackAllowedIps: string[];
};

const envSchema = z.object(AIRTEL_ENV_SHAPE);

/**
 * The Airtel settings from the environment (raw strings or config.ts's parsed values):
 * undefined when no AIRTEL_REQUIRED variable is set; an Error naming the missing (or bad)
 * variables when only some are.
 */
export function airtelSettingsFrom(
  env: Readonly<Record<string, unknown>>,
  publicBaseUrl: string,
): AirtelSettings | undefined {
  const given = Object.fromEntries(
    Object.keys(AIRTEL_ENV_SHAPE)
      .filter((name) => env[name] !== undefined && env[name] !== '')
      .map((name) => [name, env[name]]),
  );
  const present = AIRTEL_REQUIRED.filter((name) => given[name] !== undefined);
  if (present.length === 0) return undefined;
  const missing = AIRTEL_REQUIRED.filter((name) => given[name] === undefined);
  const parsed = envSchema.safeParse(given);
  const problems = [
    ...missing.map((name) => `${name}: required with the other Airtel settings (${present.join(', ')} set)`),
    ...(parsed.error?.issues.map((i) => `${String(i.path[0])}: ${i.message}`) ?? []),
  ];
  if (problems.length > 0 || !parsed.success) throw new Error(problems.join('\n'));
  const e = parsed.data;
  const country = e.AIRTEL_COUNTRY!;
  const currency = e.AIRTEL_CURRENCY!;
  const requestMs = e.AIRTEL_REQUEST_TIMEOUT_MS ?? 15_000;
  const production = env.APP_ENV === 'production';
  return {
    baseUrl: e.AIRTEL_BASE_URL ?? AIRTEL_BASE_URLS[production ? 'production' : 'sandbox'],
    clientId: e.AIRTEL_CLIENT_ID!,
    clientSecret: e.AIRTEL_CLIENT_SECRET!,
    country,
    currency,
    callingCode: AIRTEL_CALLING_CODES[country]!,
    amountDecimals: (e.AIRTEL_AMOUNT_DECIMALS ?? (TWO_DECIMAL_CURRENCIES.has(currency) ? 2 : 0)) as 0 | 2,
    callbackBaseUrl: `${publicBaseUrl.replace(/\/+$/, '')}${AIRTEL_CALLBACK_PATH}`,
    callbackToken: e.AIRTEL_CALLBACK_TOKEN!,
    ...(e.AIRTEL_CALLBACK_HMAC_KEY ? { callbackHmacKey: e.AIRTEL_CALLBACK_HMAC_KEY } : {}),
    callbackHashInput: e.AIRTEL_CALLBACK_HASH_INPUT ?? 'transaction',
    callbackAllowedIps: (e.AIRTEL_CALLBACK_ALLOWED_IPS ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    collectionApi: e.AIRTEL_COLLECTION_API ?? 'v1',
    disbursementApi: e.AIRTEL_DISBURSEMENT_API ?? 'v1',
    disbursementPin: e.AIRTEL_DISBURSEMENT_PIN!,
    // A PEM in one environment line may carry literal `\n`.
    ...(e.AIRTEL_RSA_PUBLIC_KEY ? { rsaPublicKey: e.AIRTEL_RSA_PUBLIC_KEY.replaceAll('\\n', '\n') } : {}),
    pinPadding: e.AIRTEL_PIN_PADDING ?? 'pkcs1',
    signingKeyPadding: e.AIRTEL_SIGNING_KEY_PADDING ?? 'pkcs1',
    reconcileAfterMs: (e.AIRTEL_RECONCILE_AFTER_SECONDS ?? 180) * 1000,
    timeouts: { tokenMs: Math.min(10_000, requestMs), requestMs },
  };
}
