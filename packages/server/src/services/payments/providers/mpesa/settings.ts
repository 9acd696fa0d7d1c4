import { z } from 'zod';
import { ipListSetting } from '../../../../lib/ip-allowlist.ts';

const nonBlank = z.string().trim().min(1, 'must not be blank');
const shortcode = z
  .string()
  .regex(/^\d{5,7}$/, 'must be a 5 to 7 digit shortcode')
  .optional();
const positiveInt = z.coerce.number().int().positive();

/**
 * The M-Pesa (Daraja) environment variables, every one optional here: config.ts spreads them into
 * its schema, checks all of MPESA_REQUIRED or none, and `mpesaSettingsFrom` builds the settings.
 */
export const MPESA_ENV_SHAPE = {
  MPESA_CONSUMER_KEY: nonBlank.optional(),
  MPESA_CONSUMER_SECRET: nonBlank.optional(),
  MPESA_SHORTCODE: shortcode,
  MPESA_PASSKEY: nonBlank.optional(),
  MPESA_B2C_SHORTCODE: shortcode,
  MPESA_INITIATOR_NAME: nonBlank.optional(),
  MPESA_SECURITY_CREDENTIAL: nonBlank.optional(),
  /** Unset: Safaricom's production base in production, its sandbox base in sandbox. */
  MPESA_BASE_URL: z.url({ protocol: /^https?$/, error: 'must be a http:// or https:// URL' }).optional(),
  /** The path token of the callback routes: unguessable, and safe in a URL path without escaping. */
  MPESA_CALLBACK_TOKEN: z
    .string()
    .regex(/^[A-Za-z0-9_-]{32,128}$/, 'must be 32 to 128 characters of A-Z, a-z, 0-9, _ and -')
    .optional(),
  MPESA_CALLBACK_ALLOWED_IPS: ipListSetting.optional(),
  /** How long after Daraja accepted a request the reconciliation sweep waits before it queries. */
  MPESA_RECONCILE_AFTER_SECONDS: positiveInt.max(86_400, 'must be at most 86400').default(120),
  /** Client deadline of every Daraja call but the token (which gets at most 10 s); default 15 s. */
  MPESA_REQUEST_TIMEOUT_MS: positiveInt.max(120_000, 'must be at most 120000').default(15_000),
};

export type MpesaEnv = { [K in keyof typeof MPESA_ENV_SHAPE]: z.output<(typeof MPESA_ENV_SHAPE)[K]> } & {
  APP_ENV: 'sandbox' | 'production';
};

/** M-Pesa is configured by all of these or by none of them. */
export const MPESA_REQUIRED = [
  'MPESA_CONSUMER_KEY',
  'MPESA_CONSUMER_SECRET',
  'MPESA_SHORTCODE',
  'MPESA_PASSKEY',
  'MPESA_B2C_SHORTCODE',
  'MPESA_INITIATOR_NAME',
  'MPESA_SECURITY_CREDENTIAL',
  'MPESA_CALLBACK_TOKEN',
] as const;

export const DARAJA_BASE_URLS = {
  production: 'https://api.safaricom.co.ke',
  sandbox: 'https://sandbox.safaricom.co.ke',
} as const;

/** Where our Daraja callback routes live; the path avoids the word "mpesa" (docs/payments.md). */
export const DARAJA_CALLBACK_PATH = '/v1/payments/callbacks/daraja';

/** Everything the Daraja client needs; `mpesaSettingsFrom` fills it from the MPESA_ variables. */
export type MpesaConfig = {
  /** `https://sandbox.safaricom.co.ke`, `https://api.safaricom.co.ke`, or the fake's URL. */
  baseUrl: string;
  consumerKey: string;
  consumerSecret: string;
  /** The STK (Lipa na M-Pesa Online) shortcode: paybill, or the till's head-office number. */
  shortcode: string;
  passkey: string;
  /** `CustomerPayBillOnline` (paybill, the default) or `CustomerBuyGoodsOnline` (till). */
  transactionType?: 'CustomerPayBillOnline' | 'CustomerBuyGoodsOnline';
  /** STK PartyB: the till number for BuyGoods; defaults to `shortcode`. */
  partyB?: string;
  /** B2C (and Transaction Status) PartyA. */
  b2cShortcode: string;
  initiatorName: string;
  /** The initiator password encrypted with Safaricom's certificate (RSA PKCS#1 v1.5, base64). */
  securityCredential: string;
  /**
   * Public base of our callback routes, without the token, e.g.
   * `https://api.example.com/v1/payments/callbacks/daraja`. Daraja reportedly rejects callback URLs
   * containing the word "mpesa" (docs/payments.md), so keep that word out of it.
   */
  callbackBaseUrl: string;
  /** The unguessable per-deployment path token. */
  callbackToken: string;
  timeouts?: {
    /** OAuth token request; default 10 s. */
    tokenMs?: number;
    /** Every other call; default 15 s. */
    requestMs?: number;
  };
  /** Refresh this long before `expires_in` runs out; default 300 s (at most half the lifetime). */
  tokenRefreshMarginSeconds?: number;
};

/** The callback routes the adapter hands to Daraja: one per kind of body, all under the token. */
export type MpesaCallbackKind = 'stk' | 'b2c-result' | 'b2c-timeout' | 'status-result' | 'status-timeout';

export function callbackUrl(config: MpesaConfig, kind: MpesaCallbackKind): string {
  return `${config.callbackBaseUrl.replace(/\/+$/, '')}/${encodeURIComponent(config.callbackToken)}/${kind}`;
}

/** The M-Pesa settings once complete: the client's config plus what the routes and registry need. */
export type MpesaSettings = MpesaConfig & {
  /** Empty: no source-IP check (the path token and the confirming query are the defences). */
  callbackAllowedIps: string[];
  reconcileAfterMs: number;
};

/**
 * The M-Pesa settings from the parsed variables: undefined when none of MPESA_REQUIRED is set
 * (config.ts has already refused a partial set).
 */
export function mpesaSettingsFrom(env: MpesaEnv, publicBaseUrl: string): MpesaSettings | undefined {
  if (MPESA_REQUIRED.every((name) => env[name] === undefined)) return undefined;
  // Checked complete by config.ts before this is called.
  const required = (value: string | undefined) => value as string;
  return {
    baseUrl: env.MPESA_BASE_URL ?? DARAJA_BASE_URLS[env.APP_ENV],
    consumerKey: required(env.MPESA_CONSUMER_KEY),
    consumerSecret: required(env.MPESA_CONSUMER_SECRET),
    shortcode: required(env.MPESA_SHORTCODE),
    passkey: required(env.MPESA_PASSKEY),
    b2cShortcode: required(env.MPESA_B2C_SHORTCODE),
    initiatorName: required(env.MPESA_INITIATOR_NAME),
    securityCredential: required(env.MPESA_SECURITY_CREDENTIAL),
    callbackBaseUrl: `${publicBaseUrl.replace(/\/+$/, '')}${DARAJA_CALLBACK_PATH}`,
    callbackToken: required(env.MPESA_CALLBACK_TOKEN),
    callbackAllowedIps: env.MPESA_CALLBACK_ALLOWED_IPS ?? [],
    reconcileAfterMs: env.MPESA_RECONCILE_AFTER_SECONDS * 1000,
    timeouts: {
      tokenMs: Math.min(10_000, env.MPESA_REQUEST_TIMEOUT_MS),
      requestMs: env.MPESA_REQUEST_TIMEOUT_MS,
    },
  };
}
