import { readFileSync } from 'node:fs';
import type { AppContext } from '../../context.ts';
import { startPassLoop } from '../../lib/pass-loop.ts';
import { type DeliveryDeps, runDeliveriesOnce } from './delivery.ts';
import { queueStats } from './delivery-store.ts';
import { senderContext } from './sender.ts';
import { webhookSigningKey } from './signing-key.ts';
import { systemLookup } from './target.ts';

export type WebhookWorker = {
  /** Run a pass now (a route after committing an event); a pass already running runs once more. */
  nudge(): void;
  /** Stops the timer and waits for the pass in flight (its attempts finish and are recorded). */
  stop(): Promise<void>;
  /** Resolves after the next complete pass (tests). */
  settled(): Promise<void>;
};

const GAUGE_EVERY_MS = 5000;

type Log = DeliveryDeps['log'];

/** The delivery dependencies from the process context: the published key, the connect-time rule. */
export function deliveryDeps(ctx: AppContext, log: Log): DeliveryDeps {
  const { config } = ctx;
  return {
    db: ctx.database.db,
    log,
    metrics: ctx.metrics,
    settings: config,
    sender: {
      allowPrivate: config.WEBHOOKS_ALLOW_PRIVATE_TARGETS,
      lookup: ctx.webhookLookup ?? systemLookup,
      timeoutMs: config.WEBHOOK_TIMEOUT_MS,
      secureContext: senderContext(
        config.WEBHOOKS_CA_FILE ? readFileSync(config.WEBHOOKS_CA_FILE, 'utf8') : undefined,
      ),
    },
    signingKey: webhookSigningKey(ctx),
    clock: () => new Date(),
  };
}

/**
 * This instance's webhook worker (every instance runs one when WEBHOOKS_PREVIEW is on): a pass
 * every WEBHOOK_WORKER_INTERVAL_MS, one at a time, nothing kept in memory: every delivery lives in
 * webhook_deliveries and is claimed with a lease, so instances share the work and a dead one's
 * claims lapse to the others.
 *
 * `organizations` (tests only) narrows the claims to those organizations. Test apps on the shared
 * PostgreSQL would otherwise claim, and try to deliver, every other suite's pending deliveries
 * (to hosts those suites never meant to reach, with the wrong settings); the delivery suites run
 * their own database instead (ownDatabase), and a suite that cannot may scope its worker so.
 */
export function startWebhookWorker(
  ctx: AppContext,
  log: Log,
  options: { organizations?: ReadonlySet<string>; overrides?: Partial<DeliveryDeps> } = {},
): WebhookWorker {
  const deps: DeliveryDeps = {
    ...deliveryDeps(ctx, log),
    ...(options.organizations ? { organizations: options.organizations } : {}),
    ...options.overrides,
  };
  let lastGauge = 0;
  const loop = startPassLoop({
    intervalMs: ctx.config.WEBHOOK_WORKER_INTERVAL_MS,
    pass: async () => {
      const more = await runDeliveriesOnce(deps);
      if (Date.now() - lastGauge >= GAUGE_EVERY_MS) {
        lastGauge = Date.now();
        const stats = await queueStats(deps.db, deps.clock());
        deps.metrics.webhookQueueDepth.set(stats.depth);
        deps.metrics.webhookOldestPending.set(stats.oldestSeconds);
        deps.metrics.webhooksDisabled.set(stats.disabled);
      }
      return more;
    },
    onError: (err) => deps.log.error({ err }, 'webhook worker pass failed'),
  });
  const worker: WebhookWorker = {
    nudge: loop.nudge,
    async stop() {
      if (ctx.webhookWorker === worker) ctx.webhookWorker = undefined;
      await loop.stop();
    },
    settled: loop.settled,
  };
  ctx.webhookWorker = worker;
  return worker;
}
