/**
 * The ledger under random trading and crashes (docs/market.md, "The ledger"): a property over random
 * sequences of USSD buys (the customer approves, declines, pays without a callback, the callback is
 * late or never comes), USSD sells of held units, cancels from the requests menu, operator price
 * changes and SIGKILLs of the server (between steps, a random moment after one, or while a buy's
 * confirmation is in flight) followed by a restart on the same database. Each sequence ends, once the
 * payment pipeline has settled all it can, with `ledger check` clean and the money and units
 * invariants that can be seen from outside holding.
 *
 * Each sequence has an organization, customers and instruments of its own (symbols with a random
 * suffix), on a real `partner-api serve` in production on PostgreSQL (a scratch database of this
 * file), M-Pesa being the Daraja fake over HTTP: one process for the file, which the sequences' SIGKILLs
 * kill and restart (a start costs seconds). It drives only public surfaces: the partner API (customers, USSD), the admin API (instruments,
 * prices, orders, stuck payments, ledger check). The one exception is each customer's opening
 * position, written as migration 0010 writes one (a holding and its OPENING entry): units bought
 * here settle T+3 trading days later, so a sell needs units held from before.
 *
 * The payment outcome of a buy is chosen by its amount (the fake's magic amounts), so it stays the
 * buy's own across kills and restarts. LEDGER_PROPERTY_RUNS (default 10) sets the number of
 * sequences, LEDGER_PROPERTY_SEED replays one run's sequences (the timing of the processes is not
 * replayed: a kill lands where the clock puts it).
 */
import { randomBytes, randomInt } from 'node:crypto';
import { createId } from '@partner-api/contract';
import { type FakeDaraja, type FakeScenario, MAGIC_AMOUNTS, startFakeDaraja } from '@partner-api/fakes';
import { POSTGRES_SKIP_REASON, tempDataDir } from '@partner-api/testkit/app.ts';
import { ownDatabase } from '@partner-api/testkit/database.ts';
import { adminFetch } from '@partner-api/testkit/helpers.ts';
import { createPartner, type Partner, signedFetch } from '@partner-api/testkit/partner.ts';
import { freePort, type ServerProcess, startServer } from '@partner-api/testkit/process.ts';
import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { productionEnv } from '../payments/mpesa/production.ts';

if (!process.env.DATABASE_URL) console.warn(`ledger property over processes: ${POSTGRES_SKIP_REASON}`);

const RUNS = Number(process.env.LEDGER_PROPERTY_RUNS ?? 10);
const SEED = process.env.LEDGER_PROPERTY_SEED
  ? Number(process.env.LEDGER_PROPERTY_SEED)
  : randomInt(0, 2 ** 31 - 1);
const ADMIN_TOKEN = 'a'.repeat(32);
/** A collection nobody can tell us about fails (or goes to the operator) at this age. */
const MAX_PENDING_SECONDS = 5;
/** How long the pipeline may take to settle a sequence's payments after its last step. */
const SETTLE_DEADLINE_MS = (MAX_PENDING_SECONDS + 20) * 1000;

// ---------- the sequences ----------

/** What the customer's phone and M-Pesa do with a buy's prompt (the amount picks it at the fake). */
type BuyOutcome =
  | 'approves'
  | 'approves, the callback comes twice'
  | 'declines'
  | 'has too little money'
  | 'approves, the callback is late'
  | 'approves, no callback ever'
  | 'never answers';

const OUTCOME_AMOUNT: Record<Exclude<BuyOutcome, 'approves'>, number> = {
  'approves, the callback comes twice': 6002,
  declines: 1032,
  'has too little money': 1111,
  'approves, the callback is late': 6003,
  'approves, no callback ever': 6001,
  'never answers': 6005,
};

/** What the fake does with each scenario: did the customer's money move? */
const PAID_SCENARIOS = new Set<FakeScenario>([
  'success',
  'duplicate-callback',
  'late-callback',
  'no-callback',
  'slow',
  'reset',
  'query-contradicts-paid',
]);

type Kill =
  /** SIGKILL `afterMs` after the previous step (0: at once, e.g. right after a confirm). */
  | { kind: 'kill'; mode: 'after'; afterMs: number; downMs: number }
  /** A buy whose confirmation is in flight when the SIGKILL comes, `afterMs` after it was sent. */
  | {
      kind: 'kill';
      mode: 'mid-confirm';
      afterMs: number;
      downMs: number;
      customer: number;
      instrument: number;
      outcome: BuyOutcome;
      amount: number;
    };

