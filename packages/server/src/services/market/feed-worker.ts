import { sql } from 'drizzle-orm';
import type { AppContext } from '../../context.ts';
import { one } from '../../db/query.ts';
import type { Log } from '../payments/provider.ts';
import { NSE, sessionAt } from './calendar.ts';
import type { PriceFeed } from './feed/index.ts';
import { marketHolidays } from './holidays.ts';
import { isStale, recordPrice } from './prices.ts';

/** What /healthz says of the feed: `failing` after a failed pull, `stale` when its newest price is too old in a session. */
export type FeedHealth = {
  state: 'starting' | 'ok' | 'failing' | 'stale';
  lastPullAt: Date | null;
  lastSuccessAt: Date | null;
  lastError: string | null;
  newestAsOf: Date | null;
};

export type PullReport = {
  ok: boolean;
  applied: number;
  held: number;
  unknown: number;
  repeated: number;
  rejected: number;
};

export type FeedWorker = { pullNow(): Promise<PullReport>; health(): FeedHealth; stop(): Promise<void> };

/**
 * Pulls the feed every `intervalMs` and records each price (source FEED): applied, or held beyond
 * the band (services/market/prices.ts). A price the feed repeats (same instrument and as-of time) is
 * recorded once; a symbol we do not list is counted and skipped. One pull at a time.
 */
export function startFeedWorker(ctx: AppContext, feed: PriceFeed, intervalMs: number, log: Log): FeedWorker {
  const db = ctx.database.db;
  const health: FeedHealth = {
    state: 'starting',
    lastPullAt: null,
    lastSuccessAt: null,
    lastError: null,
    newestAsOf: null,
  };
  let running: Promise<PullReport> | undefined;
  let stopped = false;

  const pull = async (): Promise<PullReport> => {
    const report: PullReport = { ok: false, applied: 0, held: 0, unknown: 0, repeated: 0, rejected: 0 };
    health.lastPullAt = ctx.clock();
    const answer = await feed.pull();
    if (!answer.ok) {
      ctx.metrics.priceFeedPulls.inc({ outcome: 'failed' });
      health.state = 'failing';
      health.lastError = answer.reason;
      log.warn({ reason: answer.reason }, 'price feed pull failed');
      return report;
    }
    ctx.metrics.priceFeedPulls.inc({ outcome: 'ok' });
    report.ok = true;
    report.rejected = answer.rejected.length;
    if (answer.rejected.length > 0)
      log.warn({ rejected: answer.rejected.slice(0, 20) }, 'price feed rows rejected');
    for (const price of answer.prices) {
      const outcome = await db.transaction(async (tx) => {
        const seen = await one<{ id: string }>(
          tx,
          sql`select p.id from prices p join stocks s on s.id = p.stock_id
  where s.symbol = ${price.symbol} and p.as_of = ${price.asOf.toISOString()}::timestamptz and p.source = 'FEED' limit 1`,
        );
        if (seen) return 'repeated' as const;
        const recorded = await recordPrice(tx, { ...price, source: 'FEED' });
        if (!recorded) return 'unknown' as const;
        return recorded.status === 'HELD' ? ('held' as const) : ('applied' as const);
      });
      report[outcome] += 1;
      if (!health.newestAsOf || price.asOf > health.newestAsOf) health.newestAsOf = price.asOf;
    }
    for (const outcome of ['applied', 'held', 'unknown', 'repeated', 'rejected'] as const)
      if (report[outcome] > 0) ctx.metrics.feedPrices.inc({ outcome }, report[outcome]);
    if (report.held > 0)
      log.warn({ held: report.held }, 'price feed: prices beyond the band held for the operator');
    const now = ctx.clock();
    health.lastSuccessAt = now;
    health.lastError = null;
    // Stale: in a session, the newest price the feed gave is older than the maximum age.
    const open = sessionAt(NSE, now, await marketHolidays(db, NSE.mic, now)).state === 'OPEN';
    const stale = open && isStale(health.newestAsOf, now, ctx.config.PRICE_MAX_AGE_SECONDS * 1000);
    health.state = stale ? 'stale' : 'ok';
    if (stale) log.warn({ newestAsOf: health.newestAsOf }, 'price feed is stale');
    return report;
  };

  const pullNow = () => {
    running ??= pull()
      .catch((error: unknown) => {
        health.state = 'failing';
        health.lastError = 'the prices could not be recorded';
        log.error({ err: error }, 'price feed pull not recorded');
        return { ok: false, applied: 0, held: 0, unknown: 0, repeated: 0, rejected: 0 };
      })
      .finally(() => (running = undefined));
    return running;
  };
  const timer = setInterval(() => {
    if (!stopped) void pullNow();
  }, intervalMs);
  timer.unref();
  void pullNow();

  return {
    pullNow,
    health: () => ({ ...health }),
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
