import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { describe, inject } from 'vitest';
import { buildAdminApp } from '../../server/src/admin/app.ts';
import { buildApp } from '../../server/src/app.ts';
import { loadConfig } from '../../server/src/config.ts';
import type { AppContext } from '../../server/src/context.ts';
import { createRuntime } from '../../server/src/runtime.ts';
import { createSandboxAdapter } from '../../server/src/services/payments/simulator.ts';
import { installContractCheck } from './contract-check.ts';
import { tempDataDir } from './process.ts';

export type StoreKind = 'pglite' | 'postgres';

/** Every suite runs on the embedded store; on PostgreSQL too when DATABASE_URL is set. */
export const STORES: StoreKind[] = process.env.DATABASE_URL ? ['pglite', 'postgres'] : ['pglite'];
export const POSTGRES_SKIP_REASON = 'DATABASE_URL is not set: the real-PostgreSQL suite is skipped';
export const REDIS_SKIP_REASON = 'REDIS_URL is not set: the real-Redis suite is skipped';

/** A suite once per store of the run (STORES); `%s` in the name says which. */
export function describeStores(name: string, suite: (store: StoreKind) => void): void {
  describe.each(STORES)(name, suite);
}

export type TestApp = {
  app: FastifyInstance;
  admin: FastifyInstance;
  ctx: AppContext;
  dataDir: string;
  close(): Promise<void>;
};

export { tempDataDir } from './process.ts';

let template: Blob | undefined;
/** The migrated store every in-memory test store starts from (global-setup.ts), read once. */
function storeTemplate(): Blob | undefined {
  // Outside a test run (the benches build apps too) there is none: the store runs initdb.
  const file = process.env.VITEST ? inject('storeTemplate') : undefined;
  if (!template && file) template = new Blob([readFileSync(file)]);
  return template;
}

/**
 * Builds the public and admin apps against a real migrated store: PGlite in memory, or the
 * PostgreSQL of DATABASE_URL. Tests stay independent by creating a fresh organization each.
 */
export async function buildTestApp(
  store: StoreKind,
  env: Record<string, string> = {},
  options: {
    withRedis?: boolean;
    rateLimitPrefix?: string;
    /** APP_ENV=production on this store: a production process needs DATABASE_URL, the app does not. */
    production?: boolean;
    /** The public app's log lines (at LOG_LEVEL, which the tests set to silent unless `env` says). */
    logLines?: string[];
  } = {},
): Promise<TestApp> {
  const dataDir = tempDataDir();
  const loaded = loadConfig({
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    // Suites run at any hour: only the market-hours suites enforce them (docs/market.md).
    MARKET_HOURS: 'always-open',
    RATE_LIMIT_GLOBAL: '100000/60s',
    RATE_LIMIT_TOKEN: '100000/60s',
    ...(store === 'postgres' ? { DATABASE_URL: process.env.DATABASE_URL } : {}),
    ...(options.withRedis ? { REDIS_URL: process.env.REDIS_URL } : {}),
    ...env,
  });
  const config = options.production ? { ...loaded, APP_ENV: 'production' as const } : loaded;
  const ctx = await createRuntime(config, {
    storePath: 'memory://',
    storeTemplate: storeTemplate(),
    rateLimitPrefix: options.rateLimitPrefix ?? `test:${Math.random().toString(36).slice(2)}`,
  });
  // Test apps share one PostgreSQL: each gets its own sandbox adapter name, so a payment worker
  // started by one suite never claims another suite's provider requests.
  if (config.APP_ENV === 'sandbox') {
    const sandbox = createSandboxAdapter({
      settleMs: config.SANDBOX_SETTLE_MS,
      name: `sandbox-${Math.random().toString(36).slice(2, 10)}`,
    });
    ctx.registry = () => sandbox;
  }
  const { logLines } = options;
  const app = await buildApp(
    ctx,
    logLines ? { logDestination: { write: (line: string) => void logLines.push(line) } } : { logger: false },
  );
  // Every response of a documented operation is checked against the OpenAPI document.
  const contract = installContractCheck(app);
  const admin = await buildAdminApp(ctx, { logger: false });
  await app.ready();
  await admin.ready();
  return {
    app,
    admin,
    ctx,
    dataDir,
    async close() {
      await app.close();
      await admin.close();
      await ctx.close();
      contract.assertNoViolations();
    },
  };
}
