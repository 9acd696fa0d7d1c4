import { once } from 'node:events';
import { Redis } from 'ioredis';
import type { Config } from './config.ts';
import type { AppContext } from './context.ts';
import { openDatabase } from './db/client.ts';
import { createMetrics } from './lib/metrics.ts';
import { loadSecrets } from './lib/secrets.ts';
import { marketGate } from './services/market/trading.ts';
import { createAdapterRegistry } from './services/payments/registry.ts';
import { createSmsOutbox, NO_SMS } from './services/sms/queue.ts';
import { createOutbox, NO_EVENTS } from './services/webhooks/outbox.ts';

export type RuntimeOptions = {
  /** Overrides DATA_DIR for the embedded store, e.g. 'memory://' in tests. */
  storePath?: string;
  /** A dump of a migrated embedded store that an in-memory store starts from (tests: about 1 s less). */
  storeTemplate?: Blob;
  rateLimitPrefix?: string;
  /** Queue investor SMS without a gateway, for the sandbox inbox (server.ts in the sandbox only). */
  smsSandboxInbox?: boolean;
};

/** Longest a rate-limit decision waits for Redis before falling back to memory. */
export const REDIS_COMMAND_TIMEOUT_MS = 500;

export type Runtime = AppContext & { close(): Promise<void> };

/** Opens the stores and builds the shared context; the caller owns closing it. */
export async function createRuntime(config: Config, options: RuntimeOptions = {}): Promise<Runtime> {
  const secrets = loadSecrets(config);
  const database = await openDatabase({
    databaseUrl: config.DATABASE_URL,
    poolSize: config.DATABASE_POOL_SIZE,
    dataDir: options.storePath ?? config.DATA_DIR,
    template: options.storeTemplate,
  });
  const redis = config.REDIS_URL
    ? new Redis(config.REDIS_URL, {
        // Fail fast while Redis is away so limits fall back to memory instead of queueing.
        enableOfflineQueue: false,
        maxRetriesPerRequest: 1,
        connectTimeout: 2000,
        // A Redis that stops answering on an open connection (a partition) must not hang requests:
        // the command fails after this long and the limiter decides in memory.
        commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
        retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
        // No auto-pipelining: its batches kept every limiter command alive past two young-generation
        // collections, 60 MB of peak RSS under load (docs/performance.md, "Memory"). The two
        // commands of a signed request still leave in one write (plugins/rate-limit.ts).
        enableAutoPipelining: false,
      })
    : undefined;
  redis?.on('error', () => {}); // reported through /healthz, metrics and the limiter's fallback log
  // Give Redis a moment so the first requests count in the shared budget; if it is down, start anyway.
  if (redis)
    await Promise.race([
      once(redis, 'ready').catch(() => {}),
      new Promise((r) => setTimeout(r, 3000).unref()),
    ]);
  const metrics = createMetrics();
  const runtime: Runtime = {
    config,
    clock: () => new Date(),
    database,
    secrets,
    metrics,
    redis,
    rateLimitPrefix: options.rateLimitPrefix ?? 'rl',
    registry: createAdapterRegistry({ config }),
    events: config.WEBHOOKS_PREVIEW
      ? createOutbox({
          emitted: (event) => metrics.webhookEvents.inc({ event }),
          investments: config.INVESTMENTS_PREVIEW,
        })
      : NO_EVENTS,
    sms: config.sms || options.smsSandboxInbox ? createSmsOutbox() : NO_SMS,
    // Replaced below: the gate reads this runtime's clock and settings at each call.
    market: async () => new Date(),
    async close() {
      redis?.disconnect();
      await database.close();
    },
  };
  runtime.market = marketGate(runtime);
  return runtime;
}
