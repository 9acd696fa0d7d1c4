import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildAdminApp } from './admin/app.ts';
import { buildApp } from './app.ts';
import { type Config, ConfigError, loadConfig } from './config.ts';
import { DataDirLockedError, lockDataDir } from './lib/data-dir-lock.ts';
import { flushLogs } from './lib/logger.ts';
import { SecretsFileError } from './lib/secrets.ts';
import { createRuntime, type Runtime } from './runtime.ts';
import { startHousekeeping } from './services/housekeeping/purge.ts';
import { checkBook } from './services/market/book.ts';
import { priceFeedProvider } from './services/market/feed/index.ts';
import { startFeedWorker } from './services/market/feed-worker.ts';
import { executeWaitingBuys } from './services/orders/life.ts';
import { startPayments } from './services/payments/pipeline/start.ts';
import { monthlyStatementsTask } from './services/reports/statement.ts';
import { seedSandbox } from './services/sandbox/seed.ts';
import { smsGatewayProvider } from './services/sms/gateway/index.ts';
import { sandboxInbox } from './services/sms/sandbox-inbox.ts';
import { startSmsWorker } from './services/sms/worker.ts';
import { startWebhookWorker } from './services/webhooks/worker.ts';

/** Exit code for a refusal to start (bad configuration, DATA_DIR in use). */
export const EXIT_CONFIG = 2;
const DRAIN_TIMEOUT_MS = 10_000;

function fail(message: string): never {
  // The lines logged before (the public listener's "Server listening" when ADMIN_PORT is taken)
  // go out first: the refusal is the last line.
  flushLogs();
  process.stderr.write(`partner-api: ${message}\n`);
  process.exit(EXIT_CONFIG);
}

type Env = Record<string, string | undefined>;

function configOrExit(env: Env): Config {
  try {
    return loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError)
      fail(`invalid configuration\n${error.problems.map((p) => `  ${p}`).join('\n')}`);
    throw error;
  }
}

/** The embedded store's DATA_DIR lock (none for PostgreSQL); exits 2 when another process holds it. */
async function lockOrExit(config: Config): Promise<(() => Promise<void>) | undefined> {
  try {
    mkdirSync(config.DATA_DIR, { recursive: true });
  } catch (error) {
    // A path through a file, a file in its place, no permission: one line, no stack.
    fail(`cannot use DATA_DIR ${config.DATA_DIR}: ${(error as Error).message}`);
  }
  if (config.DATABASE_URL) return undefined;
  try {
    return await lockDataDir(config.DATA_DIR, (error) => {
      process.stderr.write(
        `partner-api: lost the DATA_DIR lock (${error.message}); stopping to protect the store\n`,
      );
      process.exit(1);
    });
  } catch (error) {
    if (error instanceof DataDirLockedError) fail(error.message);
    throw error;
  }
}

/**
 * A one-shot operator command (`partner-api migrate`, `purge`): the same configuration and DATA_DIR
 * lock as `serve`, so it never opens an embedded store a running server holds.
 */
export async function withStores<T>(
  work: (runtime: Runtime) => Promise<T>,
  env: Env = process.env,
): Promise<T> {
  const config = configOrExit(env);
  const releaseLock = await lockOrExit(config);
  try {
    const runtime = await createRuntime(config);
    try {
      return await work(runtime);
    } finally {
      await runtime.close();
    }
  } finally {
    await releaseLock?.();
  }
}

/**
 * Binds a listener, or refuses to start (exit 2) with one line and no stack, whatever the reason: a
 * port already in use is an operator's everyday slip, a mistyped HOST another. What was started is
 * stopped first (workers, store, DATA_DIR lock).
 */
