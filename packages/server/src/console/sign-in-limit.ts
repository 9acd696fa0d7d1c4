import { createHash } from 'node:crypto';
import { type RateLimiterAbstract, RateLimiterMemory, RateLimiterRedis } from 'rate-limiter-flexible';
import type { AppContext } from '../context.ts';

/**
 * Failed console sign-ins counted per operator name and per address (docs/console.md, "Sign-in
 * attempt limit"): past `CONSOLE_SIGN_IN_LIMIT` failures of either within its window, sign-in is
 * refused without checking the credential until the window ends. Counted in Redis when REDIS_URL
 * is set (every instance shares the count), in this process's memory otherwise or while Redis fails.
 */
export type SignInLimit = {
  /** How long until a sign-in for `name` from `ip` may be tried again; 0 when it may now. */
  waitMs(name: string, ip: string): Promise<number>;
  /** One more failure for the name and the address. */
  failed(name: string, ip: string): Promise<void>;
  /** A success clears the name's failures (the address's stay: one good account must not reset them). */
  succeeded(name: string): Promise<void>;
};

const nameKey = (name: string) => `name:${createHash('sha256').update(name).digest('hex')}`;
const ipKey = (ip: string) => `ip:${ip}`;

export function createSignInLimit(ctx: AppContext): SignInLimit {
  const { points, durationSeconds } = ctx.config.CONSOLE_SIGN_IN_LIMIT;
  const base = { keyPrefix: `${ctx.rateLimitPrefix}:console-sign-in`, points, duration: durationSeconds };
  const memory = new RateLimiterMemory(base);
  const limiter: RateLimiterAbstract = ctx.redis
    ? new RateLimiterRedis({ ...base, storeClient: ctx.redis, insuranceLimiter: memory })
    : memory;
  return {
    async waitMs(name, ip) {
      const found = await Promise.all([limiter.get(nameKey(name)), limiter.get(ipKey(ip))]);
      return Math.max(0, ...found.map((res) => (res && res.consumedPoints >= points ? res.msBeforeNext : 0)));
    },
    async failed(name, ip) {
      await Promise.all([limiter.penalty(nameKey(name)), limiter.penalty(ipKey(ip))]);
    },
    async succeeded(name) {
      await limiter.delete(nameKey(name));
    },
  };
}
