/**
 * Soak: mixed partner traffic against a started `partner-api serve` on PostgreSQL, then a
 * reconciliation of everything it acknowledged against the database.
 *
 *   SOAK_SECONDS=600 npm run soak        (defaults: 600 s, SOAK_CONCURRENCY=20)
 *
 * Traffic, per worker, until the time is up: customers create (with an idempotent replay now and
 * then), list (search, filters, pages) and get; USSD walks HOME → STOCKS → SELECT_STOCK → BUY_AMOUNT →
 * BUY_CONFIRM → BUY_SUBMITTED, settled by the sandbox simulator (magic amounts included: ..01 fails,
 * ..02 stays PENDING); payment status polling of the orders placed. Any 5xx, network error or status
 * other than the one expected counts as an error.
 *
 * The server's RSS is sampled every 5 s (every second in a run under 5 minutes). Bound: the median of
 * the last minute is below the median of the first minute + 50 MB. A run under 5 minutes measures
 * after a warm-up of a quarter of its length, with windows of a third of the rest.
 *
 * Reconciliation (SQL, scoped to the soak's own organization): every acknowledged customer and order
 * exists (writes lost = 0) and nothing unacknowledged was written; every BUY order has exactly one
 * INCOMING transaction and no OUTGOING one; order and payment statuses agree (EXECUTED ⇔ SUCCESS,
 * FAILED ⇔ FAILED, PENDING_PAYMENT ⇔ PENDING); nothing is PENDING but ..02 amounts; every order
 * settled as its magic amount says; the EXECUTED orders' units per customer and stock equal the
 * holdings.
 *
 * Needs DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test); uses REDIS_URL when set.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createPartner, signedFetch } from '@partner-api/testkit/partner.ts';
import { type ServerProcess, startServer } from '@partner-api/testkit/process.ts';
import pg from 'pg';

export type SoakOptions = {
  seconds: number;
  concurrency: number;
  databaseUrl: string;
  redisUrl?: string;
  /** Sandbox settlement delay of the server under test. */
  settleMs?: number;
  /** Default 5000 ms; a short run samples every second. */
  sampleEveryMs?: number;
  /**
   * Traffic before the first window of the memory bound (V8 and the pools still growing). Default 0
   * for a run of 5 minutes or more (the first minute is the reference), a quarter of a shorter run.
   */
  warmupSeconds?: number;
  /** Allowed growth of the median RSS between the first and the last window. */
  rssBoundMb?: number;
  log?: (line: string) => void;
};

export type SoakReport = {
  seconds: number;
  concurrency: number;
  requests: number;
  byOperation: Record<string, number>;
  errors: number;
  errorSamples: string[];
  customersCreated: number;
  replays: number;
  ordersPlaced: number;
  ordersByStatus: Record<string, number>;
  writesLost: number;
  unexpectedWrites: number;
  reconciliationProblems: string[];
  /** The server's log lines at level error or fatal (the first 20): a clean soak logs none. */
  serverErrors: string[];
  rss: {
    samplesMb: number[];
    firstWindowMedianMb: number;
    lastWindowMedianMb: number;
    growthMb: number;
    boundMb: number;
    windowSeconds: number;
    warmupSeconds: number;
  };
  ok: boolean;
};

type Response = { status: number; body: string; headers: Headers };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return 0;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
const pick = <T>(list: readonly T[]): T => list[Math.floor(Math.random() * list.length)]!;
const FIRST = ['Amina', 'Brian', 'Chebet', 'David', 'Esther', 'Faith', 'George', 'Halima', 'Ian', 'Joy'];
const LAST = ['Otieno', 'Kamau', 'Wanjiru', 'Kiprop', 'Mwangi', 'Njeri', 'Odhiambo', 'Achieng'];

/** RSS of a process in MB, from /proc (Linux). */
function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1] ?? Number.NaN);
  return kb / 1024;
}