type Step =
  | { kind: 'buy'; customer: number; instrument: number; outcome: BuyOutcome; amount: number }
  /** Sells `share` of the sellable whole units (at least one). */
  | { kind: 'sell'; customer: number; instrument: number; share: number }
  /** Cancels the `pick`-th open request listed (modulo their number). */
  | { kind: 'cancel'; customer: number; pick: number }
  | { kind: 'price'; instrument: number; price: string }
  | Kill;

type Sequence = {
  customers: number;
  /** Each customer's opening whole units of each instrument. */
  openings: number[][];
  prices: string[];
  steps: Step[];
};

const INSTRUMENTS = 2;
/** A price between 10 and 60 with up to 4 decimals: every payout is at least M-Pesa's KES 10. */
const priceArb = fc
  .integer({ min: 100_000, max: 600_000 })
  .map((v) => `${Math.floor(v / 10_000)}.${String(v % 10_000).padStart(4, '0')}`);
const who = fc.nat(5);
const outcomeArb = fc.constantFrom<BuyOutcome>(
  'approves',
  'approves',
  'approves',
  'approves, the callback comes twice',
  'declines',
  'has too little money',
  'approves, the callback is late',
  'approves, no callback ever',
  'never answers',
);
const amountArb = fc.integer({ min: 100, max: 3000 });
const killArb: fc.Arbitrary<Kill> = fc.oneof(
  fc.record({
    kind: fc.constant('kill' as const),
    mode: fc.constant('after' as const),
    afterMs: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 1500 })),
    downMs: fc.integer({ min: 0, max: 1000 }),
  }),
  fc.record({
    kind: fc.constant('kill' as const),
    mode: fc.constant('mid-confirm' as const),
    afterMs: fc.integer({ min: 0, max: 60 }),
    downMs: fc.integer({ min: 0, max: 1000 }),
    customer: who,
    instrument: fc.nat(INSTRUMENTS - 1),
    outcome: outcomeArb,
    amount: amountArb,
  }),
);
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('buy' as const),
      customer: who,
      instrument: fc.nat(INSTRUMENTS - 1),
      outcome: outcomeArb,
      amount: amountArb,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('sell' as const),
      customer: who,
      instrument: fc.nat(INSTRUMENTS - 1),
      share: fc.double({ min: 0, max: 1, noNaN: true }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('cancel' as const), customer: who, pick: fc.nat(7) }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('price' as const),
      instrument: fc.nat(INSTRUMENTS - 1),
      price: priceArb,
    }),
  },
  { weight: 1, arbitrary: killArb },
);
const sequenceArb: fc.Arbitrary<Sequence> = fc
  .record({
    customers: fc.integer({ min: 2, max: 3 }),
    openings: fc.array(
      fc.array(fc.integer({ min: 3, max: 40 }), { minLength: INSTRUMENTS, maxLength: INSTRUMENTS }),
      {
        minLength: 3,
        maxLength: 3,
      },
    ),
    prices: fc.array(priceArb, { minLength: INSTRUMENTS, maxLength: INSTRUMENTS }),
    steps: fc.array(stepArb, { minLength: 6, maxLength: 10 }),
    kill: killArb,
    killAt: fc.nat(),
  })
  // Every sequence has at least one SIGKILL: one is put in where none was drawn.
  .map(({ kill, killAt, steps, ...rest }) => {
    if (steps.some((s) => s.kind === 'kill')) return { ...rest, steps };
    const at = killAt % (steps.length + 1);
    return { ...rest, steps: [...steps.slice(0, at), kill, ...steps.slice(at)] };
  });

// ---------- units as exact integers of 1/10,000 ----------

const SCALE = 10_000n;
function units(text: string): bigint {
  const [whole, fraction = ''] = text.replace(/,/g, '').split('.');
  return BigInt(whole!) * SCALE + BigInt(fraction.padEnd(4, '0').slice(0, 4));
}
const unitsText = (value: bigint) => {
  const sign = value < 0n ? '-' : '';
  const abs = value < 0n ? -value : value;
  return `${sign}${abs / SCALE}.${String(abs % SCALE).padStart(4, '0')}`;
};

