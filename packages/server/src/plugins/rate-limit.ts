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
   * Read once per event-loop turn beside the turn's shared (Redis) global decisions, on the same
   * connection, for the requests of that turn that present a token: the caller cache's epoch
   * (services/auth/caller-cache.ts), kept on each such request as `authEpoch`.
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

type Decision = { res: RateLimiterRes; limited: boolean };

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

  async function decide(limiter: RateLimiterAbstract, request: FastifyRequest): Promise<Decision> {
    try {
      return { res: await limiter.consume(request.ip), limited: false };
    } catch (outcome) {
      if (outcome instanceof RateLimiterRes) return { res: outcome, limited: true };
      throw outcome;
    }
  }

  /**
   * The shared decisions of one event-loop turn, taken together when the turn ends (its check
   * phase): each address's requests on a limiter become one command that consumes as many points as
   * there are requests, and the signed requests among them share one reading of the caller-cache
   * epoch. All of them leave in one write on the corked socket, and Redis answers them in one read
   * (docs/performance.md, "One command per address and turn"). The outcome of each request is the
   * one it would have had alone: Redis adds the k points at once, so the requests hold the counts
   * N-k+1 ... N in arrival order, and a request is refused exactly when its count is over the limit.
   * The shared epoch is read after every request that uses it had arrived, which is what the caller
   * cache's guarantee asks (services/auth/caller-cache.ts).
   */
  type Waiter = { resolve(decision: Decision): void; reject(error: unknown): void };
  let turn: Map<Limiter, Map<string, Waiter[]>> | undefined;
  let epochWaiters: ((reading: EpochReading | undefined) => void)[] = [];

  function takeTurn(): void {
    const batches = turn!;
    const epochs = epochWaiters;
    turn = undefined;
    epochWaiters = [];
    const socket = options.redis?.status === 'ready' ? options.redis.stream : undefined;
    socket?.cork();
    try {
      if (epochs.length > 0) {
        const settle = (reading: EpochReading | undefined) => {
          for (const waiter of epochs) waiter(reading);
        };
        options.readEpoch!().then(settle, () => settle(undefined));
      }
      for (const [limiter, byKey] of batches) {
        for (const [key, waiters] of byKey) consumeTogether(limiter, key, waiters);
      }
    } finally {
      socket?.uncork();
    }
  }

  function consumeTogether(limiter: Limiter, key: string, waiters: Waiter[]): void {
    const k = waiters.length;
    const share = (total: RateLimiterRes) => {
      waiters.forEach((waiter, i) => {
        const consumed = total.consumedPoints - k + 1 + i;
        const res = new RateLimiterRes(
          Math.max(0, limiter.spec.points - consumed),
          total.msBeforeNext,
          consumed,
          total.isFirstInDuration && i === 0,
        );
        waiter.resolve({ res, limited: consumed > limiter.spec.points });
      });
    };
    const fail = (outcome: unknown) => {
      if (outcome instanceof RateLimiterRes) return share(outcome);
      for (const waiter of waiters) waiter.reject(outcome);
    };
    try {
      limiter.primary.consume(key, k).then(share, fail);
    } catch (error) {
      fail(error);
    }
  }

  function decideInTurn(limiter: Limiter, key: string): Promise<Decision> {
    if (!turn) {
      turn = new Map();
      setImmediate(takeTurn);
    }
    let byKey = turn.get(limiter);
    if (!byKey) {
      byKey = new Map();
      turn.set(limiter, byKey);
    }
    let waiters = byKey.get(key);
    if (!waiters) {
      waiters = [];
      byKey.set(key, waiters);
    }
    const queue = waiters;
    return new Promise<Decision>((resolve, reject) => queue.push({ resolve, reject }));
  }

  /** The shared decision, and for the global limiter the caller-cache epoch read in the same turn. */
  async function decideShared(limiter: Limiter, request: FastifyRequest): Promise<Decision> {
    const decided = decideInTurn(limiter, request.ip);
    // Only a request that presents a token can use the caller cache (the webhook key never does).
    if (limiter !== global || !options.readEpoch || request.headers.authorization === undefined)
      return decided;
    const epoch = new Promise<EpochReading | undefined>((resolve) => epochWaiters.push(resolve));
    const decision = await decided;
    request.authEpoch = await epoch;
    return decision;
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
