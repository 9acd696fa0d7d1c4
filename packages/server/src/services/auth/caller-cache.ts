import { randomUUID } from 'node:crypto';
import { ErrorLabel } from '@partner-api/contract';
import type { FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import type { AppContext } from '../../context.ts';
import { AppError } from '../../lib/errors.ts';
import type { Caller } from './load-caller.ts';

/**
 * The caller (credential, organization state, signing key, token revocation) served from memory,
 * with revocation and deactivation exact across instances (docs/performance.md, "The signed GET").
 *
 * Every write that can change what `loadCaller` answers (a revoke, an organization or credential
 * patch, a signing key) runs through `invalidateCallers`, which moves an epoch before the write and
 * again after it, and registers the write as pending meanwhile. A cached caller is used only when
 * the epoch read for this request equals the epoch read before its row was loaded, and no write was
 * pending at either reading. With Redis, the epoch and the pending writes are read by one script
 * sent on the rate limiter's connection with the shared rate-limit decisions, once per event-loop
 * turn for all the signed requests of that turn, and only after every one of them has arrived
 * (plugins/rate-limit.ts): no round trip of its own. The proof: a write's response is sent after its
 * second bump; a request arriving later reads that epoch or a newer one (its reading is sent after
 * it arrived); an entry carrying it was loaded after the bump, so after the write's commit.
 *
 * - Redis configured: the epoch lives in Redis. A write that cannot register itself in Redis is
 *   refused (503) before it touches the database: it could not reach the other instances' caches.
 *   If the second bump fails, the write stays pending for PENDING_TTL_MS and no instance uses its
 *   cache until then. A request whose limiter decided in memory (Redis away) loads from the database.
 * - Embedded store without Redis (one process, DATA_DIR is locked): the epoch is a counter here.
 * - PostgreSQL without Redis (several instances possible, nothing shared to learn an epoch from):
 *   no cache, every request reads the database as before.
 */
export type EpochReading = { epoch: string; pending: boolean };

/** How long a write that never reported its end keeps every cache off (the writer lost Redis). */
export const PENDING_TTL_MS = 5 * 60_000;
const MAX_ENTRIES = 10_000;
const EPOCH_KEY = 'partner-api:auth:epoch';
const PENDING_KEY = 'partner-api:auth:pending';

// A fresh epoch starts at a random value, so that a Redis emptied by a restart never hands out an
// epoch an instance cached a caller under before.
const READ_SCRIPT = `if redis.call('EXISTS', KEYS[1]) == 0 then redis.call('SET', KEYS[1], ARGV[2]) end
return {redis.call('GET', KEYS[1]), redis.call('ZCOUNT', KEYS[2], ARGV[1], '+inf')}`;
const BEGIN_SCRIPT = `redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[3])
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
if redis.call('EXISTS', KEYS[1]) == 0 then redis.call('SET', KEYS[1], ARGV[5]) end
return redis.call('INCR', KEYS[1])`;
const END_SCRIPT = `redis.call('ZREM', KEYS[2], ARGV[1])
if redis.call('EXISTS', KEYS[1]) == 0 then redis.call('SET', KEYS[1], ARGV[2]) end
return redis.call('INCR', KEYS[1])`;

// Not a secret, only unlikely to repeat: Math.random, because randomBytes on every request (the
// value goes with each read, used only when the key is missing) cost ~18 µs of a signed GET's CPU.
const randomEpoch = () => String(Math.floor(Math.random() * 2 ** 40) * 1024);

type Script = (...args: (string | number)[]) => Promise<unknown>;
type Scripts = { authEpochRead: Script; authEpochBegin: Script; authEpochEnd: Script };

type Entry = { epoch: string; caller: Caller };

declare module 'fastify' {
  interface FastifyRequest {
    /** The caller-cache epoch read with the shared rate-limit decision (Redis mode only). */
    authEpoch?: EpochReading;
  }
}

export class CallerCache {
  readonly mode: 'redis' | 'local' | 'off';
  private readonly entries = new Map<string, Entry>();
  private lastEpoch = '';
  private localEpoch = 0;
  private localPending = 0;

  constructor(
    private readonly redis: Redis | undefined,
    kind: 'pglite' | 'postgres',
  ) {
    this.mode = redis ? 'redis' : kind === 'pglite' ? 'local' : 'off';
    // EVALSHA with EVAL as fallback: the script's text is not sent with every request.
    if (redis && !(redis as unknown as Scripts).authEpochRead) {
      redis.defineCommand('authEpochRead', { numberOfKeys: 2, lua: READ_SCRIPT });
      redis.defineCommand('authEpochBegin', { numberOfKeys: 2, lua: BEGIN_SCRIPT });
      redis.defineCommand('authEpochEnd', { numberOfKeys: 2, lua: END_SCRIPT });
    }
  }

  private get scripts(): Scripts {
    return this.redis as unknown as Scripts;
  }

  /** Redis mode: the epoch and whether a write is pending, in one script (sent beside the limiter's). */
  async readRedis(): Promise<EpochReading> {
    const [epoch, pending] = (await this.scripts.authEpochRead(
      EPOCH_KEY,
      PENDING_KEY,
      Date.now(),
      randomEpoch(),
    )) as [string, number];
    return { epoch, pending: pending > 0 };
  }

  /** The reading this request may use the cache under, or undefined (load from the database). */
  readingFor(request: FastifyRequest): EpochReading | undefined {
    if (this.mode === 'local') return { epoch: String(this.localEpoch), pending: this.localPending > 0 };
    if (this.mode === 'redis') return request.authEpoch;
    return undefined;
  }

  get(reading: EpochReading | undefined, credentialId: string, jti: string): Caller | undefined {
    if (!reading || reading.pending) return undefined;
    if (reading.epoch !== this.lastEpoch) {
      this.entries.clear();
      this.lastEpoch = reading.epoch;
      return undefined;
    }
    const entry = this.entries.get(`${credentialId} ${jti}`);
    return entry && entry.epoch === reading.epoch ? entry.caller : undefined;
  }

  /** `reading` must have been taken before `caller` was loaded. */
  set(reading: EpochReading | undefined, credentialId: string, jti: string, caller: Caller): void {
    if (!reading || reading.pending || reading.epoch !== this.lastEpoch) return;
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
    this.entries.set(`${credentialId} ${jti}`, { epoch: reading.epoch, caller });
  }

  /** Runs a write that changes what loadCaller answers; see the module comment. */
  async invalidateAround<T>(work: () => Promise<T>, log?: { error(obj: object, msg: string): void }) {
    if (this.mode === 'local') {
      this.localEpoch++;
      this.localPending++;
      try {
        return await work();
      } finally {
        this.localEpoch++;
        this.localPending--;
      }
    }
    if (this.mode === 'off') return work();
    const id = randomUUID();
    const now = Date.now();
    try {
      await this.scripts.authEpochBegin(
        EPOCH_KEY,
        PENDING_KEY,
        id,
        now + PENDING_TTL_MS,
        now - PENDING_TTL_MS,
        2 * PENDING_TTL_MS,
        randomEpoch(),
      );
    } catch (error) {
      log?.error({ err: error }, 'Redis unreachable: a change to credentials or tokens is refused');
      throw new AppError(503, ErrorLabel.unavailable);
    }
    try {
      return await work();
    } finally {
      await this.end(id, log);
    }
  }

  private async end(id: string, log?: { error(obj: object, msg: string): void }) {
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        await this.scripts.authEpochEnd(EPOCH_KEY, PENDING_KEY, id, randomEpoch());
        return;
      } catch (error) {
        if (attempt === 2)
          log?.error({ err: error }, 'Redis unreachable: caller caches stay off until the write expires');
        else await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  }
}

const caches = new WeakMap<AppContext, CallerCache>();

/** One cache per context (the public and the admin listener share it). */
export function callerCacheOf(ctx: AppContext): CallerCache {
  let cache = caches.get(ctx);
  if (!cache) {
    cache = new CallerCache(ctx.redis, ctx.database.kind);
    caches.set(ctx, cache);
  }
  return cache;
}

/** Wraps a write to credentials, organizations or revoked tokens (see CallerCache). */
export function invalidateCallers<T>(
  ctx: AppContext,
  work: () => Promise<T>,
  log?: { error(obj: object, msg: string): void },
): Promise<T> {
  return callerCacheOf(ctx).invalidateAround(work, log);
}
