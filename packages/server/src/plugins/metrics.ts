import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

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
  return {
    registry,
    requests: new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests by route, method and status',
      labelNames: ['route', 'method', 'status'] as const,
      registers: [registry],
    }),
    latency: new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request latency',
      labelNames: ['route', 'method'] as const,
      buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    }),
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
