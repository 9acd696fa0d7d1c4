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
import type { Metrics } from '../lib/metrics.ts';
import type { EpochReading } from '../services/auth/caller-cache.ts';

export type LimitSpec = { points: number; durationSeconds: number };

/** Exempt from every limit and from the RateLimit-* headers (spec, Limits rule 3). */
export const RATE_LIMIT_EXEMPT = new Set(['/healthz', '/metrics']);
export const TOKEN_PATH = '/v1/oauth/token';
/** Not a Partner API answer (no partner calls the callback routes): what a provider's 429 says. */
export const CALLBACK_LIMIT_MESSAGE = 'Too many provider callbacks from this address; try again shortly.';
/**
 * After Redis fails a decision, decisions are taken in memory at once for this long, then Redis is
 * tried again. A frozen Redis (a partition) costs the command timeout (500 ms) to one request a
 * second instead of to every request.
 */
export const REDIS_RETRY_AFTER_MS = 1000;

type Limiter = {
  spec: LimitSpec;
  message: string;
  /** `RateLimit-Policy` and `RateLimit-Limit`, the same on every response. */
  policy: string;
  limit: string;
  primary: RateLimiterAbstract;
  /** In-memory twin used while Redis cannot be reached (documented fallback). */
  fallback?: RateLimiterMemory;
};

export type RateLimitOptions = {
  global: LimitSpec;
  token: LimitSpec;
  /** Provider callbacks under their right path token, per source (PROVIDER_CALLBACK_RATE_LIMIT). */
  callbacks: LimitSpec;
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
  const fixed = {
    spec,
    message,
    policy: `${spec.points};w=${spec.durationSeconds}`,
    limit: String(spec.points),
  };
  if (!options.redis) return { ...fixed, primary: memory };
  return {
    ...fixed,
    primary: new RateLimiterRedis({ ...base, storeClient: options.redis }),
    fallback: memory,
  };
}

type Decision = { res: RateLimiterRes; limited: boolean };
/**
 * Callback style on the hot path: no promise and no microtask per layer (docs/performance.md, "The
 * key route against bare Fastify").
 */
type Decided = (error: unknown, decision?: Decision) => void;

/**
 * The RateLimit-* headers of one decision; the policy and the limit are the limiter's own. Named in
 * lower case, as they go on the wire: Fastify lower-cases every name it is given, and a name that
 * is already lower case costs no new string on each request (docs/performance.md, "The key route
 * against bare Fastify").
 */
function headersFor(limiter: Limiter, res: RateLimiterRes): Record<string, string> {
  return {
    'ratelimit-policy': limiter.policy,
    'ratelimit-limit': limiter.limit,
    'ratelimit-remaining': String(Math.max(0, res.remainingPoints)),
    'ratelimit-reset': String(Math.max(0, Math.ceil(res.msBeforeNext / 1000))),
  };
}