async function listenOrExit(
  app: FastifyInstance,
  host: string,
  port: number,
  variable: 'PORT' | 'ADMIN_PORT',
  stop: () => Promise<void>,
): Promise<void> {
  try {
    await app.listen({ port, host });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const where = `${host}:${port}`;
    const hostVariable = variable === 'PORT' ? 'HOST' : 'ADMIN_HOST';
    const why =
      code === 'EADDRINUSE'
        ? `${where} is already in use; set ${variable} to a free port`
        : code === 'EACCES'
          ? `not allowed to listen on ${where}; set ${variable} to a port above 1023`
          : code === 'EADDRNOTAVAIL'
            ? `${host} is not an address of this machine (${hostVariable})`
            : code === 'ENOTFOUND' || code === 'EAI_AGAIN'
              ? `${host} does not resolve to an address (${hostVariable})`
              : `${where}: ${(error as Error).message}`;
    await stop().catch(() => {});
    fail(`cannot listen: ${why}`);
  }
}

/** The process: config, lock, stores, both listeners, graceful close on SIGTERM/SIGINT. */
export async function serve(env: Env = process.env): Promise<void> {
  const config = configOrExit(env);
  const releaseLock = await lockOrExit(config);

  // The sandbox without an SMS gateway queues investor SMS for its inbox (docs/sms.md, "Sandbox").
  const runtime = await createRuntime(config, { smsSandboxInbox: config.APP_ENV === 'sandbox' }).catch(
    (error: Error) => {
      if (error instanceof SecretsFileError) fail(error.message);
      process.stderr.write(`partner-api: cannot open the store: ${error.message}\n`);
      process.exit(1);
    },
  );
  const app = await buildApp(runtime);
  const admin = await buildAdminApp(runtime);

  if (config.APP_ENV === 'sandbox') {
    const seeded = await seedSandbox({
      db: runtime.database.db,
      dataDir: config.DATA_DIR,
      baseUrl: config.PUBLIC_BASE_URL,
    });
    if (seeded) app.log.info({ file: seeded }, `sandbox seeded; demo credentials written to ${seeded}`);
  }
  // Every instance runs a payment worker (docs/payments.md, Pipeline): it sends the queued provider
  // requests and reconciles the pending ones; in the sandbox its adapter is the simulator.
  const payments = startPayments(runtime, app.log);
  // With the preview on, every instance also delivers webhooks (docs/webhooks.md, Delivery).
  const webhooks = config.WEBHOOKS_PREVIEW ? startWebhookWorker(runtime, app.log) : undefined;
  // With a price feed configured, every instance pulls it (docs/market.md, "The price feed").
  const feed = config.priceFeed
    ? startFeedWorker(
        runtime,
        priceFeedProvider.createFeed(config.priceFeed),
        config.priceFeed.intervalMs,
        app.log,
      )
    : undefined;
  runtime.feedWorker = feed;
  // Investor SMS (docs/sms.md): through the configured gateway; in the sandbox without one, into the
  // sandbox inbox the handset shows. Every instance runs a worker; none without a gateway.
  const smsGateway = config.sms
    ? smsGatewayProvider.createGateway(config.sms)
    : runtime.sms.enabled
      ? sandboxInbox
      : undefined;
  const sms = smsGateway ? startSmsWorker(runtime, smsGateway, app.log) : undefined;
  // Every 10 minutes, the day's book against the pooled position (docs/market.md, "The operator's book").
  const watchBook = () =>
    checkBook(runtime, app.log).catch((error: unknown) => app.log.warn({ err: error }, 'book check failed'));
  const bookTimer = setInterval(watchBook, 600_000).unref();
  void watchBook();
  // Every 30 s, the paid buys that waited for the session or a fresh price (docs/market.md).
  const executeWaiting = () =>
    executeWaitingBuys(runtime.database.db, runtime)
      .then((executed) => {
        if (executed > 0) app.log.info({ executed }, 'waiting buys executed');
      })
      .catch((error: unknown) => app.log.warn({ err: error }, 'waiting buys: run failed; retrying'));
  const waitingTimer = setInterval(executeWaiting, 30_000).unref();
  const housekeeping = startHousekeeping(
    runtime.database.db,
    app.log,
    (counts) => {
      for (const [table, deleted] of Object.entries(counts)) {
        runtime.metrics.housekeepingDeleted.inc({ table }, deleted);
      }
    },
    runtime.clock,
    runtime.events,
    monthlyStatementsTask(runtime.database.db, runtime),
  );

  /** Stops the timers and workers, then closes the stores (housekeeping is stopped apart). */
  const closeStores = async () => {
    clearInterval(bookTimer);
    clearInterval(waitingTimer);
    await payments.stop();
    await webhooks?.stop();
    await feed?.stop();
    await sms?.stop();
    await runtime.close();
    await releaseLock?.();
  };
  const stopAll = async () => {
    housekeeping.stop();
    await closeStores();
  };
  await listenOrExit(app, config.HOST, config.PORT, 'PORT', stopAll);
  await listenOrExit(admin, config.ADMIN_HOST, config.ADMIN_PORT, 'ADMIN_PORT', async () => {
    await app.close();
    await stopAll();
  });
  app.log.info(
    {
      store: runtime.database.kind,
      env: config.APP_ENV,
      credentials: config.APP_ENV === 'sandbox' ? `${config.DATA_DIR}/sandbox-credentials.json` : undefined,
    },
    `partner-api serving ${config.PUBLIC_BASE_URL} (admin on ${config.ADMIN_HOST}:${config.ADMIN_PORT})`,
  );
  if (process.stdout.isTTY && config.LOG_FORMAT !== 'json')
    process.stdout.write(banner(config, runtime.database.kind));
  installShutdown([app, admin], closeStores, () => {
    housekeeping.stop();
  });
}

