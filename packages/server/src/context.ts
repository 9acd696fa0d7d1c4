import type { Redis } from 'ioredis';
import type { Config } from './config.ts';
import type { Database } from './db/client.ts';
import type { Secrets } from './lib/secrets.ts';
import type { Metrics } from './plugins/metrics.ts';
import type { CallbackPipeline } from './services/payments/callback-pipeline.ts';
import type { AdapterRegistry } from './services/payments/pipeline/adapter.ts';
import type { PaymentProvider } from './services/payments/provider.ts';

/** Everything a request may need, built once per process (or per test app). */
export interface AppContext {
  config: Config;
  database: Database;
  secrets: Secrets;
  metrics: Metrics;
  redis?: Redis;
  /** Redis key prefix of the rate limiters; instances that share a budget share it. */
  rateLimitPrefix: string;
  /**
   * The mobile-money provider asked to collect and disburse after a move commits. Unset: nothing is
   * sent and transactions stay PENDING until a callback arrives (production until a real integration
   * is plugged in). server.ts sets the sandbox simulator.
   */
  payments?: PaymentProvider;
  /** Which provider adapter serves a network (services/payments/registry.ts); none: not available. */
  registry: AdapterRegistry;
  /**
   * The payment pipeline's callback entry points, deps bound (services/payments/callback-pipeline.ts).
   * The provider callback routes are registered only when it is set. SEAM (issue 15): the pipeline
   * sets it when it is merged.
   */
  callbackPipeline?: CallbackPipeline;
  /**
   * Tests only: awaited at named points inside USSD moves (`ussd.session.menu`,
   * `ussd.process.effects`). A throw there is an "unexpected internal failure"; a pending promise
   * holds the move open (race tests). Nothing in the server sets it, so no request can reach it.
   */
  faultInjector?: (point: string) => void | Promise<void>;
}
