import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { isIpOrCidr } from './lib/ip-allowlist.ts';
import { isEd25519PrivateKeyPem } from './lib/keys.ts';
import { PROVIDER_ENV_SHAPE, PROVIDERS, type ProviderSettings } from './providers.ts';

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

/** The webhook key is parsed here, so a bad one stops the start with one line, not a stack trace. */
const ed25519PrivateKey = z.string().refine(isEd25519PrivateKeyPem, {
  message: 'must be an Ed25519 private key in PEM',
});

/** The issuer printed on reports when the operator names none (README, Configuration). */
export const SANDBOX_PLATFORM = {
  name: 'Partner API Sandbox',
  licence: 'Sandbox: not a licensed intermediary; test records only',
} as const;

export const configSchema = z.object({
  PORT: port.default(8080),
  HOST: z.string().default('0.0.0.0'),
  ADMIN_PORT: port.default(8081),
  /** A console session ends after this many minutes without a request (docs/console.md). */
  CONSOLE_IDLE_MINUTES: positiveInt.max(1440, 'must be at most 1440').default(30),
  /** Failed console sign-ins allowed per operator name and per address within the window (docs/console.md). */
  CONSOLE_SIGN_IN_LIMIT: rateLimitSpec.prefault('5/900s'),
  /** How often the console's request history samples the per-route tally (docs/console.md, Charts). */
  METRICS_SAMPLE_SECONDS: positiveInt.max(3600, 'must be at most 3600').default(60),
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
  /**
   * The investments API (docs/investments.md): instruments, accounts, requests, transactions and
   * reports for partners' own apps. Off by default: every path answers as an unknown route.
   */
  INVESTMENTS_PREVIEW: flag.default(false),
  /** Who issues the investor's reports (docs/investments.md, Reports): printed on every confirmation and statement. */
  PLATFORM_NAME: z.string().max(120, 'must be at most 120 characters').default(SANDBOX_PLATFORM.name),
  /** The platform's licence details as they must appear on a contract note (regulator, licence number). */
  PLATFORM_LICENCE: z.string().max(240, 'must be at most 240 characters').default(SANDBOX_PLATFORM.licence),
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
  /** The investor SMS queue (docs/sms.md, "The queue"): each instance's worker, its lease and retries. */
  SMS_WORKER_INTERVAL_MS: positiveInt.default(1000),
  /** Delay before this instance's SMS worker first runs (tests: a crash window). */
  SMS_WORKER_START_DELAY_MS: z.coerce.number().int().min(0).default(0),
  SMS_LEASE_SECONDS: positiveInt.default(60),
  SMS_MAX_ATTEMPTS: positiveInt.max(100, 'must be at most 100').default(10),
  SMS_BACKOFF_BASE_MS: positiveInt.default(5_000),
  SMS_BACKOFF_MAX_MS: positiveInt.default(600_000),
  /**
   * Orders only in the NSE's continuous session and at a fresh price (docs/market.md, "Orders and
   * market hours"): `enforced`, or `always-open`. Unset: enforced in production, always open in the
   * sandbox (partners test at any hour).
   */
  MARKET_HOURS: z.enum(['enforced', 'always-open'], { error: 'must be enforced or always-open' }).optional(),
  /** During a session, a price older than this is stale: no order executes at it (docs/market.md). */
  PRICE_MAX_AGE_SECONDS: positiveInt.max(86_400, 'must be at most 86400').default(900),
  // Each outside provider's variables: all of its required set or none (src/providers.ts).
  ...PROVIDER_ENV_SHAPE,
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** `auto`: readable lines (pino-pretty) on a terminal, JSON lines otherwise. */
  LOG_FORMAT: z.enum(['auto', 'json', 'pretty']).default('auto'),
});

export type RawConfig = z.output<typeof configSchema>;

export type Config = RawConfig & {
  PUBLIC_BASE_URL: string;
} & ProviderSettings;

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
  // All or none, in either environment: a partial provider configuration is a mistake, never a choice.
  const publicBaseUrl = parsed.data?.PUBLIC_BASE_URL ?? `http://localhost:${parsed.data?.PORT ?? 8080}`;
  const settings: Record<string, unknown> = {};
  for (const provider of PROVIDERS) {
    const given = provider.required.filter((name) => cleaned[name] !== undefined);
    if (given.length === 0) continue;
    const missing = provider.required.filter((name) => cleaned[name] === undefined);
    for (const name of missing)
      problems.set(name, `required with the other ${provider.label} settings (${given.join(', ')} set)`);
    if (!parsed.success) continue;
    try {
      settings[provider.key] = provider.settingsFrom(parsed.data as never, publicBaseUrl);
    } catch (error) {
      // Each line names one variable: `MTN_COUNTRY: required for target environment mtnfoo`.
      for (const line of String((error as Error).message).split('\n')) {
        const at = line.indexOf(': ');
        problems.set(at > 0 ? line.slice(0, at) : 'environment', at > 0 ? line.slice(at + 2) : line);
      }
    }
  }
  if (problems.size > 0 || !parsed.success) {
    throw new ConfigError([...problems].map(([name, message]) => `${name}: ${message}`));
  }
  return { ...parsed.data, PUBLIC_BASE_URL: publicBaseUrl, ...settings };
}