/** A buy amount that picks `outcome` at the fake: a magic amount, or any other for a plain approval. */
function amountFor(outcome: BuyOutcome, drawn: number): number {
  if (outcome !== 'approves') return OUTCOME_AMOUNT[outcome];
  let amount = drawn;
  while (MAGIC_AMOUNTS[amount]) amount++;
  return amount;
}

// ---------- the suite ----------

type UssdScreen = {
  sessionId: string;
  currentState: string;
  menu: {
    text: string;
    options: { key: string; label: string; nextState?: string; data?: { symbol: string } }[];
  };
};

type AdminTransaction = { id: string; type: 'INCOMING' | 'OUTGOING'; status: string; amount: string };
type AdminOrder = {
  id: string;
  customerId: string;
  symbol: string;
  side: 'BUY' | 'SELL';
  status: string;
  amount: string;
  quantity: string | null;
  transactions: AdminTransaction[];
};
type StuckRequest = {
  transactionId: string;
  organizationId: string;
  state: string;
  lastError: string | null;
};

describe.skipIf(!process.env.DATABASE_URL)(
  'the ledger under random trading and SIGKILLs, in production',
  () => {
    let database: Awaited<ReturnType<typeof ownDatabase>>;
    let db: pg.Client;
    /**
     * The server process and the fake: one of each for the file, a sequence's SIGKILLs restart the
     * process on the same database (a start costs seconds; each sequence has an organization of its own).
     */
    const shared = {} as { server: ServerProcess; env: Record<string, string>; fake: FakeDaraja };

    beforeAll(async () => {
      database = await ownDatabase('postgres', 'ledger_property');
      db = new pg.Client({ connectionString: database.url });
      await db.connect();
      shared.fake = await startFakeDaraja({ callbackDelayMs: 50, lateCallbackMs: 2500 });
      const port = await freePort();
      shared.env = productionEnv(shared.fake.url, {
        DATABASE_URL: database.url!,
        PORT: String(port),
        PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
        DATA_DIR: tempDataDir(),
        MARKET_HOURS: 'always-open',
        RATE_LIMIT_GLOBAL: '100000/60s',
        RATE_LIMIT_TOKEN: '100000/60s',
        MPESA_REQUEST_TIMEOUT_MS: '3000',
        MPESA_RECONCILE_AFTER_SECONDS: '2',
        PAYMENT_LEASE_SECONDS: '2',
        PAYMENT_BACKOFF_BASE_MS: '100',
        PAYMENT_BACKOFF_MAX_MS: '400',
        PAYMENT_MAX_PENDING_SECONDS: String(MAX_PENDING_SECONDS),
      });
      shared.server = await startServer(shared.env);
    }, 120_000);
    afterAll(async () => {
      await shared.server?.stop('SIGKILL');
      await shared.fake?.close();
      await db?.end().catch(() => {});
      await database?.drop();
    });

    /** One sequence: its process, fake, partner and what it did. */
    class Run {
      partner!: Partner;
      customers: { id: string; msisdn: string }[] = [];
      symbols: string[] = [];
      opening = new Map<string, bigint>();
      journal: string[] = [];
      kills = 0;
      timing: string[] = [];
      /** Each order's end: side, status, refunded, with the operator. */
      outcomes: string[] = [];

      constructor(readonly sequence: Sequence) {}

      get server() {
        return shared.server;
      }
      get fake() {
        return shared.fake;
      }

      async start() {
        this.partner = await createPartner({
          baseUrl: this.server.baseUrl,
          adminUrl: this.server.adminUrl,
          adminToken: ADMIN_TOKEN,
        });
        const tag = randomBytes(3).toString('hex').toUpperCase();
        this.symbols = this.sequence.prices.map((_, i) => `LP${tag}${i}`);
        await this.admin(
          'POST',
          '/admin/stocks',
          this.symbols.map((symbol, i) => ({
            symbol,
            name: `Ledger Property ${symbol}`,
            price: this.sequence.prices[i],
            currency: 'KES',
          })),
          200,
        );
        for (let c = 0; c < this.sequence.customers; c++) {
          const msisdn = `25471${String(randomInt(0, 10_000_000)).padStart(7, '0')}`;
          const res = await signedFetch(this.partner, {
            method: 'POST',
            url: '/v1/customers',
            body: { firstName: 'Property', lastName: `Test${c}`, msisdn },
          });
          const body = (await res.json()) as { data: { id: string } };
          expect(res.status, JSON.stringify(body)).toBe(201);
          this.customers.push({ id: body.data.id, msisdn });
          for (let i = 0; i < INSTRUMENTS; i++) await this.openPosition(body.data.id, i);
        }
      }

      /** Units held from before this run (as migration 0010 opens the ledger): settled, so sellable. */
      async openPosition(customerId: string, instrument: number) {
        const held = `${this.sequence.openings[this.customers.length - 1]![instrument]}.0000`;
        const symbol = this.symbols[instrument]!;
        await db.query('begin');
        const {
          rows: [stock],
        } = await db.query<{ id: string }>('select id from stocks where symbol = $1', [symbol]);
        const org = this.partner.organizationId;
        await db.query(
          'insert into holdings (organization_id, customer_id, stock_id, units) values ($1, $2, $3, $4)',
          [org, customerId, stock!.id, held],
        );
        await db.query(
          `insert into ledger_entries (id, organization_id, customer_id, stock_id, kind, units)
         values ($1, $2, $3, $4, 'OPENING', $5)`,
          [createId(), org, customerId, stock!.id, held],
        );
        await db.query('commit');
        this.opening.set(`${customerId} ${symbol}`, units(held));
      }

      async admin(method: string, url: string, body: unknown, expected: number) {
        const res = await adminFetch(this.server.adminUrl, ADMIN_TOKEN, method, url, body);
        expect(res.status, `${method} ${url}: ${JSON.stringify(res.body)}`).toBe(expected);
        return res.body as { data: unknown };
      }

      async post(url: string, body: unknown): Promise<UssdScreen> {
        const res = await signedFetch(this.partner, { method: 'POST', url, body });
        const json = (await res.json()) as { data: UssdScreen };
        expect([200, 201], `${url} ${JSON.stringify(body)}: ${res.status} ${JSON.stringify(json)}`).toContain(
          res.status,
        );
        expect(json.data.currentState, json.data.menu.text).not.toBe('ERROR');
        return json.data;
      }
      open = (customer: number) =>
        this.post('/v1/ussd/session', { customerId: this.customerOf(customer).id });
      press = (screen: UssdScreen, choice: string) =>
        this.post('/v1/ussd/process', { sessionId: screen.sessionId, choice });

      customerOf = (n: number) => this.customers[n % this.customers.length]!;

      /** HOME → STOCKS → Search → the symbol → SELECT_STOCK. */
      async selectStock(customer: number, instrument: number): Promise<UssdScreen> {
        const symbol = this.symbols[instrument]!;
        let screen = await this.press(await this.open(customer), '1');
        screen = await this.press(await this.press(screen, '8'), symbol);
        const option = screen.menu.options.find((o) => o.data?.symbol === symbol);
        expect(option, screen.menu.text).toBeDefined();
        screen = await this.press(screen, option!.key);
        expect(screen.currentState, screen.menu.text).toBe('SELECT_STOCK');
        return screen;
      }

      /** SELECT_STOCK → BUY_AMOUNT → BUY_CONFIRM. */
      async toBuyConfirm(customer: number, instrument: number, amount: number) {
        const screen = await this.press(
          await this.press(await this.selectStock(customer, instrument), '1'),
          String(amount),
        );
        expect(screen.currentState, screen.menu.text).toBe('BUY_CONFIRM');
        return screen;
      }

      async buy(step: Extract<Step, { kind: 'buy' }>) {
        const amount = amountFor(step.outcome, step.amount);
        const screen = await this.press(await this.toBuyConfirm(step.customer, step.instrument, amount), '1');
        expect(screen.currentState, screen.menu.text).toBe('BUY_SUBMITTED');
        return `buy ${this.symbols[step.instrument]} KES ${amount} (customer ${step.customer % this.customers.length} ${step.outcome})`;
      }

      async sell(step: Extract<Step, { kind: 'sell' }>) {
        const symbol = this.symbols[step.instrument]!;
        const c = step.customer % this.customers.length;
        const selected = await this.selectStock(step.customer, step.instrument);
        if (!selected.menu.options.some((o) => o.key === '2'))
          return `sell ${symbol} (customer ${c}): none held`;
        const asked = await this.press(selected, '2');
        const max = /\(max (\d+)\)/.exec(asked.menu.text)?.[1];
        if (asked.currentState !== 'SELL_QUANTITY' || !max)
          return `sell ${symbol} (customer ${c}): ${asked.menu.text}`;
        const quantity = Math.max(1, Math.ceil(step.share * Number(max)));
        const confirm = await this.press(asked, String(quantity));
        expect(confirm.currentState, confirm.menu.text).toBe('SELL_CONFIRM');
        const proceeds = /Est\. proceeds: KES ([\d,]+)\./.exec(confirm.menu.text)?.[1]?.replace(/,/g, '');
        expect(proceeds, confirm.menu.text).toBeDefined();
        // A payout whose whole shillings are a magic amount would meet that scenario at the fake.
        if (MAGIC_AMOUNTS[Number(proceeds)]) {
          await this.press(confirm, '2');
          return `sell ${quantity} ${symbol} (customer ${c}): not sent, KES ${proceeds} is a magic amount`;
        }
        const done = await this.press(confirm, '1');
        expect(done.currentState, done.menu.text).toBe('SELL_SUBMITTED');
        return `sell ${quantity} ${symbol} (customer ${c}) for about KES ${proceeds}`;
      }

      async cancel(step: Extract<Step, { kind: 'cancel' }>) {
        const c = step.customer % this.customers.length;
        const listed = await this.press(await this.press(await this.open(step.customer), '2'), '1');
        const requests = listed.menu.options.filter((o) => o.nextState === 'REQUEST_DETAILS');
        if (listed.currentState !== 'REQUESTS' || requests.length === 0)
          return `cancel (customer ${c}): none open`;
        const picked = requests[step.pick % requests.length]!;
        const details = await this.press(listed, picked.key);
        if (details.currentState !== 'REQUEST_DETAILS')
          return `cancel ${picked.label} (customer ${c}): ${details.menu.text}`;
        const asked = await this.press(details, '1');
        if (asked.currentState !== 'CANCEL_REQUEST_CONFIRMATION')
          return `cancel ${picked.label} (customer ${c}): ${asked.menu.text}`;
        const done = await this.press(asked, '1');
        // Settled meanwhile (the payment came first): the confirmation says it is no longer open.
        return `cancel ${picked.label} (customer ${c}): ${done.currentState} ${done.menu.text.split('\n')[0]}`;
      }

      async price(step: Extract<Step, { kind: 'price' }>) {
        const symbol = this.symbols[step.instrument]!;
        await this.admin('POST', '/admin/prices', { symbol, price: step.price }, 201);
        return `price ${symbol} ${step.price}`;
      }

      async kill(step: Kill) {
        let what: string;
        if (step.mode === 'mid-confirm') {
          const amount = amountFor(step.outcome, step.amount);
          const confirm = await this.toBuyConfirm(step.customer, step.instrument, amount);
          const inFlight = signedFetch(this.partner, {
            method: 'POST',
            url: '/v1/ussd/process',
            body: { sessionId: confirm.sessionId, choice: '1' },
          }).then(
            async (res) =>
              `answered ${res.status} ${((await res.json()) as { data?: UssdScreen }).data?.currentState ?? ''}`,
            () => 'no answer',
          );
          await sleep(step.afterMs);
          await shared.server.stop('SIGKILL');
          what = `SIGKILL ${step.afterMs} ms into the confirmation of buy ${this.symbols[step.instrument]} KES ${amount} (customer ${step.customer % this.customers.length} ${step.outcome}): ${await inFlight}`;
        } else {
          await sleep(step.afterMs);
          await shared.server.stop('SIGKILL');
          what = `SIGKILL ${step.afterMs} ms after the previous step`;
        }
        this.kills++;
        // Down a while: the fake's callbacks meanwhile are refused, and only a query can tell.
        await sleep(step.downMs);
        const t0 = Date.now();
        shared.server = await startServer(shared.env);
        this.timing.push(`restart ${Date.now() - t0} ms`);
        return `${what}; restarted after ${step.downMs} ms down`;
      }

      async perform(step: Step): Promise<string> {
        switch (step.kind) {
          case 'buy':
            return this.buy(step);
          case 'sell':
            return this.sell(step);
          case 'cancel':
            return this.cancel(step);
          case 'price':
            return this.price(step);
          case 'kill':
            return this.kill(step);
        }
      }

      async orders(): Promise<AdminOrder[]> {
        const org = this.partner.organizationId;
        // The operator's list is the body itself, not wrapped in `data`.
        return (await this.admin(
          'GET',
          `/admin/orders?organizationId=${org}&limit=1000`,
          undefined,
          200,
        )) as unknown as AdminOrder[];
      }

      async stuck(): Promise<StuckRequest[]> {
        const all = (
          await this.admin('GET', '/admin/payments/stuck?olderThanSeconds=0&limit=1000', undefined, 200)
        ).data as StuckRequest[];
        return all.filter((r) => r.organizationId === this.partner.organizationId);
      }

      /**
       * Waits until the pipeline has done all it can: no order PAID and unexecuted, and every PENDING
       * transaction's request with the operator (the customer may have paid: a person decides). What is
       * still moving when the deadline passes is returned.
       */
      async settled(): Promise<{ orders: AdminOrder[]; operator: Map<string, string>; moving: string[] }> {
        const t0 = Date.now();
        const deadline = t0 + SETTLE_DEADLINE_MS;
        for (;;) {
          const orders = await this.orders();
          const stuck = await this.stuck();
          const operator = new Map(
            stuck.filter((r) => r.state === 'OPERATOR').map((r) => [r.transactionId, r.lastError ?? '']),
          );
          const moving = [
            ...orders.filter((o) => o.status === 'PAID').map((o) => `order ${o.id} PAID`),
            ...orders.flatMap((o) =>
              o.transactions
                .filter((t) => t.status === 'PENDING' && !operator.has(t.id))
                .map((t) => `${t.type} ${t.id} of order ${o.id} PENDING`),
            ),
            ...stuck
              .filter((r) => r.state !== 'OPERATOR')
              .map((r) => `request of ${r.transactionId} ${r.state}`),
          ];
          if (moving.length === 0 || Date.now() > deadline) {
            this.timing.push(`settled in ${Date.now() - t0} ms`);
            return { orders, operator, moving };
          }
          await sleep(250);
        }
      }

      /** The portfolio screen's units per symbol. */
      async portfolio(customer: number): Promise<Map<string, bigint>> {
        const screen = await this.press(await this.open(customer), '2');
        expect(screen.currentState).toBe('PORTFOLIO');
        const held = new Map<string, bigint>();
        for (const line of screen.menu.text.split('\n')) {
          const match = /^(\S+) ([\d,]+(?:\.\d+)?) units,/.exec(line);
          if (match) held.set(match[1]!, units(match[2]!));
        }
        expect(screen.menu.text, 'the portfolio lists every holding').not.toMatch(/more$/m);
        return held;
      }

      /** Every invariant seen from outside; the problems found, none when all hold. */
      async check(): Promise<string[]> {
        const problems: string[] = [];
        const { orders, operator, moving } = await this.settled();
        for (const m of moving) problems.push(`not settled after ${SETTLE_DEADLINE_MS} ms: ${m}`);

        const check = (await this.admin(
          'GET',
          `/admin/ledger/check?organizationId=${this.partner.organizationId}`,
          undefined,
          200,
        )) as { data: { balanced: boolean; differences: unknown[] } };
        for (const d of check.data.differences) problems.push(`ledger check: ${JSON.stringify(d)}`);

        // What M-Pesa says: the collections whose money moved (by the transaction id's tail it was sent with).
        const paidAtProvider = new Set(
          this.fake.requests
            .filter(
              (r) =>
                r.operation === 'stk-push' &&
                r.status === 200 &&
                r.scenario &&
                PAID_SCENARIOS.has(r.scenario),
            )
            .map((r) => (r.body as { AccountReference: string }).AccountReference),
        );
        for (const o of orders) {
          const collections = o.transactions.filter((t) => t.type === 'INCOMING');
          const outgoing = o.transactions.filter((t) => t.type === 'OUTGOING');
          const paid = collections.filter((t) => paidAtProvider.has(t.id.slice(-12)));
          const tell = `${o.side} ${o.id} ${o.status} ${JSON.stringify(o.transactions.map((t) => [t.type, t.status, t.amount]))}`;
          if (o.side === 'BUY' && o.status === 'EXECUTED' && paid.length !== 1)
            problems.push(`executed without the customer's money at M-Pesa: ${tell}`);
          if (o.side === 'BUY' && o.status !== 'EXECUTED') {
            const refunded = outgoing.some((t) => t.amount === o.amount && t.status !== 'FAILED');
            if (collections.some((t) => t.status === 'SUCCESS') && !refunded)
              problems.push(`a successful collection without its refund: ${tell}`);
            // Paid at M-Pesa whatever we recorded: refunded, or with the operator (who decides).
            if (paid.some((t) => !operator.has(t.id)) && !refunded)
              problems.push(
                `the customer paid M-Pesa, the order is ${o.status} and nothing is refunded: ${tell}`,
              );
          }
          if (o.side === 'SELL' && (o.status !== 'EXECUTED' || outgoing.length !== 1))
            problems.push(`a sell without exactly one payout: ${tell}`);
          const refund = o.side === 'BUY' && outgoing.length > 0 ? ', refunded' : '';
          const withOperator = o.transactions.some((t) => operator.has(t.id)) ? ', with the operator' : '';
          for (const t of o.transactions.filter((t) => operator.has(t.id)))
            this.journal.push(
              `end: ${o.side} ${o.symbol} KES ${o.amount} ${o.status}, ${t.type} with the operator: ${operator.get(t.id)}`,
            );
          this.outcomes.push(`${o.side} ${o.status}${refund}${withOperator}`);
        }

        // Units: opening + executed buys - executed sells, never negative, is what each portfolio shows.
        const expected = new Map(this.opening);
        for (const o of orders) {
          if (o.status !== 'EXECUTED' || o.quantity === null) continue;
          const key = `${o.customerId} ${o.symbol}`;
          const signed = o.side === 'BUY' ? units(o.quantity) : -units(o.quantity);
          expected.set(key, (expected.get(key) ?? 0n) + signed);
        }
        for (const [key, value] of expected)
          if (value < 0n) problems.push(`negative holding ${key}: ${unitsText(value)}`);
        for (let c = 0; c < this.customers.length; c++) {
          const shown = await this.portfolio(c);
          for (const symbol of this.symbols) {
            const want = expected.get(`${this.customers[c]!.id} ${symbol}`) ?? 0n;
            const got = shown.get(symbol) ?? 0n;
            if (want !== got)
              problems.push(
                `customer ${c} holds ${unitsText(got)} ${symbol}, its executed orders make ${unitsText(want)}`,
              );
          }
        }
        return problems;
      }

      summary() {
        return `${this.sequence.steps.length} steps, ${this.kills} SIGKILL(s), orders: ${counted(this.outcomes)} (${this.timing.join(', ')})`;
      }
    }

    it(
      `${RUNS} random sequences end with ledger check clean`,
      async () => {
        const started = Date.now();
        let ran = 0;
        const totals = { steps: 0, kills: 0, outcomes: [] as string[] };
        console.info(
          `ledger property: ${RUNS} sequences, seed ${SEED} (replay: LEDGER_PROPERTY_SEED=${SEED} LEDGER_PROPERTY_RUNS=${RUNS})`,
        );
        await fc.assert(
          fc.asyncProperty(sequenceArb, async (sequence) => {
            const run = new Run(sequence);
            ran++;
            const t0 = Date.now();
            try {
              await run.start();
              for (const step of sequence.steps) run.journal.push(await run.perform(step));
              const problems = await run.check();
              totals.steps += sequence.steps.length;
              totals.kills += run.kills;
              totals.outcomes.push(...run.outcomes);
              console.info(
                `sequence ${ran}/${RUNS}: ${run.summary()}, ${((Date.now() - t0) / 1000).toFixed(1)} s\n  ${run.journal.join('\n  ')}`,
              );
              if (problems.length > 0)
                throw new Error(
                  `sequence ${ran} (seed ${SEED}): ${problems.length} problem(s)\n${problems.join('\n')}\nsteps:\n  ${run.journal.join('\n  ')}`,
                );
            } catch (error) {
              console.error(
                `sequence ${ran} failed after:\n  ${run.journal.join('\n  ')}\nthe server's last output:\n${run.server?.output().slice(-4000)}`,
              );
              throw error;
            }
          }),
          { numRuns: RUNS, seed: SEED, endOnFailure: true },
        );
        console.info(
          `ledger property: ${ran} sequences ran (seed ${SEED}) in ${((Date.now() - started) / 1000).toFixed(0)} s: ` +
            `${totals.steps} steps, ${totals.kills} SIGKILLs, orders: ${counted(totals.outcomes)}; ledger check clean after each`,
        );
        expect(ran).toBe(RUNS);
      },
      RUNS * 120_000,
    );
  },
);

/** `3 BUY EXECUTED, 1 SELL EXECUTED`: how many of each. */
function counted(items: string[]): string {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(item, (counts.get(item) ?? 0) + 1);
  return [...counts].map(([item, n]) => `${n} ${item}`).join(', ') || 'none';
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
