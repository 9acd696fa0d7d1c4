import type { Redis } from 'ioredis';
import type { Config } from './config.ts';
import type { Database } from './db/client.ts';
import type { Metrics } from './lib/metrics.ts';
import type { Secrets } from './lib/secrets.ts';
import type { FeedWorker } from './services/market/feed-worker.ts';
import type { MarketGate } from './services/market/trading.ts';
import type { CallbackPipeline } from './services/payments/callback-pipeline.ts';
import type { AdapterRegistry } from './services/payments/pipeline/adapter.ts';
import type { PaymentWorker } from './services/payments/pipeline/worker.ts';
import type { SmsOutbox } from './services/sms/queue.ts';
import type { EventOutbox } from './services/webhooks/outbox.ts';
import type { Lookup } from './services/webhooks/target.ts';
import type { WebhookWorker } from './services/webhooks/worker.ts';

/** Everything a request may need, built once per process (or per test app). */
export interface AppContext {
  config: Config;
  /** Now, for everything that depends on the time of day (market sessions, price ages); tests set it. */
  clock: () => Date;
  database: Database;
  secrets: Secrets;
  metrics: Metrics;
  redis?: Redis;
  /** Redis key prefix of the rate limiters; instances that share a budget share it. */
  rateLimitPrefix: string;
  /**
   * Which payment adapter serves a network (services/payments/registry.ts): a move's provider request is
   * queued for it in the move's transaction.
   */
  registry: AdapterRegistry;
  /**
   * The webhook outbox (services/webhooks/outbox.ts): NO_EVENTS unless WEBHOOKS_PREVIEW, so that
   * no event is written while the spec says none are delivered.
   */
  events: EventOutbox;
  /**
   * The investor SMS outbox (services/sms/queue.ts): NO_SMS unless an SMS gateway is configured (or
   * the sandbox inbox runs: server.ts), so nothing is queued that nothing would send.
   */
  sms: SmsOutbox;
  /** Whether a paid buy may execute now (services/market/trading.ts): session and price age. */
  market: MarketGate;
  /**
   * Tests only: how webhook hosts resolve, at registration and at connect time (a table instead of
   * DNS). Nothing in the server sets it; unset means the system resolver.
   */
  webhookLookup?: Lookup;
  /**
   * This instance's webhook worker once started (server.ts, WEBHOOKS_PREVIEW only): a route that
   * emitted events may nudge it after its commit for a lower latency than the poll.
   */
  webhookWorker?: WebhookWorker;
  /** This instance's payment worker once started (server.ts): routes nudge it after a commit. */
  paymentWorker?: PaymentWorker;
  /** This instance's price feed worker, when PRICE_FEED_URL is set (docs/market.md). */
  feedWorker?: FeedWorker;
  /** The last book check of this instance (docs/market.md, "The operator's book"). */
  bookCheck?: { checkedAt: Date; date: string; shortfall: string[] };
  /**
   * The payment pipeline's callback entry points, deps bound (services/payments/callback-pipeline.ts,
   * built by pipeline/start.ts). The provider callback routes are registered only when it is set.
   */
  callbackPipeline?: CallbackPipeline;
  /**
   * Tests only: awaited at named points inside USSD moves (`ussd.session.menu`,
   * `ussd.process.effects`). A throw there is an "unexpected internal failure"; a pending promise
   * holds the move open (race tests). Nothing in the server sets it, so no request can reach it.
   */
  faultInjector?: (point: string) => void | Promise<void>;
}
