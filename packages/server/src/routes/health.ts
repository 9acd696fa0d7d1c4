import { ErrorLabel } from '@partner-api/contract';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.ts';

const PING_TIMEOUT_MS = 2000;

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('timeout')), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Root-level operational routes: outside /v1, exempt from rate limits. */
export async function healthRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }) {
  app.get('/healthz', async (request, reply) => {
    const database = await withTimeout(ctx.database.ping(), PING_TIMEOUT_MS).then(
      () => 'ok' as const,
      () => 'unavailable' as const,
    );
    let redis: 'ok' | 'unavailable' | 'not configured' = 'not configured';
    if (ctx.redis) redis = ctx.redis.status === 'ready' ? 'ok' : 'unavailable';
    // Redis down is degraded, not down: limits fall back to memory.
    if (database !== 'ok') {
      request.log.error({ checks: { database, redis } }, 'health check failed');
      return reply.code(503).send({ error: ErrorLabel.unavailable });
    }
    return { status: 'ok', store: ctx.database.kind, checks: { database, redis } };
  });

  app.get('/metrics', async (_request, reply) => {
    reply.header('Content-Type', ctx.metrics.registry.contentType);
    return ctx.metrics.registry.metrics();
  });
}