function installShutdown(
  apps: FastifyInstance[],
  closeStores: () => Promise<void>,
  stopBackground: () => void = () => {},
): void {
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    apps[0]?.log.info({ signal }, 'draining');
    // No new sandbox settlements into a closing app (they would only meet 503s).
    stopBackground();
    const force = setTimeout(() => process.exit(1), DRAIN_TIMEOUT_MS + 2000).unref();
    // close() stops accepting, drops connections that never carried a request and waits for the
    // requests in flight; past the deadline, the exit cuts what is left (the log says which).
    const drain = Promise.all(apps.map((a) => a.close())).then(() => true);
    const deadline = new Promise<false>((resolve) =>
      setTimeout(() => resolve(false), DRAIN_TIMEOUT_MS).unref(),
    );
    if (await Promise.race([drain, deadline])) apps[0]?.log.info('drained');
    else apps[0]?.log.warn(`drain deadline (${DRAIN_TIMEOUT_MS} ms) passed: connections still open are cut`);
    await closeStores().catch(() => {});
    clearTimeout(force);
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
}

/** What a person at a terminal needs once the service is up: where to point a browser or a client. */
export function banner(config: Config, store: string): string {
  const base = config.PUBLIC_BASE_URL.replace(/\/+$/, '');
  const rows: Array<[string, string]> = [
    ['API', `${base}/v1`],
    ['Reference', `${base}/docs`],
    ['Signing guide', `${base}/docs/signing`],
    ...(config.APP_ENV === 'sandbox'
      ? ([
          ['USSD handset', `${base}/sandbox/ussd`],
          ['Credentials', path.resolve(config.DATA_DIR, 'sandbox-credentials.json')],
        ] as Array<[string, string]>)
      : []),
    ['Admin API', `http://${config.ADMIN_HOST}:${config.ADMIN_PORT}`],
  ];
  const width = Math.max(...rows.map(([label]) => label.length));
  const lines = rows.map(([label, value]) => `  ${label.padEnd(width)}  ${value}`);
  return `\npartner-api is up (${config.APP_ENV}, ${store} store)\n${lines.join('\n')}\n\n`;
}
