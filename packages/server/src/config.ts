import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { isIpOrCidr } from './lib/ip-allowlist.ts';
import { isEd25519PrivateKeyPem } from './lib/keys.ts';
import {
  AIRTEL_ENV_SHAPE,
  type AirtelSettings,
  airtelSettingsFrom,
} from './services/payments/providers/airtel/settings.ts';
import type { MpesaConfig } from './services/payments/providers/mpesa/config.ts';
import type { MtnConfig } from './services/payments/providers/mtn/config.ts';
import { MTN_ENV_SHAPE, mtnSettingsFrom } from './services/payments/providers/mtn/settings.ts';

const rateLimitSpec = z
  .string()
  .regex(/^\d+\/\d+s$/, 'must look like 300/60s')
  .transform((value) => {
    const [points, seconds] = value.slice(0, -1).split('/').map(Number) as [number, number];
    return { points, durationSeconds: seconds };
  })
  .refine((v) => v.points > 0 && v.durationSeconds > 0, 'limit and window must be positive');

/** `true` or `false`, nothing else (a typo must not silently mean off). */
const flag = z.enum(['true', 'false'], { error: 'must be true or false' }).transform((v) => v === 'true');
const port = z.coerce.number().int().min(0).max(65535);
const positiveInt = z.coerce.number().int().positive();

/** TRUST_PROXY: false, true, or a comma list of addresses/CIDR ranges (never a hop count: Fastify ignores those). */
const trustProxy = z.string().transform((value, ctx): boolean | string[] => {
  if (value === 'false' || value === '') return false;
  if (value === 'true') return true;
  const entries = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (entries.some((e) => /^\d+$/.test(e))) {
    ctx.addIssue({ code: 'custom', message: 'hop counts are not supported; give addresses or CIDR ranges' });
    return z.NEVER;
  }
  // Checked here: Fastify's proxy-addr would otherwise throw a stack trace at start.
  const bad = entries.find((e) => !isIpOrCidr(e) && !PROXY_ADDR_NAMES.has(e));
  if (bad !== undefined) {
    ctx.addIssue({ code: 'custom', message: `'${bad}' is not an address or CIDR range` });
    return z.NEVER;
  }
  return entries;
});

/**
 * WEBHOOKS_CA_FILE, read and parsed at start: a wrong path stopped the start with a stack when the
 * worker read it, and a file that holds no certificate was taken in silence (Node's TLS context
 * accepts it), every delivery then failing its TLS check.
 */
const caFile = z.string().refine((file) => {
  try {
    new X509Certificate(readFileSync(file));
    return true;
  } catch {
    return false;
  }
}, 'must name a readable PEM certificate file');

/** The names proxy-addr understands besides addresses and ranges. */
const PROXY_ADDR_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/** A URL of one of the given schemes (z.url alone takes `localhost:5432/db` as scheme `localhost:`). */
const urlOf = (protocol: RegExp, schemes: string) => z.url({ protocol, error: `must be a ${schemes} URL` });

/** A comma list of addresses or CIDR ranges (the callback allowlists). */
const ipList = z.string().transform((value, ctx): string[] => {
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
});

const nonBlank = z.string().trim().min(1, 'must not be blank');

/** The webhook key is parsed here, so a bad one stops the start with one line, not a stack trace. */
const ed25519PrivateKey = z.string().refine(isEd25519PrivateKeyPem, {
  message: 'must be an Ed25519 private key in PEM',
});

