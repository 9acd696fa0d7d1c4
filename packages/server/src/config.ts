import { z } from 'zod';

const rateLimitSpec = z
  .string()
  .regex(/^\d+\/\d+s$/, 'must look like 300/60s')
  .transform((value) => {
    const [points, seconds] = value.slice(0, -1).split('/').map(Number) as [number, number];
    return { points, durationSeconds: seconds };
  })
  .refine((v) => v.points > 0 && v.durationSeconds > 0, 'limit and window must be positive');

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
  return entries;
});

export const configSchema = z.object({
  PORT: port.default(8080),
  HOST: z.string().default('0.0.0.0'),
  ADMIN_PORT: port.default(8081),
  ADMIN_HOST: z.string().default('127.0.0.1'),
  ADMIN_TOKEN: z.string().min(24, 'must be at least 24 characters').optional(),
  APP_ENV: z.enum(['sandbox', 'production']).default('sandbox'),
  DATA_DIR: z.string().default('./data'),
  DATABASE_URL: z.string().url().optional(),
  REDIS_URL: z.string().url().optional(),
  PUBLIC_BASE_URL: z.string().url().optional(),
  TRUST_PROXY: trustProxy.default(false),
  JWT_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
  WEBHOOK_SIGNING_KEY: z
    .string()
    .includes('PRIVATE KEY', { message: 'must be a PEM private key' })
    .optional(),
  WEBHOOK_KEY_GENERATION: positiveInt.default(2),
  PROVIDER_CALLBACK_SECRET: z.string().min(16, 'must be at least 16 characters').optional(),
  RATE_LIMIT_GLOBAL: rateLimitSpec.prefault('300/60s'),
  RATE_LIMIT_TOKEN: rateLimitSpec.prefault('10/900s'),
  IDEMPOTENCY_TTL_SECONDS: positiveInt.default(86_400),
  USSD_SESSION_TTL_SECONDS: positiveInt.default(180),
  SANDBOX_SETTLE_MS: z.coerce.number().int().min(0).default(3000),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

export type RawConfig = z.output<typeof configSchema>;
export type Config = RawConfig & { PUBLIC_BASE_URL: string };

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

/** Parses the environment once; every bad variable becomes one line naming it. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = configSchema.safeParse(cleaned);
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map((issue) => `${String(issue.path[0] ?? 'environment')}: ${issue.message}`),
    );
  }
  const config = parsed.data;
  if (config.APP_ENV === 'production') {
    const missing = PRODUCTION_SECRETS.filter((name) => config[name] === undefined);
    if (missing.length > 0) {
      throw new ConfigError(missing.map((name) => `${name}: required when APP_ENV=production`));
    }
  }
  return { ...config, PUBLIC_BASE_URL: config.PUBLIC_BASE_URL ?? `http://localhost:${config.PORT}` };
}
