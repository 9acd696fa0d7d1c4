import { ErrorLabel, ErrorMessage } from '@partner-api/contract';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import {
  type RateLimiterAbstract,
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
} from 'rate-limiter-flexible';
import { AppError } from '../lib/errors.ts';
import type { EpochReading } from '../services/auth/caller-cache.ts';
import type { Metrics } from './metrics.ts';

export type LimitSpec = { points: number; durationSeconds: number };

/** Exempt from every limit and from the RateLimit-* headers (spec, Limits rule 3). */
export const RATE_LIMIT_EXEMPT = new Set(['/healthz', '/metrics']);
export const TOKEN_PATH = '/v1/oauth/token';
/**
 * After Redis fails a decision, decisions are taken in memory at once for this long, then Redis is
 * tried again. A frozen Redis (a partition) costs the command timeout (500 ms) to one request a
 * second instead of to every request.
 */
export const REDIS_RETRY_AFTER_MS = 1000;

type Limiter = {
  spec: LimitSpec;
  message: string;
  primary: RateLimiterAbstract;
  /** In-memory twin used while Redis cannot be reached (documented fallback). */
  fallback?: RateLimiterMemory;
};

export type RateLimitOptions = {
  global: LimitSpec;
  token: LimitSpec;
  redis?: Redis;
  /** Instances that must share one budget use one prefix. */
  prefix: string;
  metrics: Metrics;
  /**
   * Read beside every shared (Redis) global decision, in the same tick on the same connection: the
   * caller cache's epoch (services/auth/caller-cache.ts), kept on the request as `authEpoch`.
   */
  readEpoch?: () => Promise<EpochReading>;
};

function createLimiter(name: string, spec: LimitSpec, message: string, options: RateLimitOptions): Limiter {
  const base = {
    keyPrefix: `${options.prefix}:${name}`,
    points: spec.points,
    duration: spec.durationSeconds,
  };
  const memory = new RateLimiterMemory(base);
  if (!options.redis) return { spec, message, primary: memory };
  return {
    spec,
    message,
    primary: new RateLimiterRedis({ ...base, storeClient: options.redis }),
    fallback: memory,
  };
}

function headersFor(spec: LimitSpec, res: RateLimiterRes): Record<string, string> {
  return {
    'RateLimit-Policy': `${spec.points};w=${spec.durationSeconds}`,
    'RateLimit-Limit': String(spec.points),
    'RateLimit-Remaining': String(Math.max(0, res.remainingPoints)),
    'RateLimit-Reset': String(Math.max(0, Math.ceil(res.msBeforeNext / 1000))),
  };
}

/** Registers the global limiter (and the token endpoint's, in addition) as the first onRequest hook. */
export function installRateLimits(app: FastifyInstance, options: RateLimitOptions): void {
  const global = createLimiter('global', options.global, ErrorMessage.rateLimitGlobal, options);
  const token = createLimiter('token', options.token, ErrorMessage.rateLimitToken, options);
  let lastFallbackLog = 0;
  let redisSkippedUntil = 0;

  async function decide(
    limiter: RateLimiterAbstract,
    request: FastifyRequest,
  ): Promise<{ res: RateLimiterRes; limited: boolean }> {
    try {
      return { res: await limiter.consume(request.ip), limited: false };
    } catch (outcome) {
      if (outcome instanceof RateLimiterRes) return { res: outcome, limited: true };
      throw outcome;
    }
  }

  /**
   * The Redis socket stays corked until the event loop's next check phase: every command issued by
   * the requests of one loop turn (each one's limiter command, a signed request's epoch script beside
   * it) leaves in one write, and Redis answers them in one read (docs/performance.md, "One Redis
   * write per loop turn"). ioredis writes each command synchronously as it is issued, so a corked
   * socket holds them.
   */
  let corked = false;
  function corkUntilNextTurn(): void {
    if (corked || options.redis?.status !== 'ready') return;
    const socket = options.redis.stream;
    corked = true;
    socket.cork();
    setImmediate(() => {
      corked = false;
      socket.uncork();
    });
  }

  /** The shared decision, and for the global limiter the caller-cache epoch sent beside it. */
  async function decideShared(limiter: Limiter, request: FastifyRequest) {
    corkUntilNextTurn();
    // Only a request that presents a token can use the caller cache (the webhook key never does).
    if (limiter !== global || !options.readEpoch || request.headers.authorization === undefined)
      return decide(limiter.primary, request);
    const epoch = options.readEpoch().catch(() => undefined);
    const decided = await decide(limiter.primary, request);
    request.authEpoch = await epoch;
    return decided;
  }

  async function consume(limiter: Limiter, request: FastifyRequest) {
    if (!limiter.fallback) return decide(limiter.primary, request);
    if (Date.now() >= redisSkippedUntil) {
      try {
        return await decideShared(limiter, request);
      } catch (error) {
        redisSkippedUntil = Date.now() + REDIS_RETRY_AFTER_MS;
        if (Date.now() - lastFallbackLog > 10_000) {
          lastFallbackLog = Date.now();
          request.log.warn(
            { err: error },
            "Redis unreachable: rate limits fall back to this instance's memory",
          );
        }
      }
    }
    options.metrics.rateLimitFallback.inc();
    return decide(limiter.fallback, request);
  }

  async function apply(limiter: Limiter, request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const { res, limited } = await consume(limiter, request);
    const headers = headersFor(limiter.spec, res);
    reply.headers(headers);
    if (limited) {
      options.metrics.rejections.inc({ reason: 'rate_limit' });
      const retry = { ...headers, 'Retry-After': headers['RateLimit-Reset']! };
      throw new AppError(429, ErrorLabel.tooManyRequests, limiter.message, undefined, retry);
    }
  }

  app.addHook('onRequest', async (request, reply) => {
    // Decide by the matched route, never the raw URL: the router decodes `/v1/oauth/%74oken` to the
    // token endpoint, and a raw-string compare would let that spelling skip the token budget.
    // Fastify builds `routeOptions` afresh on each read: read once.
    const { url: route, config } = request.routeOptions;
    if (route !== undefined && RATE_LIMIT_EXEMPT.has(route)) return;
    // A provider callback under its right path token (routes/daraja-callbacks.ts): a wrong token is
    // limited like any unknown path.
    if (config?.rateLimitExempt?.(request)) return;
    await apply(global, request, reply);
    // Token attempts count against both budgets; the token limiter's headers replace the global ones.
    if (request.method === 'POST' && route === TOKEN_PATH) await apply(token, request, reply);
  });
}