export const configSchema = z.object({
  PORT: port.default(8080),
  HOST: z.string().default('0.0.0.0'),
  ADMIN_PORT: port.default(8081),
  ADMIN_HOST: z.string().default('127.0.0.1'),
  ADMIN_TOKEN: z.string().min(24, 'must be at least 24 characters').optional(),
  APP_ENV: z.enum(['sandbox', 'production']).default('sandbox'),
  DATA_DIR: z.string().default('./data'),
  DATABASE_URL: urlOf(/^postgres(ql)?$/, 'postgres://').optional(),
  /** Connections each instance may open to DATABASE_URL (docs/scaling.md: instances × this < max_connections). */
  DATABASE_POOL_SIZE: positiveInt.max(1000, 'must be at most 1000').default(10),
  REDIS_URL: urlOf(/^rediss?$/, 'redis:// or rediss://').optional(),
  PUBLIC_BASE_URL: urlOf(/^https?$/, 'http:// or https://').optional(),
  TRUST_PROXY: trustProxy.default(false),
  /** The most a client may take to send a whole request, headers and body (then 408 and closed). */
  REQUEST_TIMEOUT_MS: positiveInt
    .min(500, 'must be at least 500')
    .max(600_000, 'must be at most 600000')
    .default(30_000),
  JWT_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
  WEBHOOK_SIGNING_KEY: ed25519PrivateKey.optional(),
  WEBHOOK_KEY_GENERATION: positiveInt.default(2),
  /** Outbound webhooks (docs/webhooks.md): off by default, as the spec says they are not live. */
  WEBHOOKS_PREVIEW: flag.default(false),
  /** Tests and local rehearsal only: deliver to private and loopback addresses. Refused in production. */
  WEBHOOKS_ALLOW_PRIVATE_TARGETS: flag.default(false),
  /** Tests and local rehearsal only: a PEM file of extra CAs receivers may present. Refused in production. */
  WEBHOOKS_CA_FILE: caFile.optional(),
  /** Webhook delivery (docs/webhooks.md, Delivery): how often each instance's worker looks for due deliveries. */
  WEBHOOK_WORKER_INTERVAL_MS: positiveInt.default(200),
  WEBHOOK_WORKER_BATCH: positiveInt.max(100, 'must be at most 100').default(20),
  /** How long a claimed delivery is held; past it another instance takes it over. Keep above the timeout. */
  WEBHOOK_LEASE_SECONDS: positiveInt.default(60),
  /** Deadline of one attempt, from connect to the response's status line. */
  WEBHOOK_TIMEOUT_MS: positiveInt.default(10_000),
  /** Retry delay after the n-th failed attempt: uniform in [0, min(max, base·2^(n-1))). */
  WEBHOOK_BACKOFF_BASE_MS: positiveInt.default(5_000),
  WEBHOOK_BACKOFF_MAX_MS: positiveInt.default(14_400_000),
  /** A delivery is retried until this long after it was created, then FAILED (3 days). */
  WEBHOOK_RETRY_WINDOW_SECONDS: positiveInt.default(259_200),
  PROVIDER_CALLBACK_SECRET: z.string().min(16, 'must be at least 16 characters').optional(),
  RATE_LIMIT_GLOBAL: rateLimitSpec.prefault('300/60s'),
  RATE_LIMIT_TOKEN: rateLimitSpec.prefault('10/900s'),
  /** Provider callbacks under their right path token, per source address (product.md). */
  PROVIDER_CALLBACK_RATE_LIMIT: rateLimitSpec.prefault('6000/60s'),
  IDEMPOTENCY_TTL_SECONDS: positiveInt.default(86_400),
  /** How long a request's in-progress lock holds before a crashed request's key can be taken over. */
  IDEMPOTENCY_LOCK_SECONDS: positiveInt.default(60),
  USSD_SESSION_TTL_SECONDS: positiveInt.default(180),
  SANDBOX_SETTLE_MS: z.coerce.number().int().min(0).default(3000),
  /** The payment pipeline (docs/payments.md, Pipeline). */
  PAYMENT_WORKER_INTERVAL_MS: positiveInt.default(500),
  /** Delay before this instance's worker first runs (operators: a slow start; tests: a crash window). */
  PAYMENT_WORKER_START_DELAY_MS: z.coerce.number().int().min(0).default(0),
  PAYMENT_WORKER_BATCH: positiveInt.max(100, 'must be at most 100').default(10),
  PAYMENT_LEASE_SECONDS: positiveInt.default(60),
  PAYMENT_MAX_ATTEMPTS: positiveInt.default(8),
  PAYMENT_BACKOFF_BASE_MS: positiveInt.default(1000),
  PAYMENT_BACKOFF_MAX_MS: positiveInt.default(300_000),
  PAYMENT_MAX_PENDING_SECONDS: positiveInt.default(3600),
  PAYMENT_BREAKER_THRESHOLD: positiveInt.default(5),
  PAYMENT_BREAKER_COOLDOWN_MS: positiveInt.default(30_000),
  // M-Pesa (Daraja): all of MPESA_REQUIRED or none (docs/payments.md, Configuration).
  MPESA_CONSUMER_KEY: nonBlank.optional(),
  MPESA_CONSUMER_SECRET: nonBlank.optional(),
  MPESA_SHORTCODE: z
    .string()
    .regex(/^\d{5,7}$/, 'must be a 5 to 7 digit shortcode')
    .optional(),
  MPESA_PASSKEY: nonBlank.optional(),
  MPESA_B2C_SHORTCODE: z
    .string()
    .regex(/^\d{5,7}$/, 'must be a 5 to 7 digit shortcode')
    .optional(),
  MPESA_INITIATOR_NAME: nonBlank.optional(),
  MPESA_SECURITY_CREDENTIAL: nonBlank.optional(),
  /** Unset: Safaricom's production base in production, its sandbox base in sandbox. */
  MPESA_BASE_URL: urlOf(/^https?$/, 'http:// or https://').optional(),
  /** The path token of the callback routes: unguessable, and safe in a URL path without escaping. */
  MPESA_CALLBACK_TOKEN: z
    .string()
    .regex(/^[A-Za-z0-9_-]{32,128}$/, 'must be 32 to 128 characters of A-Z, a-z, 0-9, _ and -')
    .optional(),
  MPESA_CALLBACK_ALLOWED_IPS: ipList.optional(),
  /** How long after Daraja accepted a request the reconciliation sweep waits before it queries. */
  MPESA_RECONCILE_AFTER_SECONDS: positiveInt.max(86_400, 'must be at most 86400').default(120),
  /** Client deadline of every Daraja call but the token (which gets at most 10 s); default 15 s. */
  MPESA_REQUEST_TIMEOUT_MS: positiveInt.max(120_000, 'must be at most 120000').default(15_000),
  // MTN MoMo: all of MTN_REQUIRED or none (docs/payments-mtn.md).
  ...MTN_ENV_SHAPE,
  // Airtel Money: all of AIRTEL_REQUIRED or none (docs/payments-airtel.md).
  ...AIRTEL_ENV_SHAPE,
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** `auto`: readable lines (pino-pretty) on a terminal, JSON lines otherwise. */
  LOG_FORMAT: z.enum(['auto', 'json', 'pretty']).default('auto'),
});

