/**
 * Scenario 7: the USSD buy path's server CPU per request. Walks of scenario 4 (open → HOME → STOCKS
 * → SELECT_STOCK → BUY_AMOUNT → BUY_CONFIRM → BUY_SUBMITTED, six signed requests), a fixed number at
 * once with no pause (500 at once queued past the pool's 3 s connect timeout on a loaded machine), after a warm-up whose orders are executed before the measured walks begin. Measured:
 * the server process's CPU time (/proc) over the walks, per request; and, on PostgreSQL, the CPU from
 * the first request until every order of the walks is EXECUTED (the sandbox's collection settles
 * SANDBOX_SETTLE_MS later, then the payment worker executes the buy), per walk.
 */
import { adminFetch } from '@partner-api/testkit/helpers.ts';
import pg from 'pg';
import type { BenchPartner } from './partner.ts';
import { cpuSeconds } from './processes.ts';
import { runUssd, type UssdResult } from './ussd.ts';

export type BuyCpuResult = {
  walks: number;
  /** Walks at once. */
  walkers: number;
  requests: number;
  errors: number;
  errorSamples: string[];
  throughput: number;
  p50Ms: number;
  p99Ms: number;
  /** Server CPU over the walks, per request (µs). */
  cpuUsPerRequest: number;
  /** PostgreSQL only: server CPU from the first request until every order was executed, per walk (µs). */
  settled?: { cpuUsPerWalk: number; seconds: number };
  /** Prices made fresh by the server's clock before the walks (market hours enforced), if any. */
  pricesRefreshed: number;
};

export type BuyCpuOptions = {
  server: { pid: number; adminUrl: string; adminToken: string };
  /** The scratch database on PostgreSQL; undefined on the embedded store. */
  databaseUrl?: string;
  warmWalks: number;
  walks: number;
  /** Walks at once. */
  concurrency: number;
  /** Whether the server enforces market hours: every active stock gets a price as of its clock. */
  marketHoursEnforced: boolean;
  settleMs: number;
  log: (line: string) => void;
};

/** A connection of the bench's own to the server's scratch database, to watch its orders. */
async function orderWatch(databaseUrl: string) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  return {
    client,
    async waitExecuted(timeoutMs = 120_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const { rows } = await client.query<{ waiting: number }>(
          `select count(*)::int as waiting from orders where status <> 'EXECUTED'`,
        );
        if (rows[0]?.waiting === 0) return;
        if (Date.now() > deadline) throw new Error(`${rows[0]?.waiting} orders never executed`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    close: () => client.end(),
  };
}

/** `customerIds`: at least warmWalks + walks customers with a number, none with a session yet. */
export async function runBuyCpu(
  partner: BenchPartner,
  customerIds: string[],
  options: BuyCpuOptions,
): Promise<BuyCpuResult> {
  const { server, warmWalks, walks } = options;
  if (customerIds.length < warmWalks + walks) throw new Error('runBuyCpu: too few customers');
  const watch = options.databaseUrl ? await orderWatch(options.databaseUrl) : undefined;
  const settle = () =>
    watch ? watch.waitExecuted() : new Promise((resolve) => setTimeout(resolve, options.settleMs + 2000));
  try {
    let pricesRefreshed = 0;
    if (options.marketHoursEnforced) {
      if (!watch)
        throw new Error('market hours enforced: the buy scenario refreshes prices on PostgreSQL only');
      const { rows } = await watch.client.query<{ symbol: string; price: string }>(
        'select symbol, price::text as price from stocks where is_active',
      );
      for (const { symbol, price } of rows) {
        const answer = await adminFetch(server.adminUrl, server.adminToken, 'POST', '/admin/prices', {
          symbol,
          price,
        });
        if (answer.status !== 201) throw new Error(`POST /admin/prices: ${answer.status}`);
        pricesRefreshed += 1;
      }
    }
    const allAtOnce = (ids: string[]) =>
      runUssd(partner, server.pid, ids, {
        sessions: ids.length,
        rampMs: 0,
        thinkMs: [0, 0],
        concurrency: options.concurrency,
      });
    const warm = await allAtOnce(customerIds.slice(0, warmWalks));
    if (warm.errors > 0) throw new Error(`buy warm-up: ${warm.errors} errors, e.g. ${warm.errorSamples[0]}`);
    await settle();
    options.log(`buy: warm-up of ${warmWalks} walks done and settled; measuring ${walks} walks`);
    const cpu0 = cpuSeconds(server.pid);
    const began = performance.now();
    const walk: UssdResult = await allAtOnce(customerIds.slice(warmWalks, warmWalks + walks));
    const cpuWalk = cpuSeconds(server.pid) - cpu0;
    let settled: BuyCpuResult['settled'];
    if (watch && walk.errors === 0) {
      await watch.waitExecuted();
      settled = {
        cpuUsPerWalk: ((cpuSeconds(server.pid) - cpu0) / walk.completed) * 1e6,
        seconds: (performance.now() - began) / 1000,
      };
    }
    return {
      walks: walk.completed,
      walkers: options.concurrency,
      requests: walk.moves,
      errors: walk.errors,
      errorSamples: walk.errorSamples,
      throughput: walk.throughput,
      p50Ms: walk.p50Ms,
      p99Ms: walk.p99Ms,
      cpuUsPerRequest: (cpuWalk / walk.moves) * 1e6,
      settled,
      pricesRefreshed,
    };
  } finally {
    await watch?.close();
  }
}