/** Registers the global limiter (and the token endpoint's, in addition) as the first onRequest hook. */
export function installRateLimits(app: FastifyInstance, options: RateLimitOptions): void {
  const global = createLimiter('global', options.global, ErrorMessage.rateLimitGlobal, options);
  const token = createLimiter('token', options.token, ErrorMessage.rateLimitToken, options);
  const callbacks = createLimiter('callbacks', options.callbacks, CALLBACK_LIMIT_MESSAGE, options);
  let lastFallbackLog = 0;
  let redisSkippedUntil = 0;

  function decide(limiter: RateLimiterAbstract, request: FastifyRequest, then: Decided): void {
    limiter.consume(request.ip).then(
      (res) => then(undefined, { res, limited: false }),
      (outcome) =>
        outcome instanceof RateLimiterRes ? then(undefined, { res: outcome, limited: true }) : then(outcome),
    );
  }

  /**
   * The shared decisions of one event-loop turn, taken together when the turn ends (its check
   * phase): each address's requests on a limiter become one command that consumes as many points as
   * there are requests, and the signed requests among them share one reading of the caller-cache
   * epoch. All of them leave in one write on the corked socket, and Redis answers them in one read
   * (docs/performance.md, "The key route against bare Fastify"). The outcome of each request is the
   * one it would have had alone: Redis adds the k points at once, so the requests hold the counts
   * N-k+1 ... N in arrival order, and a request is refused exactly when its count is over the limit.
   * The shared epoch is read after every request that uses it had arrived, which is what the caller
   * cache's guarantee asks (services/auth/caller-cache.ts).
   */
  let turn: Map<Limiter, Map<string, Decided[]>> | undefined;
  let epochWaiters: ((reading: EpochReading | undefined) => void)[] = [];

  /**
   * Goes on with one request of the turn: into the next hook and on through Fastify's pipeline, in
   * this callback. Fastify catches what its hooks and handlers throw; should anything else throw, the
   * requests after this one must still go on, and the error must not become an unhandled rejection.
   */
  function resume(next: () => void): void {
    try {
      next();
    } catch (error) {
      app.log.error({ err: error }, 'rate limit: a request could not go on after its decision');
    }
  }

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
          for (const waiter of epochs) resume(() => waiter(reading));
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

  function consumeTogether(limiter: Limiter, key: string, waiters: Decided[]): void {
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
        resume(() => waiter(undefined, { res, limited: consumed > limiter.spec.points }));
      });
    };
    const fail = (outcome: unknown) => {
      if (outcome instanceof RateLimiterRes) return share(outcome);
      for (const waiter of waiters) resume(() => waiter(outcome));
    };
    try {
      limiter.primary.consume(key, k).then(share, fail);
    } catch (error) {
      fail(error);
    }
  }

  function decideInTurn(limiter: Limiter, key: string, then: Decided): void {
    if (!turn) {
      turn = new Map();
      setImmediate(takeTurn);
    }
    let byKey = turn.get(limiter);
    if (!byKey) {
      byKey = new Map();
      turn.set(limiter, byKey);
    }
    const waiters = byKey.get(key);
    if (waiters) waiters.push(then);
    else byKey.set(key, [then]);
  }

  /** The shared decision, and for the global limiter the caller-cache epoch read in the same turn. */
  function decideShared(limiter: Limiter, request: FastifyRequest, then: Decided) {
    // Only a request that presents a token can use the caller cache (the webhook key never does).
    if (limiter !== global || !options.readEpoch || request.headers.authorization === undefined)
      return decideInTurn(limiter, request.ip, then);
    // Both answers, in whichever order they come: the decision, and the epoch (undefined when it
    // could not be read, which sends the caller to the database).
    let waiting = 2;
    let failure: unknown;
    let decided: Decision | undefined;
    const arrived = () => {
      if (--waiting === 0) then(failure, decided);
    };
    epochWaiters.push((reading) => {
      request.authEpoch = reading;
      arrived();
    });
    decideInTurn(limiter, request.ip, (error, decision) => {
      failure = error;
      decided = decision;
      arrived();
    });
  }

  function consume(limiter: Limiter, request: FastifyRequest, then: Decided) {
    const fallback = limiter.fallback;
    if (!fallback) return decide(limiter.primary, request, then);
    const inMemory = () => {
      options.metrics.rateLimitFallback.inc();
      decide(fallback, request, then);
    };
    if (Date.now() < redisSkippedUntil) return inMemory();
    decideShared(limiter, request, (error, decision) => {
      if (!error) return then(undefined, decision);
      redisSkippedUntil = Date.now() + REDIS_RETRY_AFTER_MS;
      if (Date.now() - lastFallbackLog > 10_000) {
        lastFallbackLog = Date.now();
        request.log.warn(
          { err: error },
          "Redis unreachable: rate limits fall back to this instance's memory",
        );
      }
      inMemory();
    });
  }

  /** Decides, sets the RateLimit-* headers, and passes on a 429 as the error. */
  function apply(
    limiter: Limiter,
    request: FastifyRequest,
    reply: FastifyReply,
    then: (error?: unknown) => void,
  ) {
    consume(limiter, request, (error, decision) => {
      if (error) return then(error);
      const { res, limited } = decision!;
      const headers = headersFor(limiter, res);
      reply.headers(headers);
      if (!limited) return then();
      options.metrics.rejections.inc({ reason: 'rate_limit' });
      const retry = { ...headers, 'retry-after': headers['ratelimit-reset']! };
      then(new AppError(429, ErrorLabel.tooManyRequests, limiter.message, undefined, retry));
    });
  }

  app.addHook('onRequest', (request, reply, done) => {
    // Decide by the matched route, never the raw URL: the router decodes `/v1/oauth/%74oken` to the
    // token endpoint, and a raw-string compare would let that spelling skip the token budget.
    // Fastify builds `routeOptions` afresh on each read: read once.
    const { url: route, config } = request.routeOptions;
    if (route !== undefined && RATE_LIMIT_EXEMPT.has(route)) return done();
    // A provider callback under its right path token (services/payments/providers/mpesa/routes.ts) has a budget of its
    // own, far above the partners' (a provider sends every customer's callback from a few
    // addresses); a wrong token is limited like any unknown path.
    if (config?.rateLimitExempt?.(request))
      return apply(callbacks, request, reply, (error) => done(error as Error | undefined));
    apply(global, request, reply, (error) => {
      // Token attempts count against both budgets; the token limiter's headers replace the global ones.
      if (error || request.method !== 'POST' || route !== TOKEN_PATH) return done(error as Error | undefined);
      apply(token, request, reply, (tokenError) => done(tokenError as Error | undefined));
    });
  });
}