export type RawConfig = z.output<typeof configSchema>;

/** The M-Pesa settings once complete: the adapter's config plus what the routes and registry need. */
export type MpesaSettings = MpesaConfig & {
  /** Empty: no source-IP check (the path token and the confirming query are the defences). */
  callbackAllowedIps: string[];
  reconcileAfterMs: number;
};

export type Config = RawConfig & {
  PUBLIC_BASE_URL: string;
  /** Set when every MPESA_REQUIRED variable is; unset: M-Pesa is not configured. */
  mpesa?: MpesaSettings;
  /** Set when every MTN_REQUIRED variable is; unset: MTN MoMo is not configured. */
  mtn?: MtnConfig;
  /** Set when every AIRTEL_REQUIRED variable is; unset: Airtel Money is not configured. */
  airtel?: AirtelSettings;
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

/** Secrets production must be given; sandbox generates and keeps them in DATA_DIR. */
const PRODUCTION_SECRETS = [
  'DATABASE_URL',
  'ADMIN_TOKEN',
  'JWT_SECRET',
  'WEBHOOK_SIGNING_KEY',
  'PROVIDER_CALLBACK_SECRET',
  'PUBLIC_BASE_URL',
] as const;

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join('\n'));
  }
}

/** localhost, 127.0.0.0/8 or ::1: a host only this machine reaches. */
function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}

