import { Counter, collectDefaultMetrics, Gauge, Histogram, type Metric, Registry } from 'prom-client';
import { RequestHistory } from './request-history.ts';

export type RejectionReason =
  | 'rate_limit'
  | 'token'
  | 'client_id'
  | 'allowlist'
  | 'signing_key'
  | 'signature'
  | 'digest';

/** One registry per app, so tests can build many apps in one process. */
export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const requests = new RequestTally(registry);
  return {
    registry,
    /** Every response, by route, method and status, and its latency (`RequestTally`). */
    requests,
    /** The tally sampled over the last 24 hours, for the console's charts (the admin app starts it). */
    history: new RequestHistory(requests),
    rejections: new Counter({
      name: 'http_rejections_total',
      help: 'Requests refused before the handler, by reason',
      labelNames: ['reason'] as const,
      registers: [registry],
    }),
    housekeepingDeleted: new Counter({
      name: 'housekeeping_deleted_total',
      help: 'Expired records purged, by table',
      labelNames: ['table'] as const,
      registers: [registry],
    }),
    idempotency: new Counter({
      name: 'idempotency_outcomes_total',
      help: 'Idempotency outcomes: executed, replayed, conflict, mismatch',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    ussdMoves: new Counter({
      name: 'ussd_moves_total',
      help: 'USSD moves by resulting state',
      labelNames: ['state'] as const,
      registers: [registry],
    }),
    bookShortfall: new Gauge({
      name: 'book_shortfall_instruments',
      help: "Instruments whose customers' claims exceed the broker's pooled position (docs/market.md)",
      registers: [registry],
    }),
    priceFeedPulls: new Counter({
      name: 'price_feed_pulls_total',
      help: 'Pulls of the price feed, by outcome: ok, failed',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    feedPrices: new Counter({
      name: 'price_feed_prices_total',
      help: "The feed's prices, by what became of them: applied, held, unknown (no such instrument), repeated, rejected (not a price)",
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    paymentCallbacks: new Counter({
      name: 'payment_callbacks_total',
      help: 'Payment callbacks by outcome',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    /** Every call to a provider: operation send|query, outcome the SendResult/QueryResult kind. */
    providerCalls: new Counter({
      name: 'payment_provider_calls_total',
      help: 'Calls to mobile-money providers by adapter, operation and outcome',
      labelNames: ['adapter', 'operation', 'outcome'] as const,
      registers: [registry],
    }),
    providerLatency: new Histogram({
      name: 'payment_provider_call_seconds',
      help: 'Latency of calls to mobile-money providers',
      labelNames: ['adapter', 'operation'] as const,
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    /**
     * Provider callbacks: `received` and `rejected` (bad token, source or body) at the provider's
     * route; `confirmed`, `contradicted` and `unconfirmed` as the confirming query decides
     * (pipeline/callbacks.ts).
     */
    providerCallbacks: new Counter({
      name: 'payment_provider_callbacks_total',
      help: 'Provider callbacks by adapter and outcome: received, rejected, confirmed, contradicted, unconfirmed',
      labelNames: ['adapter', 'outcome'] as const,
      registers: [registry],
    }),
    oldestPending: new Gauge({
      name: 'payment_oldest_pending_seconds',
      help: 'Age of the oldest provider request not yet done, per adapter (0 when none)',
      labelNames: ['adapter'] as const,
      registers: [registry],
    }),
    breakerState: new Gauge({
      name: 'payment_breaker_state',
      help: 'Circuit breaker per adapter: 0 closed, 0.5 half-open, 1 open',
      labelNames: ['adapter'] as const,
      registers: [registry],
    }),
    /** Outbound webhooks (docs/webhooks.md, Metrics). Counted when written, in the emitting transaction. */
    webhookEvents: new Counter({
      name: 'webhook_events_emitted_total',
      help: 'Webhook events written to the outbox, by event',
      labelNames: ['event'] as const,
      registers: [registry],
    }),
    /** outcome: success, http_error, redirect, timeout, refused, network (docs/webhooks.md, Metrics). */
    webhookAttempts: new Counter({
      name: 'webhook_delivery_attempts_total',
      help: 'Webhook delivery attempts by outcome',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    /** outcome: delivered, failed (retries exhausted), disabled (the webhook was disabled). */
    webhookDeliveries: new Counter({
      name: 'webhook_deliveries_total',
      help: 'Webhook deliveries that ended, by outcome',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    webhookLatency: new Histogram({
      name: 'webhook_attempt_seconds',
      help: 'Latency of webhook delivery attempts, connect to status line',
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    webhookQueueDepth: new Gauge({
      name: 'webhook_queue_depth',
      help: 'Webhook deliveries pending (due or scheduled for a retry)',
      registers: [registry],
    }),
    webhookOldestPending: new Gauge({
      name: 'webhook_oldest_pending_seconds',
      help: 'Age of the oldest pending webhook delivery (0 when none)',
      registers: [registry],
    }),
    webhooksDisabled: new Gauge({
      name: 'webhooks_disabled',
      help: 'Webhooks DEACTIVED (410 from the receiver, or 5 days of failures)',
      registers: [registry],
    }),
    smsSends: new Counter({
      name: 'sms_sends_total',
      help: 'Investor SMS hand-overs to the gateway, by what became of the SMS: sent, refused, retried, failed',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    callerLookups: new Counter({
      name: 'auth_caller_lookups_total',
      help: 'Callers of authenticated requests, by source: memory (the caller cache) or database',
      labelNames: ['source'] as const,
      registers: [registry],
    }),
    rateLimitFallback: new Counter({
      name: 'rate_limit_store_fallback_total',
      help: 'Rate-limit decisions taken in memory because Redis was unreachable',
      registers: [registry],
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;

/** The upper bounds (seconds) of `http_request_duration_seconds`'s buckets, +Inf aside. */
export const LATENCY_BUCKETS = [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

/** One route and method: responses by status, and the latency histogram's buckets, sum and count. */
type Cell = {
  labels: { route: string; method: string };
  statuses: Map<number, number>;
  /** Not cumulative: `buckets[i]` counts the latencies at most LATENCY_BUCKETS[i] and above the bound before it. */
  buckets: number[];
  sum: number;
  count: number;
};

/**
 * `http_requests_total` and `http_request_duration_seconds`, counted per response in a plain map and
 * handed to prom-client only when /metrics is read. prom-client checks and hashes the labels of every
 * `inc` and `observe` (~0.5 µs for the two, ~10% of GET /v1/webhooks/key's instructions beyond the bare
 * framework: docs/performance.md, "The key route against bare Fastify"); here a response costs two map
 * lookups and a few additions. The exposition is prom-client's own: the counter is a `Counter` whose
 * `collect` sets it from the tally, and the histogram an object in the registry that gives the values
 * prom-client's `Histogram` would give for the same observations (tested against it in
 * foundation/metrics.test.ts).
 */
export class RequestTally {
  readonly #routes = new Map<string, Map<string, Cell>>();

  constructor(registry: Registry) {
    const cells = () => this.#cells();
    new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests by route, method and status',
      labelNames: ['route', 'method', 'status'] as const,
      registers: [registry],
      collect() {
        this.reset();
        for (const { labels, statuses } of cells()) {
          for (const [status, n] of statuses) this.inc({ ...labels, status: String(status) }, n);
        }
      },
    });
    const about = {
      name: 'http_request_duration_seconds',
      help: 'HTTP request latency',
      type: 'histogram',
      aggregator: 'sum',
    };
    const latency = {
      ...about,
      get: async () => ({
        ...about,
        values: [...cells()].flatMap((cell) => histogramValues(about.name, cell)),
      }),
      reset: () => this.#routes.clear(),
    };
    // prom-client's Metric type names its four classes; the registry asks only for these members.
    registry.registerMetric(latency as unknown as Metric);
  }

  /** One response. `seconds` is its latency. */
  record(route: string, method: string, status: number, seconds: number): void {
    let methods = this.#routes.get(route);
    if (!methods) {
      methods = new Map();
      this.#routes.set(route, methods);
    }
    let cell = methods.get(method);
    if (!cell) {
      cell = {
        labels: { route, method },
        statuses: new Map(),
        buckets: LATENCY_BUCKETS.map(() => 0),
        sum: 0,
        count: 0,
      };
      methods.set(method, cell);
    }
    cell.statuses.set(status, (cell.statuses.get(status) ?? 0) + 1);
    // As prom-client's: the first bound the value does not exceed; above the last, only +Inf.
    const bucket = LATENCY_BUCKETS.findIndex((bound) => seconds <= bound);
    if (bucket >= 0) cell.buckets[bucket]! += 1;
    cell.sum += seconds;
    cell.count += 1;
  }

  /**
   * The cumulative figures so far, per route and method: responses and the latency buckets'
   * counts (not cumulative over bounds; the last entry is above the last bound). The console's
   * request history samples it (lib/request-history.ts).
   */
  snapshot(): TallySnapshot[] {
    return [...this.#cells()].map(({ labels, buckets, count }) => ({
      route: labels.route,
      method: labels.method,
      count,
      buckets: [...buckets, count - buckets.reduce((a, b) => a + b, 0)],
    }));
  }

  *#cells(): Iterable<Cell> {
    for (const methods of this.#routes.values()) yield* methods.values();
  }
}

export type TallySnapshot = { route: string; method: string; count: number; buckets: number[] };

type HistogramValue = { labels: Record<string, string | number>; value: number; metricName: string };

/** A cell as prom-client's `Histogram.get()` gives it: cumulative buckets, +Inf, sum and count. */
function histogramValues(name: string, { labels, buckets, sum, count }: Cell): HistogramValue[] {
  let cumulative = 0;
  return [
    ...LATENCY_BUCKETS.map((le, i) => {
      cumulative += buckets[i]!;
      return { labels: { le, ...labels }, value: cumulative, metricName: `${name}_bucket` };
    }),
    { labels: { le: '+Inf', ...labels }, value: count, metricName: `${name}_bucket` },
    { labels, value: sum, metricName: `${name}_sum` },
    { labels, value: count, metricName: `${name}_count` },
  ];
}
