import type { Config } from '../../../config.ts';
import type { Db } from '../../../db/client.ts';
import type { Metrics } from '../../../lib/metrics.ts';
import type { EventOutbox } from '../../webhooks/outbox.ts';
import type { Log } from '../provider.ts';
import type { AdapterRegistry } from './adapter.ts';

/** The pipeline's settings (README, Configuration; docs/payments.md, Pipeline). */
export type PipelineSettings = Pick<
  Config,
  | 'PAYMENT_WORKER_INTERVAL_MS'
  | 'PAYMENT_WORKER_BATCH'
  | 'PAYMENT_LEASE_SECONDS'
  | 'PAYMENT_MAX_ATTEMPTS'
  | 'PAYMENT_BACKOFF_BASE_MS'
  | 'PAYMENT_BACKOFF_MAX_MS'
  | 'PAYMENT_MAX_PENDING_SECONDS'
  | 'PAYMENT_BREAKER_THRESHOLD'
  | 'PAYMENT_BREAKER_COOLDOWN_MS'
>;

/** What the pipeline needs: the store, a logger, the metrics, the adapters, the outbox, the time. */
export type PipelineDeps = {
  db: Db;
  log: Log;
  metrics: Metrics;
  registry: AdapterRegistry;
  /** The webhook outbox: a settlement's TRANSACTION and REQUEST events commit with it. */
  events: EventOutbox;
  /** Whether a paid buy may execute now (services/market/trading.ts); absent: at once. */
  market?: import('../../market/trading.ts').MarketGate;
  /** The investor SMS outbox: a settlement's SMS commits with it (docs/sms.md). */
  sms?: import('../../sms/queue.ts').SmsOutbox;
  clock: () => Date;
  settings: PipelineSettings;
  /** A settlement that executes a buy writes its trade confirmation (issuer, REPORT.CREATED): orders/deps.ts. */
  config?: import('../../reports/write.ts').ReportSettings;
  /** Per-adapter circuit breakers of this process (worker.ts); absent: every adapter is called. */
  breakers?: import('./breaker.ts').Breakers;
  /** Runs this instance's worker soon (a settlement queued a refund, a request is due again). */
  nudge?: () => void;
  /** Uniform in [0, 1): the backoff's jitter (tests pass a fixed one). */
  random?: () => number;
};

export const NETWORKS = ['MPESA', 'AIRTEL_MONEY', 'MTN_MOMO'] as const;

/** Every adapter the registry serves, once each (a registry is a function of the network). */
export function adaptersOf(registry: AdapterRegistry) {
  const byName = new Map<string, NonNullable<ReturnType<AdapterRegistry>>>();
  for (const network of NETWORKS) {
    const adapter = registry(network);
    if (adapter) byName.set(adapter.name, adapter);
  }
  return byName;
}