/** Parses the environment once; every bad variable becomes one line naming it. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = configSchema.safeParse(cleaned);
  const problems = new Map<string, string>();
  for (const issue of parsed.error?.issues ?? []) {
    const name = String(issue.path[0] ?? 'environment');
    if (!problems.has(name)) problems.set(name, issue.message);
  }
  // Missing production secrets are reported with the other problems, so one start names them all.
  if ((parsed.data?.APP_ENV ?? cleaned.APP_ENV) === 'production') {
    for (const name of PRODUCTION_SECRETS) {
      if (cleaned[name] === undefined) problems.set(name, 'required when APP_ENV=production');
    }
    // Rehearsal settings that would let a partner aim deliveries at our own network.
    if (cleaned.WEBHOOKS_ALLOW_PRIVATE_TARGETS === 'true') {
      problems.set('WEBHOOKS_ALLOW_PRIVATE_TARGETS', 'not allowed when APP_ENV=production');
    }
    if (cleaned.WEBHOOKS_CA_FILE !== undefined)
      problems.set('WEBHOOKS_CA_FILE', 'not allowed when APP_ENV=production');
    // Every provider is handed callback URLs under it (MTN requires HTTPS); plain HTTP only for a
    // go-live rehearsal against the fakes on one machine.
    const base = parsed.data?.PUBLIC_BASE_URL;
    if (base && new URL(base).protocol === 'http:' && !isLoopbackHost(new URL(base).hostname))
      problems.set(
        'PUBLIC_BASE_URL',
        'must be https:// when APP_ENV=production (providers call back on it), unless its host is a loopback address',
      );
  }
  // All or none, in either environment: a partial M-Pesa configuration is a mistake, never a choice.
  const givenMpesa = MPESA_REQUIRED.filter((name) => cleaned[name] !== undefined);
  if (givenMpesa.length > 0) {
    for (const name of MPESA_REQUIRED) {
      if (cleaned[name] === undefined)
        problems.set(name, `required with the other M-Pesa settings (${givenMpesa.join(', ')} set)`);
    }
  }
  const publicBaseUrl = parsed.data?.PUBLIC_BASE_URL ?? `http://localhost:${parsed.data?.PORT ?? 8080}`;
  // The other providers check their own sets (all or none) and name each problem on its own line.
  const settingsOf = <T>(from: () => T | undefined): T | undefined => {
    if (!parsed.success) return undefined;
    try {
      return from();
    } catch (error) {
      for (const line of String((error as Error).message).split('\n')) {
        const at = line.indexOf(': ');
        problems.set(at > 0 ? line.slice(0, at) : 'environment', at > 0 ? line.slice(at + 2) : line);
      }
      return undefined;
    }
  };
  const mtn = settingsOf(() => mtnSettingsFrom(parsed.data!, publicBaseUrl));
  const airtel = settingsOf(() => airtelSettingsFrom(parsed.data!, publicBaseUrl));
  if (problems.size > 0 || !parsed.success) {
    throw new ConfigError([...problems].map(([name, message]) => `${name}: ${message}`));
  }
  const config = parsed.data;
  return {
    ...config,
    PUBLIC_BASE_URL: publicBaseUrl,
    ...(givenMpesa.length > 0 ? { mpesa: mpesaSettings(config, publicBaseUrl) } : {}),
    ...(mtn ? { mtn } : {}),
    ...(airtel ? { airtel } : {}),
  };
}

function mpesaSettings(config: RawConfig, publicBaseUrl: string): MpesaSettings {
  // Checked complete by loadConfig before this is called.
  const required = (value: string | undefined) => value as string;
  return {
    baseUrl: config.MPESA_BASE_URL ?? DARAJA_BASE_URLS[config.APP_ENV],
    consumerKey: required(config.MPESA_CONSUMER_KEY),
    consumerSecret: required(config.MPESA_CONSUMER_SECRET),
    shortcode: required(config.MPESA_SHORTCODE),
    passkey: required(config.MPESA_PASSKEY),
    b2cShortcode: required(config.MPESA_B2C_SHORTCODE),
    initiatorName: required(config.MPESA_INITIATOR_NAME),
    securityCredential: required(config.MPESA_SECURITY_CREDENTIAL),
    callbackBaseUrl: `${publicBaseUrl.replace(/\/+$/, '')}${DARAJA_CALLBACK_PATH}`,
    callbackToken: required(config.MPESA_CALLBACK_TOKEN),
    callbackAllowedIps: config.MPESA_CALLBACK_ALLOWED_IPS ?? [],
    reconcileAfterMs: config.MPESA_RECONCILE_AFTER_SECONDS * 1000,
    timeouts: {
      tokenMs: Math.min(10_000, config.MPESA_REQUEST_TIMEOUT_MS),
      requestMs: config.MPESA_REQUEST_TIMEOUT_MS,
    },
  };
}
