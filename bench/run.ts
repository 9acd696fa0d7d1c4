/**
 * `npm run bench`: how close the service runs to its physical ceilings, each ceiling measured in this
 * same run, right next to the scenario it bounds. On PostgreSQL (DATABASE_URL, default
 * postgres://postgres@127.0.0.1:5432/test) with Redis (REDIS_URL, default redis://127.0.0.1:6379),
 * then on the embedded store (PGlite):
 *   1. signed GET /v1/customers/{id}        vs one core's ed25519 verify rate (crypto.verify loop,
 *                                            measured just before and just after)
 *   2. GET /v1/webhooks/key                  vs a minimal Fastify route with the same bytes, the two
 *                                            measured in alternation
 *   3. signed idempotent POST /v1/customers  vs one core's ed25519 verify rate, like 1 (the store's
 *                                            single-row insert rate at the same concurrency is
 *                                            reported beside it: pgbench, or a loop on PGlite)
 *   4. 500 USSD sessions walking HOME → STOCKS → SELECT_STOCK → BUY_AMOUNT → BUY_CONFIRM →
 *      BUY_SUBMITTED: p99 per move and errors, paced like people (2–5 s between keys), with the
 *      server's own time for the same requests from its access lines; then 500 more with no pause
 *      at all, as a capacity figure
 *   5. webhook delivery (PostgreSQL only, bench/lib/webhooks.ts): p99 from commit to delivery with
 *      an idle queue, and deliveries per second of one instance to a local HTTPS receiver
 *   6. round trips per request (PostgreSQL only, bench/lib/round-trips.ts): a second server behind
 *      counting relays; what each request sends to PostgreSQL and to Redis
 *   7. the USSD buy path's server CPU per request (bench/lib/buy.ts): scenario 4's walks with no
 *      pause after a warm-up; on PostgreSQL also per walk until its order is executed
 *   8. the investments API's reads (bench/lib/investments.ts, the server with INVESTMENTS_PREVIEW):
 *      signed GETs of a page of /v1/instruments, /v1/requests, /v1/transactions and a portfolio,
 *      each per server CPU-second over scenario 1's in the same run
 * plus the server's resident memory (VmRSS every 250 ms) and `npm start`'s time to /healthz 200.
 * Each row is judged against its target (TARGETS below); the embedded store's scenarios 1–3
 * against half of PostgreSQL's figures per CPU-second in the same run.
 *
 * Load: autocannon in this process, 50 connections. Signed requests are signed before the run and
 * each sent once (a pool sized from a short pilot): no signature is replayed and signing takes no CPU
 * from the server while it is measured (the signing rate is reported). USSD moves are signed as they
 * are sent (a move names its session). The server is `partner-api serve` as an operator runs it, with
 * LOG_LEVEL=info (the default; logs go to a file), sandbox settlement after SANDBOX_SETTLE_MS=3000
 * (the default: payment callbacks run during the USSD walk), TRUST_PROXY=127.0.0.1 and
 * RATE_LIMIT_GLOBAL and RATE_LIMIT_TOKEN raised to 10^9: every request still goes through the Redis
 * limiter, which never refuses the bench. Requests carry X-Forwarded-For 198.18.0.1 (RFC 2544's benchmarking
 * range), so the bench's counters in the shared Redis never eat into anyone's budget for 127.0.0.1.
 *
 * The machine is shared and small (2 cores: load generator, server, PostgreSQL and Redis share them).
 * Every ratio is against a ceiling measured seconds away, and for 1 and 2 also per CPU second
 * (requests per second of the server's own CPU time over the ceiling's work per CPU second), which
 * what else runs on the machine barely moves. The load average at the start is recorded.
 *
 * Flags: --store=postgres|pglite (one store), --only=get,key,post,patch,ussd,buy,inv,delivery,trips (some scenarios),
 * --seconds=N (per throughput scenario, default 10), --cpu-prof (profile each server process: the
 * .cpuprofile is kept in bench/results/ and summarised), --no-startup (skip the npm start timing),
 * --keep-log (keep each server's log, its access lines with their responseTime, as
 * bench/results/server-<store>.log), --checkout=DIR (serve another checkout's bundle, built there
 * first: the same bench against an older tree), --clock-at=ISO (the server's and the bench's wall
 * clocks shifted to that moment, bench/lib/shifted-clock.mjs: market hours enforced at any hour),
 * --walkers=N (scenario 7's walks at once, default 50).
 * BENCH_SERVER_ENV (a JSON object) adds to or overrides the server's environment, to compare a
 * setting: `BENCH_SERVER_ENV='{"LOG_LEVEL":"warn"}' npm run bench -- --only=key`.
 * Writes bench/results/latest.json and latest.md (git-ignored) and prints the Markdown table.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { scratchDatabase } from '@partner-api/testkit/database.ts';
import { buildBundles } from '../scripts/build.ts';
import { type BuyCpuResult, runBuyCpu } from './lib/buy.ts';
import {
  ed25519VerifyRate,
  nodePgInsertRate,
  openPgliteCeiling,
  pgbenchInsertRate,
  type Rate,
  withScratchTable,
} from './lib/ceilings.ts';
import { type FlushProbe, startFlushProbe } from './lib/flush-probe.ts';
import { type InvestmentsSeed, seedInvestments, signedRead } from './lib/investments.ts';
import { combine, type LoadResult, type PreparedRequest, runLoad } from './lib/load.ts';
import { createBenchPartner, createCustomers, signed, signedCreate } from './lib/partner.ts';
import { type Child, ROOT, sampleRss, startMinimalFastify, startPartnerApi } from './lib/processes.ts';
import { formatProfile, summariseProfile } from './lib/profile.ts';
import { countRoundTrips, type RoundTrips } from './lib/round-trips.ts';
import { measureStart, type StartTiming } from './lib/startup.ts';
import { MOVES, runUssd, type ServerTimes, type UssdResult, ussdServerTimes } from './lib/ussd.ts';
import { type DeliveryResult, runDeliveryBench } from './lib/webhooks.ts';

const argv = process.argv.slice(2);
const flag = (name: string) => argv.find((a) => a === `--${name}` || a.startsWith(`--${name}=`));
const flagValue = (name: string) => flag(name)?.split('=')[1];

type Store = 'postgres' | 'pglite';

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const SECONDS = Number(flagValue('seconds') ?? 10);
const CONNECTIONS = 50;
const USSD_SESSIONS = 500;
const USSD_THINK_MS: [number, number] = [2000, 5000];
const STORES = (flagValue('store') ? [flagValue('store')] : ['postgres', 'pglite']) as Store[];
const ONLY = new Set((flagValue('only') ?? 'get,key,post,patch,ussd,buy,inv,delivery,trips').split(','));
/** Scenario 8: buys placed before the investments API's reads, over this many instruments. */
const INV_ORDERS = 300;
const INV_INSTRUMENTS = 6;
const DELIVERY_IDLE_EVENTS = 200;
const DELIVERY_BACKLOG_EVENTS = 3000;
const CPU_PROF = Boolean(flag('cpu-prof'));
const KEEP_LOG = Boolean(flag('keep-log'));
const RESULTS = path.join(ROOT, 'bench/results');
const CLIENT_IP = '198.18.0.1';
/** Another checkout whose server to measure (its bundle built there), or this one. */
const CHECKOUT = flagValue('checkout') ? path.resolve(flagValue('checkout')!) : undefined;
/** Scenario 7: walks of the warm-up (settled before measuring), then measured walks. */
const BUY_WARM_WALKS = 100;
const BUY_WALKS = 500;
/** Scenario 7's walks at once (--walkers). */
const BUY_WALKERS = Number(flagValue('walkers') ?? CONNECTIONS);
const SHIFTED_CLOCK = path.join(ROOT, 'bench/lib/shifted-clock.mjs');
/** --clock-at: the offset of both clocks, fixed once here so that the bench and the server agree. */
const CLOCK_OFFSET_MS = flagValue('clock-at') ? Date.parse(flagValue('clock-at')!) - Date.now() : 0;
if (Number.isNaN(CLOCK_OFFSET_MS)) throw new Error('--clock-at: not an ISO time');
const SERVER_ENV: Record<string, string> = {
  // Scenario 8's routes exist only with the preview on; BENCH_SERVER_ENV may still override it.
  ...(ONLY.has('inv') ? { INVESTMENTS_PREVIEW: 'true' } : {}),
  ...(CLOCK_OFFSET_MS
    ? { NODE_OPTIONS: `--import=${SHIFTED_CLOCK}`, BENCH_CLOCK_OFFSET_MS: String(CLOCK_OFFSET_MS) }
    : {}),
  ...JSON.parse(process.env.BENCH_SERVER_ENV ?? '{}'),
};

