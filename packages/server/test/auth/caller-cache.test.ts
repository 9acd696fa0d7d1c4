import { freePort } from '@partner-api/testkit/process.ts';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/lib/errors.ts';
import { CallerCache, type EpochReading } from '../../src/services/auth/caller-cache.ts';
import type { Caller } from '../../src/services/auth/load-caller.ts';

const caller = (): Caller => ({
  credentialId: 'cred',
  organizationId: 'org',
  clientId: 'client',
  isActive: true,
  expiresAt: null,
  lastUsedAt: null,
  keyId: 'key',
  publicKey: 'pem',
  trustedIps: [],
  organizationActive: true,
  revoked: false,
});

describe('the caller cache: when an entry may be used', () => {
  it('PostgreSQL without Redis: no cache at all (nothing shared to learn an epoch from)', () => {
    const cache = new CallerCache(undefined, 'postgres');
    expect(cache.mode).toBe('off');
    const reading = cache.readingFor({} as never);
    expect(reading).toBeUndefined();
    cache.set(reading, 'cred', 'jti', caller());
    expect(cache.get(reading, 'cred', 'jti')).toBeUndefined();
  });

  it('embedded store: a write drops what was read before it, and nothing is cached while it runs', async () => {
    const cache = new CallerCache(undefined, 'pglite');
    expect(cache.mode).toBe('local');
    const first = cache.readingFor({} as never)!;
    expect(cache.get(first, 'cred', 'jti')).toBeUndefined();
    cache.set(first, 'cred', 'jti', caller());
    expect(cache.get(cache.readingFor({} as never), 'cred', 'jti')).toBeDefined();

    let during: EpochReading | undefined;
    await cache.invalidateAround(async () => {
      during = cache.readingFor({} as never);
      // A load that started before the write and finishes during it: not usable afterwards.
      cache.set(first, 'cred', 'jti', caller());
    });
    expect(during?.pending).toBe(true);
    expect(cache.get(during, 'cred', 'jti')).toBeUndefined();
    const after = cache.readingFor({} as never);
    expect(after?.pending).toBe(false);
    expect(cache.get(after, 'cred', 'jti')).toBeUndefined();
    // A write that fails moves the epoch too.
    await expect(
      cache.invalidateAround(async () => {
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(cache.readingFor({} as never)?.epoch).not.toBe(after?.epoch);
  });

  it('an entry is served only under the epoch it was loaded at, never while a write is pending', () => {
    const cache = new CallerCache(undefined, 'pglite');
    const at = (epoch: string, pending = false): EpochReading => ({ epoch, pending });
    expect(cache.get(at('7'), 'cred', 'jti')).toBeUndefined();
    cache.set(at('7'), 'cred', 'jti', caller());
    expect(cache.get(at('7'), 'cred', 'jti')).toBeDefined();
    expect(cache.get(at('7', true), 'cred', 'jti')).toBeUndefined();
    expect(cache.get(at('7'), 'cred', 'other-jti')).toBeUndefined();
    expect(cache.get(at('8'), 'cred', 'jti')).toBeUndefined();
    // A late load tagged with the older epoch is kept under its own tag, never served for the new one.
    cache.set(at('7'), 'cred', 'jti', caller());
    expect(cache.get(at('8'), 'cred', 'jti')).toBeUndefined();
    cache.set(at('8', true), 'cred', 'jti', caller());
    expect(cache.get(at('8'), 'cred', 'jti')).toBeUndefined();
  });
});

describe.skipIf(!process.env.REDIS_URL)('the caller cache with Redis', () => {
  const clients: Redis[] = [];
  const client = (url: string) => {
    const redis = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect: false });
    redis.on('error', () => {});
    clients.push(redis);
    return redis;
  };
  afterAll(() => {
    for (const redis of clients) redis.disconnect();
  });

  it('a write moves the shared epoch, and is pending for every reader while it runs', async () => {
    const redis = client(process.env.REDIS_URL!);
    await new Promise((resolve) => redis.once('ready', resolve));
    const writer = new CallerCache(redis, 'postgres');
    const reader = new CallerCache(redis, 'postgres');
    const before = await reader.readRedis();
    let during: EpochReading | undefined;
    await writer.invalidateAround(async () => {
      during = await reader.readRedis();
    });
    const after = await reader.readRedis();
    expect(during?.pending).toBe(true);
    expect(new Set([before.epoch, during?.epoch, after.epoch]).size).toBe(3);
    // Other tests may write at the same time: pending is false once none is running.
    const deadline = Date.now() + 5000;
    let settled = after;
    while (settled.pending && Date.now() < deadline) settled = await reader.readRedis();
    expect(settled.pending).toBe(false);
  });

  it('Redis unreachable: the write is refused with a 503 before it touches the database', async () => {
    const redis = client(`redis://127.0.0.1:${await freePort()}`);
    const cache = new CallerCache(redis, 'postgres');
    let ran = false;
    const outcome = await cache
      .invalidateAround(async () => {
        ran = true;
      })
      .catch((error: unknown) => error);
    expect(outcome).toBeInstanceOf(AppError);
    expect((outcome as AppError).statusCode).toBe(503);
    expect(ran).toBe(false);
  });
});
