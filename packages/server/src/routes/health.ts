import { ErrorLabel } from '@partner-api/contract';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.ts';
import { PAYMENT_PROVIDERS } from '../services/payments/providers/index.ts';

const PING_TIMEOUT_MS = 2000;

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('timeout')), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

const check = (ping: Promise<unknown>) =>
  withTimeout(ping, PING_TIMEOUT_MS).then(
    () => 'ok' as const,
    () => 'unavailable' as const,
  );

/** The store's and Redis's answers to a ping (Redis: `not configured` when there is none). */
export async function storeChecks(ctx: AppContext) {
  const [database, redis] = await Promise.all([
    check(ctx.database.ping()),
    // A connection that reads as ready may lead to a Redis that no longer answers (a partition):
    // only an answered PING is 'ok'.
    ctx.redis
      ? ctx.redis.status === 'ready'
        ? check(ctx.redis.ping())
        : ('unavailable' as const)
      : ('not configured' as const),
  ]);
  return { database, redis };
}

/** Whether this instance's payment worker runs, and every configured provider's breaker (closed until it fails). */
export function paymentHealth(ctx: AppContext) {
  const worker = ctx.paymentWorker?.health() ?? { worker: 'stopped' as const, breakers: {} };
  const configured = PAYMENT_PROVIDERS.filter((p) => ctx.config[p.key]).map(
    (p) => [p.key, 'closed'] as const,
  );
  return {
    worker: worker.worker,
    breakers: { ...Object.fromEntries(configured), ...worker.breakers } as Record<string, string>,
  };
}

/** Root-level operational routes: outside /v1, exempt from rate limits. */
export async function healthRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }) {
  app.get('/healthz', async (request, reply) => {
    const { database, redis } = await storeChecks(ctx);
    // Redis down is degraded, not down: limits fall back to memory.
    if (database !== 'ok') {
      request.log.error({ checks: { database, redis } }, 'health check failed');
      return reply.code(503).send({ error: ErrorLabel.unavailable });
    }
    // Payments never change the status: an open breaker is a provider's trouble, not this instance's.
    // Every configured provider is listed (closed until it fails), besides the simulator once used.
    const payments = paymentHealth(ctx);
    // The price feed, when configured: its state never changes the status either.
    const prices = ctx.config.priceFeed
      ? { feed: ctx.feedWorker?.health() ?? { state: 'stopped' } }
      : undefined;
    // The book, once this instance has checked it: instruments whose claims exceed the pooled position.
    const book = ctx.bookCheck;
    return {
      status: 'ok',
      store: ctx.database.kind,
      checks: { database, redis },
      payments,
      ...(prices ? { prices } : {}),
      ...(book ? { book } : {}),
    };
  });

  // Production's counters (payments, callbacks) are the operator's: on the admin listener only.
  if (ctx.config.APP_ENV === 'sandbox') app.get('/metrics', metricsHandler(ctx));
}

/** GET /metrics: Prometheus text (public in the sandbox; the admin listener, with its token, always). */
export function metricsHandler(ctx: AppContext) {
  return async (_request: FastifyRequest, reply: FastifyReply) => {
    reply.header('Content-Type', ctx.metrics.registry.contentType);
    return ctx.metrics.registry.metrics();
  };
}