/** The targets: ratios per server CPU-second, judged on PostgreSQL + Redis. */
export const TARGETS = {
  signedGetVsVerify: 0.4,
  webhookKeyVsFastify: 0.6,
  signedPostVsVerify: 0.15,
  signedPostRoundTrips: 3,
  /** The embedded store's figure per CPU-second over PostgreSQL's, for scenarios 1–3. */
  embeddedVsPostgres: 0.5,
  ussdP99Ms: 30,
  rssMb: 250,
};

/** Which market hours the server runs (config.ts: MARKET_HOURS, else enforced in production only). */
function marketHours(): string {
  const mode = SERVER_ENV.MARKET_HOURS ?? (SERVER_ENV.APP_ENV === 'production' ? 'enforced' : 'always-open');
  const clock = CLOCK_OFFSET_MS ? `, clock at ${flagValue('clock-at')}` : '';
  return `market hours ${mode}${clock}`;
}

const log = (line: string) => console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}`);

type Signing = { requests: number; perSecond: number };
type InsertCeiling = { perSecond?: number; label: string; nodePg?: number; error?: string };

type StoreRun = {
  store: Store;
  readyMs: number;
  signedGet?: LoadResult & { signing: Signing; verify: Rate };
  webhookKey?: LoadResult & { minimalFastify: LoadResult };
  signedPost?: LoadResult & { signing: Signing; insert: InsertCeiling; verify: Rate };
  signedPatch?: LoadResult & { signing: Signing; verify: Rate };
  ussd?: UssdResult;
  /** PostgreSQL's commit latency during the paced USSD phase (a probe of the bench's own). */
  ussdFlush?: FlushProbe;
  /** The server's own time for the paced phase's USSD requests, from its access lines. */
  ussdServer?: ServerTimes;
  ussdNoPause?: UssdResult;
  buy?: BuyCpuResult;
  /** Scenario 8: the investments API's reads, each beside scenario 1's GET of this run. */
  investments?: { seed: InvestmentsSeed; reads: (LoadResult & { name: string })[] };
  rssPeakMb: number;
  /** Peak RSS within each phase of the run, in order (the idle start, then each scenario). */
  rssPhases?: { name: string; peakMb: number }[];
  profile?: string;
};

type Report = {
  meta: {
    date: string;
    command: string;
    node: string;
    cpus: number;
    cpuModel?: string;
    loadAverageAtStart: number[];
    connections: number;
    secondsPerScenario: number;
    /** The tree served: this checkout or --checkout's, and its commit. */
    server: string;
    /** Market hours as the server ran them, and the clock's shift (--clock-at). */
    marketHours: string;
  };
  runs: StoreRun[];
  roundTrips?: RoundTrips;
  delivery?: DeliveryResult;
  startup?: StartTiming;
  totalSeconds: number;
};

/** Signs `count` requests and times it: the load generator's signing cost, paid before the run. */
function signPool(count: number, make: (i: number) => PreparedRequest) {
  const began = performance.now();
  const pool = Array.from({ length: count }, (_, i) => make(i));
  return { pool, signing: { requests: count, perSecond: count / ((performance.now() - began) / 1000) } };
}

/** Seconds of load before a signed scenario's measured run: as long as scenario 2's warm-up. */
const WARM_SECONDS = 2;

/**
 * A short pilot finds the rate; a warm-up of about WARM_SECONDS follows, as scenario 2 has, so that
 * V8 has compiled the request path before the measured run (the pilot alone, 1,000 requests, left
 * a sixth of the run's CPU to compiling: docs/performance.md, "npm run
 * bench"); then a pool lasting about SECONDS, each request sent once.
 */
async function signedScenario(server: Child, expectStatus: number, make: (i: number) => PreparedRequest) {
  const load = { url: server.baseUrl, pid: server.pid, connections: CONNECTIONS, expectStatus };
  const pilot = await runLoad({ ...load, pool: signPool(CONNECTIONS * 20, make).pool });
  if (pilot.errors > 0) throw new Error(`pilot answered ${JSON.stringify(pilot.statuses)}`);
  // The pilot runs cold (JIT, pool connections): 1.5x its rate lasts about as long once warm.
  const lasting = (seconds: number) =>
    Math.max(CONNECTIONS * 40, Math.ceil((pilot.throughput * seconds * 1.5) / CONNECTIONS) * CONNECTIONS);
  const warm = await runLoad({ ...load, pool: signPool(lasting(WARM_SECONDS), make).pool });
  if (warm.errors > 0) throw new Error(`warm-up answered ${JSON.stringify(warm.statuses)}`);
  const { pool, signing } = signPool(lasting(SECONDS), make);
  return { ...(await runLoad({ ...load, pool })), signing };
}

const fixedLoad = (server: Child, fixed: PreparedRequest, seconds: number) =>
  runLoad({
    url: server.baseUrl,
    pid: server.pid,
    connections: CONNECTIONS,
    expectStatus: 200,
    fixed,
    seconds,
  });

const meanRate = (a: Rate, b: Rate): Rate => ({
  perSecond: (a.perSecond + b.perSecond) / 2,
  perCpuSecond: (a.perCpuSecond + b.perCpuSecond) / 2,
});

const mean = (a: number | undefined, b: number | undefined) =>
  a === undefined || b === undefined ? (a ?? b) : (a + b) / 2;

/** Scenario 3's ceiling on this store, measured before and after the scenario. */
async function insertCeiling(
  store: Store,
): Promise<{ measure(): Promise<InsertCeiling>; close(): Promise<void> }> {
  if (store === 'pglite') {
    const ceiling = await openPgliteCeiling();
    return {
      measure: async () => ({ perSecond: await ceiling.measure(3), label: 'PGlite insert loop' }),
      close: () => ceiling.close(),
    };
  }
  const drop = await withScratchTable(DATABASE_URL);
  const nodePg = await nodePgInsertRate(DATABASE_URL, CONNECTIONS, 3);
  return {
    async measure() {
      const result = await pgbenchInsertRate(DATABASE_URL, CONNECTIONS, 4);
      if (result.perSecond)
        return { perSecond: result.perSecond, label: `pgbench, ${CONNECTIONS} clients`, nodePg };
      // No pgbench here: the node-postgres loop is the ceiling (one Node process, like the server).
      return {
        perSecond: await nodePgInsertRate(DATABASE_URL, CONNECTIONS, 4),
        label: `node-postgres loop, ${CONNECTIONS} clients`,
        nodePg,
        error: result.error,
      };
    },
    close: drop,
  };
}

async function runStore(store: Store, minimal: Child | undefined): Promise<StoreRun> {
  const dataDir = mkdtempSync(path.join(tmpdir(), `bench-${store}-`));
  const adminToken = randomBytes(24).toString('hex');
  const profDir = CPU_PROF ? mkdtempSync(path.join(tmpdir(), `bench-prof-${store}-`)) : undefined;
  /** When the paced USSD phase began and ended (epoch ms), to find its lines in the server's log. */
  let pacedWindow: [number, number] | undefined;
  // A database of the run's own on PostgreSQL's server, dropped at the end. On the shared one, this
  // server's payment worker also swept every other run's and suite's open requests (446 never-settling
  // sandbox collections of the soaks, each queried every 3 s) while it was being measured.
  const database = store === 'postgres' ? await scratchDatabase(DATABASE_URL, 'bench_server') : undefined;
  log(`${store}: starting partner-api serve`);
  const server = await startPartnerApi({
    env: {
      DATA_DIR: dataDir,
      ADMIN_TOKEN: adminToken,
      LOG_LEVEL: 'info',
      TRUST_PROXY: '127.0.0.1',
      RATE_LIMIT_GLOBAL: '1000000000/60s',
      // Every run takes tokens under the same client address in the shared Redis: the default budget
      // (10 per 15 minutes) refused the token of a run started minutes after a few others.
      RATE_LIMIT_TOKEN: '1000000000/900s',
      ...(database ? { DATABASE_URL: database.url, REDIS_URL } : {}),
      ...SERVER_ENV,
    },
    logFile: path.join(dataDir, 'server.log'),
    cpuProfDir: profDir,
    checkout: CHECKOUT,
  }).catch(async (error: unknown) => {
    await database?.drop();
    throw error;
  });
  const rss = sampleRss(server.pid, 250);
  const run: StoreRun = { store, readyMs: server.readyMs, rssPeakMb: Number.NaN };
  try {
    rss.phase('ready');
    log(`${store}: ready in ${(server.readyMs / 1000).toFixed(1)} s (pid ${server.pid})`);
    const partner = await createBenchPartner({ ...server, adminToken }, { 'x-forwarded-for': CLIENT_IP });

    if (ONLY.has('key') && minimal) {
      rss.phase('key');
      log(`${store}: scenario 2, GET /v1/webhooks/key, alternating with the minimal Fastify`);
      const ours: PreparedRequest = {
        method: 'GET',
        path: '/v1/webhooks/key',
        headers: partner.extraHeaders,
      };
      const theirs: PreparedRequest = { method: 'GET', path: '/key', headers: {} };
      await fixedLoad(minimal, theirs, 2); // warm-up
      await fixedLoad(server, ours, 2);
      const a: LoadResult[] = [];
      const b: LoadResult[] = [];
      for (let round = 0; round < 2; round++) {
        a.push(await fixedLoad(minimal, theirs, SECONDS / 2));
        b.push(await fixedLoad(server, ours, SECONDS / 2));
      }
      run.webhookKey = { ...combine(b), minimalFastify: combine(a) };
    }
    if (ONLY.has('post')) {
      rss.phase('POST');
      log(`${store}: scenario 3, signed idempotent POST /v1/customers, between two insert-rate measurements`);
      const ceiling = await insertCeiling(store);
      try {
        const before = await ceiling.measure();
        const verifyBefore = ed25519VerifyRate(2);
        const result = await signedScenario(server, 201, (i) => signedCreate(partner, i));
        const verifyAfter = ed25519VerifyRate(2);
        const after = await ceiling.measure();
        run.signedPost = {
          ...result,
          insert: { ...before, perSecond: mean(before.perSecond, after.perSecond) },
          verify: meanRate(verifyBefore, verifyAfter),
        };
      } finally {
        await ceiling.close();
      }
    }
    const sessions = ONLY.has('ussd') ? USSD_SESSIONS : 0;
    const buyers = ONLY.has('buy') ? BUY_WARM_WALKS + BUY_WALKS : 0;
    rss.phase('customers');
    const ussdCustomers = Math.max(100, 2 * sessions);
    log(`${store}: creating ${ussdCustomers + buyers} customers through the API`);
    const customerIds = await createCustomers(partner, ussdCustomers + buyers);
    if (ONLY.has('get')) {
      rss.phase('GET');
      log(`${store}: scenario 1, signed GET /v1/customers/{id}, between two verify-rate measurements`);
      const before = ed25519VerifyRate(2);
      const result = await signedScenario(server, 200, (i) =>
        signed(partner, 'GET', `/v1/customers/${customerIds[i % 100]}`),
      );
      const after = ed25519VerifyRate(2);
      run.signedGet = { ...result, verify: meanRate(before, after) };
    }
    if (ONLY.has('patch')) {
      rss.phase('PATCH');
      log(
        `${store}: scenario 3b, signed idempotent PATCH /v1/customers/{id}, between two verify-rate measurements`,
      );
      const before = ed25519VerifyRate(2);
      // Spread over the customers: two patches of one customer at once race (the locked path).
      const result = await signedScenario(server, 200, (i) =>
        signed(partner, 'PATCH', `/v1/customers/${customerIds[i % customerIds.length]}`, {
          lastName: `Patched ${i}`,
        }),
      );
      const after = ed25519VerifyRate(2);
      run.signedPatch = { ...result, verify: meanRate(before, after) };
    }
    if (ONLY.has('ussd')) {
      rss.phase('USSD paced');
      log(`${store}: scenario 4, ${sessions} USSD sessions, ${USSD_THINK_MS.join('-')} ms between keys`);
      const probe = database ? await startFlushProbe(database.url) : undefined;
      const pacedFrom = Date.now();
      run.ussd = await runUssd(partner, server.pid, customerIds.slice(0, sessions), {
        sessions,
        rampMs: 5000,
        thinkMs: USSD_THINK_MS,
      });
      pacedWindow = [pacedFrom, Date.now()];
      run.ussdFlush = await probe?.stop();
      rss.phase('USSD no pause');
      log(`${store}: scenario 4, ${sessions} more with no pause between keys (capacity)`);
      run.ussdNoPause = await runUssd(partner, server.pid, customerIds.slice(sessions), {
        sessions,
        rampMs: 0,
        thinkMs: [0, 0],
      });
    }
    if (ONLY.has('buy')) {
      rss.phase('buy');
      log(`${store}: scenario 7, the USSD buy path's CPU per request (${marketHours()})`);
      run.buy = await runBuyCpu(partner, customerIds.slice(ussdCustomers), {
        server: { ...server, adminToken },
        databaseUrl: database?.url,
        warmWalks: BUY_WARM_WALKS,
        walks: BUY_WALKS,
        concurrency: BUY_WALKERS,
        marketHoursEnforced: SERVER_ENV.MARKET_HOURS === 'enforced',
        settleMs: Number(SERVER_ENV.SANDBOX_SETTLE_MS ?? 3000),
        log: (line) => log(`${store}: ${line}`),
      });
    }
    if (ONLY.has('inv')) {
      rss.phase('investments');
      log(`${store}: scenario 8, the investments API's reads: seeding ${INV_ORDERS} buys through the API`);
      const seed = await seedInvestments(partner, customerIds, {
        orders: INV_ORDERS,
        instruments: INV_INSTRUMENTS,
        log: (line) => log(`${store}: ${line}`),
      });
      const reads: (LoadResult & { name: string })[] = [];
      for (const read of seed.reads) {
        log(`${store}: scenario 8, signed ${read.name}`);
        reads.push({
          ...(await signedScenario(server, 200, () => signedRead(partner, read.path))),
          name: read.name,
        });
      }
      run.investments = { seed, reads };
    }
    return run;
  } finally {
    const sampled = rss.stop();
    run.rssPeakMb = sampled.peakMb;
    run.rssPhases = sampled.phases.filter((phase) => Number.isFinite(phase.peakMb));
    const code = await server.stop();
    if (code !== 0) log(`${store}: server exited with code ${code}`);
    // Read once the server has stopped: its last lines are written by then.
    if (pacedWindow) run.ussdServer = ussdServerTimes(path.join(dataDir, 'server.log'), ...pacedWindow);
    await database?.drop();
    if (profDir) {
      const file = readdirSync(profDir).find((f) => f.endsWith('.cpuprofile'));
      if (file) {
        run.profile = path.join(RESULTS, `profile-${store}.cpuprofile`);
        renameSync(path.join(profDir, file), run.profile);
        log(`${store}: CPU profile in ${run.profile}\n${formatProfile(summariseProfile(run.profile))}`);
      }
      rmSync(profDir, { recursive: true, force: true });
    }
    if (KEEP_LOG) renameSync(path.join(dataDir, 'server.log'), path.join(RESULTS, `server-${store}.log`));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

// ------------------------------------------------------------------------------------------- report

const fmt = (n: number | undefined, digits = 0) =>
  n === undefined || !Number.isFinite(n)
    ? '–'
    : n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const verdict = (ok: boolean) => (ok ? 'met' : '**missed**');

export function markdown(report: Report): string {
  const { meta, runs, startup, delivery, roundTrips } = report;
  const lines = [
    `${meta.date.slice(0, 16).replace('T', ' ')} UTC, \`${meta.command}\`, server ${meta.server}, Node ${meta.node}, ${meta.cpus} × ${meta.cpuModel}; ` +
      `load average at start ${meta.loadAverageAtStart.join(' / ')}; autocannon, ${meta.connections} connections, ` +
      `~${meta.secondsPerScenario} s per throughput scenario. Ceilings measured next to each scenario; ` +
      'targets per server CPU-second: docs/performance.md, "Targets".',
    '',
    '| scenario | store | result | p50 / p99 ms | ceiling | ratio | per CPU-second | target |',
    '|---|---|---:|---:|---|---:|---:|---|',
  ];
  const postgres = runs.find((r) => r.store === 'postgres');
  const newKey = roundTrips?.requests.find(
    (r) => r.request.endsWith('new key') && r.request.includes('POST'),
  );
  const postTrips = newKey ? newKey.database + newKey.redis : undefined;
  for (const run of runs) {
    const store = run.store === 'postgres' ? 'PostgreSQL' : 'PGlite';
    const judged = run.store === 'postgres';
    const judge = (ok: boolean, target: string) => `${target}: ${verdict(ok)}`;
    /** The embedded store: its figure per CPU-second against PostgreSQL's in the same run. */
    const embedded = (ours: number | undefined, theirs: number | undefined) => {
      if (ours === undefined || theirs === undefined) return '≥ 0.5 × PostgreSQL (no PostgreSQL run)';
      const share = ours / theirs;
      return judge(
        share >= TARGETS.embeddedVsPostgres,
        `${fmt(share, 2)} × PostgreSQL, ≥ ${TARGETS.embeddedVsPostgres}`,
      );
    };
    const g = run.signedGet;
    if (g) {
      const r = g.throughput / g.verify.perSecond;
      const c = g.perServerCoreSecond / g.verify.perCpuSecond;
      const target = judged
        ? judge(c >= TARGETS.signedGetVsVerify, `≥ ${TARGETS.signedGetVsVerify} per CPU-s`)
        : embedded(g.perServerCoreSecond, postgres?.signedGet?.perServerCoreSecond);
      lines.push(
        `| 1 signed GET /v1/customers/{id} | ${store} | ${fmt(g.throughput)} req/s | ${fmt(g.p50Ms)} / ${fmt(g.p99Ms)} | ed25519 verify ${fmt(g.verify.perSecond)}/s (${fmt(g.verify.perCpuSecond)} per CPU-s) | ${fmt(r, 2)} | ${fmt(g.perServerCoreSecond)} req per server CPU-s (${fmt(1e6 / g.perServerCoreSecond)} µs a request): ${fmt(c, 2)} | ${target} |`,
      );
    }
    const k = run.webhookKey;
    if (k) {
      const m = k.minimalFastify;
      const r = k.throughput / m.throughput;
      const c = k.perServerCoreSecond / m.perServerCoreSecond;
      const target = judged
        ? judge(c >= TARGETS.webhookKeyVsFastify, `≥ ${TARGETS.webhookKeyVsFastify} per CPU-s`)
        : embedded(k.perServerCoreSecond, postgres?.webhookKey?.perServerCoreSecond);
      lines.push(
        `| 2 GET /v1/webhooks/key | ${store} | ${fmt(k.throughput)} req/s | ${fmt(k.p50Ms)} / ${fmt(k.p99Ms)} | minimal Fastify ${fmt(m.throughput)}/s (${fmt(m.perServerCoreSecond)} per CPU-s) | ${fmt(r, 2)} | ${fmt(k.perServerCoreSecond)} per CPU-s: ${fmt(c, 2)} | ${target} |`,
      );
    }
    const p = run.signedPost;
    if (p) {
      const r = p.throughput / p.verify.perSecond;
      const c = p.perServerCoreSecond / p.verify.perCpuSecond;
      const insert = p.insert.perSecond ? `; ${p.insert.label} ${fmt(p.insert.perSecond)}/s` : '';
      const rate = `≥ ${TARGETS.signedPostVsVerify} per CPU-s`;
      const rateMet = c >= TARGETS.signedPostVsVerify;
      // A run without the trips scenario judges the rate alone, and says that the round trips were not counted.
      const target = !judged
        ? embedded(p.perServerCoreSecond, postgres?.signedPost?.perServerCoreSecond)
        : postTrips === undefined
          ? `${judge(rateMet, rate)}; round trips not counted (--only without trips)`
          : judge(
              rateMet && postTrips <= TARGETS.signedPostRoundTrips,
              `${rate} and ≤ ${TARGETS.signedPostRoundTrips} round trips (${postTrips} round trips)`,
            );
      lines.push(
        `| 3 signed idempotent POST /v1/customers | ${store} | ${fmt(p.throughput)} req/s | ${fmt(p.p50Ms)} / ${fmt(p.p99Ms)} | ed25519 verify ${fmt(p.verify.perSecond)}/s (${fmt(p.verify.perCpuSecond)} per CPU-s)${insert} | ${fmt(r, 2)} | ${fmt(p.perServerCoreSecond)} req per server CPU-s: ${fmt(c, 2)} | ${target} |`,
      );
    }
    const pa = run.signedPatch;
    if (pa) {
      const r = pa.throughput / pa.verify.perSecond;
      const c = pa.perServerCoreSecond / pa.verify.perCpuSecond;
      const theirs = postgres?.signedPatch?.perServerCoreSecond;
      const target =
        judged || !theirs ? 'none' : `none (${fmt(pa.perServerCoreSecond / theirs, 2)} × PostgreSQL)`;
      lines.push(
        `| 3b signed idempotent PATCH /v1/customers/{id} | ${store} | ${fmt(pa.throughput)} req/s | ${fmt(pa.p50Ms)} / ${fmt(pa.p99Ms)} | ed25519 verify ${fmt(pa.verify.perSecond)}/s (${fmt(pa.verify.perCpuSecond)} per CPU-s) | ${fmt(r, 2)} | ${fmt(pa.perServerCoreSecond)} req per server CPU-s: ${fmt(c, 2)} | ${target} |`,
      );
    }
    for (const u of [run.ussd, run.ussdNoPause]) {
      if (!u) continue;
      const paced = u === run.ussd;
      const worst = u.perMove.reduce((a, b) => (b.p99Ms > a.p99Ms ? b : a));
      // Judged per move: every step's p99, not only all moves together.
      const ok = u.errors === 0 && Math.max(u.p99Ms, worst.p99Ms) < TARGETS.ussdP99Ms;
      const name = paced
        ? `4 USSD: ${u.sessions} sessions, ${USSD_THINK_MS.map((n) => n / 1000).join('–')} s between keys`
        : `4b USSD: ${u.sessions} sessions, no pause (capacity)`;
      const target = `p99 of every move < ${TARGETS.ussdP99Ms} ms, 0 errors`;
      const verdictText = !paced
        ? 'none (Little: p99 ≈ sessions / rate)'
        : judged
          ? judge(ok, target)
          : `${target} (judged on PostgreSQL)`;
      lines.push(
        `| ${name} | ${store} | ${fmt(u.throughput)} moves/s, ${u.errors} errors, ${u.completed}/${u.sessions} walks | ${fmt(u.p50Ms)} / ${fmt(u.p99Ms)} (worst: ${worst.move} ${fmt(worst.p99Ms)}) | – | – | server ${fmt(u.serverCores, 2)} cores | ${verdictText} |`,
      );
    }
    const b = run.buy;
    if (b) {
      const settled = b.settled
        ? `; ${fmt(b.settled.cpuUsPerWalk)} µs a walk until its order is executed (${fmt(b.settled.seconds, 1)} s)`
        : '';
      lines.push(
        `| 7 USSD buy path: ${b.walks} walks of ${MOVES.length} requests, ${b.walkers} at once, ${meta.marketHours} | ${store} | ${fmt(b.throughput)} req/s, ${b.errors} errors | ${fmt(b.p50Ms)} / ${fmt(b.p99Ms)} | – | – | ${fmt(b.cpuUsPerRequest)} µs server CPU a request${settled} | none |`,
      );
    }
    const inv = run.investments;
    if (inv) {
      const get = run.signedGet;
      const seeded = `${inv.seed.executed} executed buys over ${inv.seed.customers} customers; portfolio of ${inv.seed.positions} positions`;
      for (const read of inv.reads) {
        const ratio = get
          ? `${fmt(read.perServerCoreSecond / get.perServerCoreSecond, 2)} × scenario 1 per CPU-s`
          : '– (no scenario 1: --only with get)';
        lines.push(
          `| 8 signed ${read.name}, ${seeded} | ${store} | ${fmt(read.throughput)} req/s | ${fmt(read.p50Ms)} / ${fmt(read.p99Ms)} | scenario 1, ${get ? `${fmt(1e6 / get.perServerCoreSecond)} µs a request` : '–'} | ${ratio} | ${fmt(read.perServerCoreSecond)} req per server CPU-s (${fmt(1e6 / read.perServerCoreSecond)} µs a request) | none |`,
        );
      }
    }
    const rssTarget = `< ${TARGETS.rssMb} MB`;
    lines.push(
      `| server RSS, peak over the runs | ${store} | ${fmt(run.rssPeakMb)} MB (by phase: ${(run.rssPhases ?? []).map((p) => `${p.name} ${fmt(p.peakMb)}`).join(', ')}) | | | | | ${judged ? judge(run.rssPeakMb < TARGETS.rssMb, rssTarget) : `${rssTarget} (judged on PostgreSQL)`} |`,
    );
  }
  for (const trip of roundTrips?.requests ?? []) {
    lines.push(
      `| round trips: ${trip.request} (answered ${trip.status}) | PostgreSQL | ${trip.database} database + ${trip.redis} Redis | | counted on the wire, median of 20 | | | ${trip === newKey ? `≤ ${TARGETS.signedPostRoundTrips}: ${verdict(trip.database + trip.redis <= TARGETS.signedPostRoundTrips)}` : '–'} |`,
    );
  }
  if (delivery) {
    const { idle, idleApi, backlog } = delivery;
    const changed = Object.entries(delivery.settings).map(([k, v]) => `${k}=${v}`);
    lines.push(
      `| 5a webhook delivery, idle queue: 201 of POST /v1/customers to arrival | PostgreSQL | ${idleApi.events} events one at a time | ${fmt(idleApi.p50Ms)} / ${fmt(idleApi.p99Ms)} (max ${fmt(idleApi.maxMs)}) | the route nudges the worker | – | – | none yet |`,
      `| 5a' webhook delivery, idle queue: commit to arrival, no nudge | PostgreSQL | ${idle.events} events one at a time | ${fmt(idle.p50Ms)} / ${fmt(idle.p99Ms)} (max ${fmt(idle.maxMs)}) | the worker's poll, ${changed.length ? changed.join(', ') : 'WEBHOOK_WORKER_INTERVAL_MS=200'} | – | – | none yet |`,
      `| 5b webhook delivery, backlog of ${backlog.events} | PostgreSQL | ${fmt(backlog.perSecond)} deliveries/s, one instance | – | – | – | server ${fmt(backlog.serverCores, 2)} cores: ${fmt(backlog.perSecond / backlog.serverCores)} deliveries per server CPU-s | none yet |`,
    );
  }
  lines.push('', 'Details:');
  for (const run of runs) {
    const parts: string[] = [];
    const g = run.signedGet;
    if (g)
      parts.push(
        `GET: server ${fmt(g.serverCores, 2)} cores, load generator ${fmt(g.loadGeneratorCores, 2)}, machine ${fmt(g.machineBusy * 100)}% busy; signing ${fmt(g.signing.perSecond)}/s beforehand`,
      );
    const k = run.webhookKey;
    if (k)
      parts.push(
        `key: server ${fmt(k.serverCores, 2)} cores vs minimal Fastify ${fmt(k.minimalFastify.serverCores, 2)}, machine ${fmt(k.machineBusy * 100)}% busy`,
      );
    const p = run.signedPost;
    if (p)
      parts.push(
        `POST: server ${fmt(p.serverCores, 2)} cores, machine ${fmt(p.machineBusy * 100)}% busy${p.insert.nodePg ? `; node-postgres insert loop ${fmt(p.insert.nodePg)}/s` : ''}${p.insert.error ? `; pgbench: ${p.insert.error}` : ''}; signing ${fmt(p.signing.perSecond)}/s beforehand`,
      );
    const pa = run.signedPatch;
    if (pa)
      parts.push(
        `PATCH: server ${fmt(pa.serverCores, 2)} cores, machine ${fmt(pa.machineBusy * 100)}% busy; signing ${fmt(pa.signing.perSecond)}/s beforehand`,
      );
    if (parts.length) lines.push(`- ${run.store}: ${parts.join('; ')}`);
    for (const u of [run.ussd, run.ussdNoPause]) {
      if (!u) continue;
      lines.push(
        `- ${run.store} USSD ${u === run.ussd ? 'paced' : 'no pause'}, p50/p99 ms per move: ${u.perMove.map((m) => `${m.move} ${fmt(m.p50Ms)}/${fmt(m.p99Ms)}`).join('; ')}${u.errorSamples.length ? `; e.g. ${u.errorSamples[0]}` : ''}`,
      );
    }
    const own = run.ussdServer;
    if (own)
      lines.push(
        `- ${run.store} USSD paced, the server's own time (its access lines' responseTime, ${own.requests} requests): p50 ${fmt(own.p50Ms, 1)}, p99 ${fmt(own.p99Ms, 1)}, max ${fmt(own.maxMs, 1)} ms (the client's figures above add the time outside the server's process: the load generator, the kernel's queues)`,
      );
    const f = run.ussdFlush;
    if (f)
      lines.push(
        `- ${run.store} USSD paced: PostgreSQL's commits meanwhile (a probe's one-row insert every 50 ms, ${f.commits} commits): p50 ${fmt(f.p50Ms, 1)}, p99 ${fmt(f.p99Ms, 1)}, max ${fmt(f.maxMs, 1)} ms; ${f.over20Ms} over 20 ms (when these stall, the moves' commits stall with them: docs/performance.md, "The USSD tail is the disk's")`,
      );
    lines.push(
      `- ${run.store}: \`partner-api serve\` answered /healthz 200 ${fmt(run.readyMs / 1000, 1)} s after spawn`,
    );
  }
  if (startup) {
    lines.push(
      `- \`npm start\` (embedded store) to /healthz 200: fresh DATA_DIR ${fmt(startup.firstMs / 1000, 1)} s, second start ${fmt(startup.secondMs / 1000, 1)} s`,
    );
  }
  lines.push(`- the whole bench took ${fmt(report.totalSeconds / 60, 1)} min`);
  return `${lines.join('\n')}\n`;
}

async function main() {
  const began = performance.now();
  log('npm run build: the server as production runs it (plain JavaScript, no TypeScript loader)');
  if (CHECKOUT)
    execFileSync('npx', ['tsx', 'scripts/build.ts', 'server'], { cwd: CHECKOUT, stdio: 'ignore' });
  else await buildBundles({ quiet: true });
  mkdirSync(RESULTS, { recursive: true });
  const meta: Report['meta'] = {
    date: new Date().toISOString(),
    command: `npm run bench${argv.length ? ` -- ${argv.join(' ')}` : ''}`,
    node: process.version,
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model.trim(),
    loadAverageAtStart: loadavg().map((n) => Number(n.toFixed(2))),
    connections: CONNECTIONS,
    secondsPerScenario: SECONDS,
    server: `${CHECKOUT ?? ROOT} at ${execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: CHECKOUT ?? ROOT, encoding: 'utf8' }).trim()}`,
    marketHours: marketHours(),
  };
  log(`load average at start: ${meta.loadAverageAtStart.join(' ')} on ${meta.cpus} cores`);
  if (CLOCK_OFFSET_MS) {
    // This process signs with the same shifted clock as the server checks signatures and tokens.
    process.env.BENCH_CLOCK_OFFSET_MS = String(CLOCK_OFFSET_MS);
    await import(pathToFileURL(SHIFTED_CLOCK).href);
  }
  const minimal = ONLY.has('key')
    ? await startMinimalFastify(path.join(tmpdir(), 'bench-minimal-fastify.log'))
    : undefined;
  const runs: StoreRun[] = [];
  try {
    for (const store of STORES) runs.push(await runStore(store, minimal));
  } finally {
    await minimal?.stop();
  }
  let roundTrips: RoundTrips | undefined;
  if (ONLY.has('trips') && STORES.includes('postgres')) {
    log('postgres: round trips per request, counted on the wire through relays');
    roundTrips = await countRoundTrips({ databaseUrl: DATABASE_URL, redisUrl: REDIS_URL });
  }
  let delivery: DeliveryResult | undefined;
  if (ONLY.has('delivery') && STORES.includes('postgres')) {
    log('postgres: scenario 5, webhook delivery to a local HTTPS receiver');
    delivery = await runDeliveryBench({
      databaseUrl: DATABASE_URL,
      idleEvents: DELIVERY_IDLE_EVENTS,
      backlogEvents: DELIVERY_BACKLOG_EVENTS,
      log,
    });
  }
  let startup: StartTiming | undefined;
  if (!flag('no-startup')) {
    log('npm start on a fresh DATA_DIR, then again on the same one');
    const dir = mkdtempSync(path.join(tmpdir(), 'bench-start-'));
    try {
      startup = await measureStart(path.join(dir, 'data'), path.join(dir, 'npm-start.log'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const report: Report = {
    meta,
    runs,
    roundTrips,
    delivery,
    startup,
    totalSeconds: (performance.now() - began) / 1000,
  };
  writeFileSync(path.join(RESULTS, 'latest.json'), `${JSON.stringify(report, null, 2)}\n`);
  const table = markdown(report);
  writeFileSync(path.join(RESULTS, 'latest.md'), table);
  console.log(`\n${table}`);
}

await main();
