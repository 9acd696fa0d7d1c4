/**
 * The soak's shortened form: bench/soak.ts for SOAK_SECONDS (default 20 here) against a
 * started server on PostgreSQL. The full run is `npm run soak` (600 s); see docs/reliability.md.
 */

import { POSTGRES_SKIP_REASON } from '@partner-api/testkit/app.ts';
import { scratchDatabase } from '@partner-api/testkit/database.ts';
import { describe, expect, it } from 'vitest';
import { runSoak } from '../../../../bench/soak.ts';

const DATABASE_URL = process.env.DATABASE_URL;
const SECONDS = Number(process.env.SOAK_SECONDS ?? 20);

if (!DATABASE_URL)
  describe('soak', () =>
    it.skip(`${POSTGRES_SKIP_REASON} (the soak reconciles against PostgreSQL)`, () => {}));

describe.skipIf(!DATABASE_URL)('soak (shortened)', () => {
  it(`${SECONDS} s of mixed traffic: no error, nothing lost, counts reconciled, memory bounded`, async () => {
    // A database of its own: the servers other suites start (and SIGKILL, reliability/faults.test.ts)
    // use the same sandbox adapter, and a worker killed holding a lease on the soak's payment
    // requests leaves them for 60 s, past the soak's wait (docs/reliability.md, "The soak").
    const database = await scratchDatabase(DATABASE_URL!, 'soak');
    const report = await runSoak({
      seconds: SECONDS,
      concurrency: 20,
      databaseUrl: database.url,
      redisUrl: process.env.REDIS_URL,
      // 20 s is still V8's and the pools' warm-up (seen here: +44 MB on a loaded machine); the 50 MB
      // bound is the full soak's, over ten minutes. This form catches a gross leak only.
      rssBoundMb: 100,
      log: () => {},
    }).finally(() => database.drop());
    process.stdout.write(
      `[reliability] soak ${report.seconds} s: ${report.requests} requests served, ${report.errors} errors, ` +
        `${report.writesLost} writes lost, ${report.ordersPlaced} orders (${JSON.stringify(report.ordersByStatus)}), ` +
        `RSS ${report.rss.firstWindowMedianMb} → ${report.rss.lastWindowMedianMb} MB\n`,
    );
    expect(report.errorSamples).toEqual([]);
    expect(report.reconciliationProblems).toEqual([]);
    expect(report.serverErrors).toEqual([]);
    expect(report.errors).toBe(0);
    expect(report.writesLost).toBe(0);
    expect(report.unexpectedWrites).toBe(0);
    expect(report.requests).toBeGreaterThan(SECONDS * 5);
    expect(report.ordersPlaced).toBeGreaterThan(0);
    expect(report.rss.growthMb).toBeLessThan(report.rss.boundMb);
  }, 240_000);
});