/** A whole amount 100..4999 whose outcome in the sandbox is the one asked for (..01 fails, ..02 stays PENDING). */
function amountFor(outcome: 'SUCCESS' | 'FAILED' | 'PENDING'): string {
  const hundreds = 1 + Math.floor(Math.random() * 49);
  if (outcome === 'FAILED') return String(hundreds * 100 + 1);
  if (outcome === 'PENDING') return String(hundreds * 100 + 2);
  const tail = Math.floor(Math.random() * 100);
  return String(hundreds * 100 + (tail === 1 || tail === 2 ? 0 : tail));
}

export async function runSoak(options: SoakOptions): Promise<SoakReport> {
  const log = options.log ?? ((line: string) => process.stdout.write(`${line}\n`));
  const settleMs = options.settleMs ?? 500;
  const sampleEveryMs = options.sampleEveryMs ?? (options.seconds >= 300 ? 5000 : 1000);
  const warmupSeconds = options.warmupSeconds ?? (options.seconds >= 300 ? 0 : options.seconds / 4);
  const boundMb = options.rssBoundMb ?? 50;
  const dataDir = mkdtempSync(path.join(tmpdir(), 'partner-api-soak-'));
  const adminToken = randomBytes(24).toString('hex');
  const server: ServerProcess = await startServer({
    DATA_DIR: dataDir,
    DATABASE_URL: options.databaseUrl,
    ...(options.redisUrl ? { REDIS_URL: options.redisUrl } : {}),
    ADMIN_TOKEN: adminToken,
    APP_ENV: 'sandbox',
    SANDBOX_SETTLE_MS: String(settleMs),
    // One client address drives all the traffic: the limits are not what is soaked here.
    RATE_LIMIT_GLOBAL: '100000000/60s',
    RATE_LIMIT_TOKEN: '1000/60s',
    LOG_LEVEL: 'warn',
  });
  const pool = new pg.Pool({ connectionString: options.databaseUrl, max: 2 });
  try {
    return await soak(server, pool, adminToken, {
      ...options,
      settleMs,
      sampleEveryMs,
      warmupSeconds,
      boundMb,
      log,
    });
  } finally {
    await server.stop('SIGTERM');
    await pool.end();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function soak(
  server: ServerProcess,
  pool: pg.Pool,
  adminToken: string,
  options: SoakOptions & {
    settleMs: number;
    sampleEveryMs: number;
    warmupSeconds: number;
    boundMb: number;
    log: (l: string) => void;
  },
): Promise<SoakReport> {
  const { log } = options;
  // An organization and a signing credential of the soak's own, through the admin API, and a token.
  const partner = await createPartner(
    { baseUrl: server.baseUrl, adminUrl: server.adminUrl, adminToken },
    { name: `Soak ${randomUUID().slice(0, 8)}`, keyPrefix: 'soak' },
  );
  log(`soak: server pid ${server.child.pid} at ${server.baseUrl}, organization ${partner.organizationId}`);

  const byOperation: Record<string, number> = {};
  const errorSamples: string[] = [];
  let requests = 0;
  let errors = 0;
  let replays = 0;
  const customers: string[] = [];
  const orders = new Map<string, 'SUCCESS' | 'FAILED' | 'PENDING'>();

  const fail = (what: string) => {
    errors += 1;
    if (errorSamples.length < 20) errorSamples.push(what);
  };

  async function call(
    operation: string,
    method: 'GET' | 'POST' | 'PATCH',
    url: string,
    body?: unknown,
    idempotencyKey?: string,
  ): Promise<Response | undefined> {
    requests += 1;
    byOperation[operation] = (byOperation[operation] ?? 0) + 1;
    try {
      const response = await signedFetch(
        partner,
        { method, url, body, idempotencyKey },
        { signal: AbortSignal.timeout(15_000) },
      );
      return { status: response.status, body: await response.text(), headers: response.headers };
    } catch (error) {
      fail(`${operation} ${method} ${url}: ${(error as Error).message}`);
      return undefined;
    }
  }

  const expect = (operation: string, response: Response | undefined, status: number): boolean => {
    if (!response) return false;
    if (response.status === status) return true;
    fail(`${operation}: ${response.status} (expected ${status}) ${response.body.slice(0, 200)}`);
    return false;
  };

  async function createCustomer(): Promise<void> {
    const key = randomUUID();
    const body = {
      firstName: pick(FIRST),
      lastName: pick(LAST),
      // A Safaricom number (2547[0129]…): a number on no known network gets no payments.
      msisdn: `25471${String(Math.floor(Math.random() * 1e7)).padStart(7, '0')}`,
      referenceId: `soak-${randomUUID().slice(0, 8)}`,
    };
    const first = await call('customers.create', 'POST', '/v1/customers', body, key);
    if (!expect('customers.create', first, 201)) return;
    customers.push((JSON.parse(first!.body) as { data: { id: string } }).data.id);
    if (Math.random() < 0.15) {
      const again = await call('customers.create (replay)', 'POST', '/v1/customers', body, key);
      if (!expect('customers.create (replay)', again, 201)) return;
      if (again!.body !== first!.body || again!.headers.get('idempotent-replayed') !== 'true') {
        fail('customers.create (replay): not a verbatim replay');
      }
      replays += 1;
    }
  }

  async function listCustomers(): Promise<void> {
    const query = pick([
      '',
      `?page=${1 + Math.floor(Math.random() * 5)}&limit=${1 + Math.floor(Math.random() * 100)}`,
      `?search=${encodeURIComponent(pick([...FIRST, ...LAST]).slice(0, 4))}`,
      '?isActive=true&limit=50',
      `?search=soak-${randomBytes(1).toString('hex')}`,
    ]);
    expect('customers.list', await call('customers.list', 'GET', `/v1/customers${query}`), 200);
  }

  async function getCustomer(): Promise<void> {
    if (customers.length === 0) return createCustomer();
    const id = pick(customers);
    const response = await call('customers.get', 'GET', `/v1/customers/${id}`);
    if (expect('customers.get', response, 200) && !response!.body.includes(id))
      fail('customers.get: wrong body');
  }

  async function buyThroughUssd(): Promise<void> {
    if (customers.length === 0) return createCustomer();
    const customerId = pick(customers);
    const opened = await call('ussd.session', 'POST', '/v1/ussd/session', { customerId }, randomUUID());
    if (!expect('ussd.session', opened, 201)) return;
    let data = (JSON.parse(opened!.body) as { data: UssdData }).data;
    const press = async (choice: string, state: string): Promise<boolean> => {
      const moved = await call(
        'ussd.process',
        'POST',
        '/v1/ussd/process',
        { sessionId: data.sessionId, choice },
        randomUUID(),
      );
      if (!expect('ussd.process', moved, 200)) return false;
      data = (JSON.parse(moved!.body) as { data: UssdData }).data;
      if (data.currentState !== state) {
        fail(
          `ussd.process ${choice}: ${data.currentState} (expected ${state}) ${data.ussdText.slice(0, 120)}`,
        );
        return false;
      }
      return true;
    };
    if (!(await press('1', 'STOCKS'))) return;
    // A stock of the demo NSE catalog (test fixtures on a shared database start with Z or T).
    const stocks = data.menu.options.filter((o) => o.data && !/^[ZT]/.test(o.data.symbol));
    if (stocks.length === 0) return fail('ussd: no stock listed on the first page');
    const outcome = pick(['SUCCESS', 'SUCCESS', 'SUCCESS', 'SUCCESS', 'FAILED', 'PENDING'] as const);
    const steps: [string, string][] = [
      [pick(stocks).key, 'SELECT_STOCK'],
      ['1', 'BUY_AMOUNT'],
      [amountFor(outcome), 'BUY_CONFIRM'],
      ['1', 'BUY_SUBMITTED'],
    ];
    for (const [choice, state] of steps) if (!(await press(choice, state))) return;
    const ref = /Ref (c[a-z0-9]{24})/.exec(data.menu.text)?.[1];
    if (!ref) return fail(`ussd: no order reference in ${data.menu.text}`);
    orders.set(ref, outcome);
  }

  async function pollPayment(): Promise<void> {
    if (orders.size === 0) return buyThroughUssd();
    const orderId = pick([...orders.keys()]);
    const response = await call('payment.status', 'GET', `/v1/payment/status/${orderId}`);
    if (!expect('payment.status', response, 200)) return;
    const status = (JSON.parse(response!.body) as { data: { payment?: { status: string } } }).data.payment
      ?.status;
    if (!['PENDING', 'SUCCESS', 'FAILED'].includes(status ?? '')) fail(`payment.status: payment ${status}`);
  }

  const mix: [number, () => Promise<void>][] = [
    [25, createCustomer],
    [20, listCustomers],
    [20, getCustomer],
    [15, buyThroughUssd],
    [20, pollPayment],
  ];
  const totalWeight = mix.reduce((sum, [w]) => sum + w, 0);
  const nextOperation = () => {
    let r = Math.random() * totalWeight;
    for (const [weight, op] of mix) {
      r -= weight;
      if (r < 0) return op;
    }
    return mix[0]![1];
  };

  // RSS samples of the server process, every sampleEveryMs, from the start of the traffic.
  const pid = server.child.pid!;
  const samples: { at: number; mb: number }[] = [];
  const started = Date.now();
  const sample = () => samples.push({ at: (Date.now() - started) / 1000, mb: rssMb(pid) });
  sample();
  const sampler = setInterval(sample, options.sampleEveryMs);
  const progress = setInterval(() => {
    const last = samples.at(-1);
    log(
      `soak: ${Math.round((Date.now() - started) / 1000)} s, ${requests} requests, ${errors} errors, ` +
        `${customers.length} customers, ${orders.size} orders, rss ${last?.mb.toFixed(0)} MB`,
    );
  }, 30_000);
  const deadline = started + options.seconds * 1000;
  await Promise.all(
    Array.from({ length: options.concurrency }, async () => {
      while (Date.now() < deadline) await nextOperation()();
    }),
  );
  sample();
  clearInterval(sampler);
  clearInterval(progress);
  const elapsed = (Date.now() - started) / 1000;
  log(`soak: traffic done after ${elapsed.toFixed(0)} s: ${requests} requests, ${errors} errors`);

  const reconciliation = await reconcile(pool, partner.organizationId, customers, orders, options.settleMs);

  const warmup = options.warmupSeconds;
  const windowSeconds = Math.min(60, (options.seconds - warmup) / 3);
  const firstWindow = samples
    .filter((s) => s.at >= warmup && s.at <= warmup + windowSeconds)
    .map((s) => s.mb);
  const lastWindow = samples.filter((s) => s.at >= elapsed - windowSeconds).map((s) => s.mb);
  const firstMedian = median(firstWindow);
  const lastMedian = median(lastWindow);
  const rss = {
    samplesMb: samples.map((s) => Math.round(s.mb)),
    firstWindowMedianMb: Math.round(firstMedian),
    lastWindowMedianMb: Math.round(lastMedian),
    growthMb: Math.round(lastMedian - firstMedian),
    boundMb: options.boundMb,
    windowSeconds: Math.round(windowSeconds),
    warmupSeconds: Math.round(warmup),
  };
  const report: SoakReport = {
    seconds: Math.round(elapsed),
    concurrency: options.concurrency,
    requests,
    byOperation,
    errors,
    errorSamples,
    customersCreated: customers.length,
    replays,
    ordersPlaced: orders.size,
    ordersByStatus: reconciliation.ordersByStatus,
    writesLost: reconciliation.writesLost,
    unexpectedWrites: reconciliation.unexpectedWrites,
    reconciliationProblems: reconciliation.problems,
    serverErrors: server
      .output()
      .split('\n')
      .filter((line) => /"level":(50|60)\b/.test(line))
      .slice(0, 20),
    rss,
    ok:
      errors === 0 &&
      reconciliation.problems.length === 0 &&
      reconciliation.writesLost === 0 &&
      lastMedian < firstMedian + options.boundMb,
  };
  return report;
}

type UssdData = {
  sessionId: string;
  currentState: string;
  ussdText: string;
  menu: { text: string; options: { key: string; data?: { stockId: string; symbol: string } }[] };
};

/** Waits for the simulator to settle, then checks the database against what the traffic was told. */
async function reconcile(
  pool: pg.Pool,
  organizationId: string,
  acknowledgedCustomers: string[],
  acknowledgedOrders: Map<string, 'SUCCESS' | 'FAILED' | 'PENDING'>,
  settleMs: number,
) {
  const problems: string[] = [];
  const q = async <T>(text: string, values: unknown[] = [organizationId]) =>
    (await pool.query(text, values)).rows as T[];

  // Settlement: the simulator answers settleMs after each request (and repeats a refused callback).
  const deadline = Date.now() + Math.max(30_000, settleMs * 20);
  for (;;) {
    const [row] = await q<{ n: number }>(
      `select count(*)::int as n from transactions where organization_id = $1 and status = 'PENDING'
         and split_part(amount::text, '.', 1) not like '%02'`,
    );
    if (row?.n === 0) break;
    if (Date.now() > deadline) {
      problems.push(`${row?.n} transaction(s) still PENDING that should have settled`);
      // Where each one is in the payment pipeline, so that a failure says why.
      const stuck = await q<Record<string, unknown>>(
        `select t.id, t.amount::text, r.state, r.attempts, r.next_attempt_at, r.locked_until, r.last_error
           from transactions t left join provider_requests r on r.transaction_id = t.id
          where t.organization_id = $1 and t.status = 'PENDING'
            and split_part(t.amount::text, '.', 1) not like '%02' limit 10`,
      );
      for (const s of stuck) problems.push(`still PENDING: ${JSON.stringify(s)}`);
      break;
    }
    await sleep(250);
  }

  const dbCustomers = new Set(
    (await q<{ id: string }>('select id from customers where organization_id = $1')).map((r) => r.id),
  );
  const dbOrders = await q<{ id: string; status: string; side: string; amount: string }>(
    'select id, status, side, amount::text from orders where organization_id = $1',
  );
  const orderIds = new Set(dbOrders.map((o) => o.id));
  const lostCustomers = acknowledgedCustomers.filter((id) => !dbCustomers.has(id));
  const lostOrders = [...acknowledgedOrders.keys()].filter((id) => !orderIds.has(id));
  const writesLost = lostCustomers.length + lostOrders.length;
  if (writesLost > 0)
    problems.push(`writes lost: ${lostCustomers.length} customers, ${lostOrders.length} orders`);
  const ackCustomers = new Set(acknowledgedCustomers);
  const unexpectedWrites =
    [...dbCustomers].filter((id) => !ackCustomers.has(id)).length +
    dbOrders.filter((o) => !acknowledgedOrders.has(o.id)).length;
  if (unexpectedWrites > 0) problems.push(`${unexpectedWrites} row(s) written that no answer acknowledged`);

  const ordersByStatus: Record<string, number> = {};
  for (const order of dbOrders) ordersByStatus[order.status] = (ordersByStatus[order.status] ?? 0) + 1;

  // Every BUY order: exactly one INCOMING transaction, no OUTGOING one (nothing was cancelled).
  const shapes = await q<{ id: string; incoming: number; outgoing: number; paid: number }>(
    `select o.id,
            count(*) filter (where t.type = 'INCOMING')::int as incoming,
            count(*) filter (where t.type = 'OUTGOING')::int as outgoing,
            count(*) filter (where t.type = 'INCOMING' and t.status = 'SUCCESS')::int as paid
       from orders o left join transactions t on t.order_id = o.id
      where o.organization_id = $1 and o.side = 'BUY'
      group by o.id`,
  );
  for (const s of shapes) {
    if (s.incoming !== 1) problems.push(`order ${s.id}: ${s.incoming} INCOMING transactions`);
    if (s.outgoing !== 0) problems.push(`order ${s.id}: ${s.outgoing} OUTGOING transactions`);
    if (s.paid > 1) problems.push(`order ${s.id}: paid ${s.paid} times`);
  }

  // Order status and payment status agree, and match what the magic amount asked for.
  const expected: Record<string, [string, string]> = {
    SUCCESS: ['EXECUTED', 'SUCCESS'],
    FAILED: ['FAILED', 'FAILED'],
    PENDING: ['PENDING_PAYMENT', 'PENDING'],
  };
  const pairs = await q<{ id: string; order_status: string; payment_status: string; amount: string }>(
    `select o.id, o.status as order_status, t.status as payment_status, o.amount::text as amount
       from orders o join transactions t on t.order_id = o.id and t.type = 'INCOMING'
      where o.organization_id = $1`,
  );
  for (const p of pairs) {
    const want = acknowledgedOrders.get(p.id);
    if (!want) continue;
    const [orderStatus, paymentStatus] = expected[want]!;
    if (p.order_status !== orderStatus || p.payment_status !== paymentStatus) {
      problems.push(
        `order ${p.id} (${p.amount}): ${p.order_status}/${p.payment_status}, expected ${orderStatus}/${paymentStatus}`,
      );
    }
  }

  // Holdings: the units of the EXECUTED buys, per customer and stock, are exactly what is held.
  const holdings = await q<{
    customer_id: string;
    stock_id: string;
    executed: string | null;
    held: string | null;
  }>(
    `with bought as (
       select customer_id, stock_id, sum(quantity) as units from orders
        where organization_id = $1 and side = 'BUY' and status = 'EXECUTED' group by customer_id, stock_id
     ), held as (
       select customer_id, stock_id, units from holdings where organization_id = $1
     )
     select coalesce(b.customer_id, h.customer_id) as customer_id, coalesce(b.stock_id, h.stock_id) as stock_id,
            b.units::text as executed, h.units::text as held
       from bought b full join held h on h.customer_id = b.customer_id and h.stock_id = b.stock_id
      where b.units is distinct from h.units`,
  );
  for (const h of holdings) {
    problems.push(`holding ${h.customer_id}/${h.stock_id}: executed ${h.executed} units, held ${h.held}`);
  }
  return { problems, writesLost, unexpectedWrites, ordersByStatus };
}

function printReport(report: SoakReport): void {
  const lines = [
    `soak ${report.ok ? 'PASSED' : 'FAILED'}: ${report.seconds} s, concurrency ${report.concurrency}`,
    `  requests served: ${report.requests} (${Object.entries(report.byOperation)
      .map(([op, n]) => `${op} ${n}`)
      .join(', ')})`,
    `  errors: ${report.errors}`,
    `  customers created: ${report.customersCreated} (idempotent replays checked: ${report.replays})`,
    `  orders placed: ${report.ordersPlaced} (${Object.entries(report.ordersByStatus)
      .map(([s, n]) => `${s} ${n}`)
      .join(', ')})`,
    `  writes lost: ${report.writesLost}; rows no answer acknowledged: ${report.unexpectedWrites}`,
    `  reconciliation problems: ${report.reconciliationProblems.length}`,
    `  server RSS: first ${report.rss.windowSeconds} s median ${report.rss.firstWindowMedianMb} MB, last ${report.rss.windowSeconds} s median ${report.rss.lastWindowMedianMb} MB, growth ${report.rss.growthMb} MB (bound ${report.rss.boundMb} MB)`,
    `  RSS samples (MB, from the start of the traffic; warm-up ${report.rss.warmupSeconds} s): ${report.rss.samplesMb.join(' ')}`,
  ];
  for (const sample of report.errorSamples) lines.push(`  error: ${sample}`);
  for (const problem of report.reconciliationProblems.slice(0, 20)) lines.push(`  problem: ${problem}`);
  for (const line of report.serverErrors) lines.push(`  server error: ${line}`);
  process.stdout.write(`${lines.join('\n')}\n`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const report = await runSoak({
    seconds: Number(process.env.SOAK_SECONDS ?? 600),
    concurrency: Number(process.env.SOAK_CONCURRENCY ?? 20),
    databaseUrl: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
    redisUrl: process.env.REDIS_URL,
  });
  printReport(report);
  process.exitCode = report.ok ? 0 : 1;
}
