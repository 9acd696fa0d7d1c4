import { FAKE_PRICES_ENV, type FakePrices, startFakePrices } from '@partner-api/fakes';
import { POSTGRES_SKIP_REASON } from '@partner-api/testkit/app.ts';
import { adminInject } from '@partner-api/testkit/helpers.ts';
import { createPartner } from '@partner-api/testkit/partner.ts';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dateOf, one } from '../../src/db/query.ts';
import { Big } from '../../src/lib/money.ts';
import { priceFeedProvider } from '../../src/services/market/feed/index.ts';
import { type FeedWorker, startFeedWorker } from '../../src/services/market/feed-worker.ts';
import { checkLedger } from '../../src/services/market/ledger-check.ts';
import type { PriceRecord } from '../../src/services/market/prices.ts';
import { marketHoursEnforced } from '../../src/services/market/trading.ts';
import { upsertStocks } from '../../src/services/stocks/upsert.ts';
import { MARKET_CLOSED } from '../../src/services/ussd/menus.ts';
import {
  buyThroughUssd,
  type Production,
  requestStateOf,
  settledSide,
  startProduction,
  statusOf,
} from '../payments/mpesa/production.ts';
import { insertCustomer, orderRow, ussdClient, waitFor } from '../ussd/support.ts';

if (!process.env.DATABASE_URL) console.warn(`market rehearsal in production: ${POSTGRES_SKIP_REASON}`);

const silent = { info() {}, warn() {}, error() {} };
const DAY_MS = 86_400_000;
/** A local time in Nairobi (EAT, UTC+3, no daylight saving). */
const eat = (local: string) => new Date(`${local}+03:00`);
/** The date `days` after `date` (YYYY-MM-DD). */
const plusDays = (date: string, days: number) =>
  new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);

/**
 * The rehearsal's Wednesday: the first one at least a week after the real date. The catalog import
 * records its prices as of the database's real now(), and an applied price never replaces a newer
 * one (docs/market.md, "Order"): the simulated day must come after every real one the run writes.
 */
const WEDNESDAY = (() => {
  let day = plusDays(new Date(Date.now() + 3 * 3_600_000).toISOString().slice(0, 10), 7);
  while (new Date(`${day}T00:00:00Z`).getUTCDay() !== 3) day = plusDays(day, 1);
  return day;
})();
const TUESDAY = plusDays(WEDNESDAY, -1);
const THURSDAY = plusDays(WEDNESDAY, 1);
const AMOUNT = '1000';

/**
 * The acceptance rehearsal of the market: production as it goes live (APP_ENV=production, market
 * hours enforced by default, PostgreSQL), the fake price feed and the Daraja fake over HTTP, the
 * server's clock injected (AppContext.clock, which the fake feed's as-of times follow). A buy in the
 * session executes at the feed's price; after the close it is refused before any payment prompt; a
 * feed price beyond the ±10% band is held until the operator confirms it (docs/market.md,
 * docs/ussd-and-payments.md "Orders and market hours").
 */
describe.skipIf(!process.env.DATABASE_URL)(
  'market rehearsal in production: the feed, M-Pesa and the band',
  () => {
    let p: Production;
    let feed: FakePrices;
    let worker: FeedWorker;
    let now = eat(`${WEDNESDAY}T09:45`);
    // Instruments of this run alone. The first is the one the fake's `jump` scenario moves.
    const run = Math.random().toString(36).slice(2, 6).toUpperCase();
    const SYMBOL = `ZZRH${run}`;
    const OTHER = `ZZRO${run}`;
    let msisdnSeq = 0;
    /** Wednesday's last applied price (part a's pull): Thursday's previous close, the band's reference. */
    let wednesdayClose: string | undefined;

    const db = () => p.t.ctx.database.db;
    const instrument = async (symbol: string) => {
      const row = await one<{ price: string; priceAsOf: string }>(
        db(),
        sql`select price::text as price, price_as_of::text as "priceAsOf" from stocks where symbol = ${symbol}`,
      );
      return row && { price: row.price, priceAsOf: dateOf(row.priceAsOf) };
    };
    const executionOf = async (orderId: string) => {
      const row = await one<{
        units: string;
        price: string;
        priceAsOf: string;
        side: string;
        status: string;
        executedAt: string;
        settlementDate: string;
      }>(
        db(),
        sql`select units::text as units, price::text as price, price_as_of::text as "priceAsOf", side, status,
  executed_at::text as "executedAt", settlement_date as "settlementDate"
  from executions where order_id = ${orderId}`,
      );
      return row && { ...row, priceAsOf: dateOf(row.priceAsOf), executedAt: dateOf(row.executedAt) };
    };
    /** The units a buy of AMOUNT gets at `price`: rounded down to 4 decimals (never more than paid for). */
    const unitsAt = (price: string) => new Big(AMOUNT).div(price).round(4, Big.roundDown).toFixed(4);
    const newCustomer = async () => {
      const partner = await createPartner(p.t);
      const msisdn = `2547130${String(msisdnSeq++).padStart(5, '0')}`;
      return { partner, msisdn, customerId: await insertCustomer(p.t, partner, { msisdn }) };
    };
    /** A buy of AMOUNT through USSD whose STK prompt the customer approves (the fake's callback): the order. */
    const paidBuy = async () => {
      const { partner, customerId } = await newCustomer();
      const prompts = p.fake.processed('stk-push');
      const orderId = await buyThroughUssd(p.t, partner, customerId, AMOUNT, SYMBOL);
      expect(await settledSide(p.t, partner, orderId, 'payment')).toMatchObject({
        status: 'SUCCESS',
        amount: '1000.00',
      });
      expect(p.fake.processed('stk-push') - prompts).toBe(1);
      const order = await waitFor(
        async () => {
          const o = await orderRow(p.t, orderId);
          return o?.status === 'EXECUTED' ? o : undefined;
        },
        10_000,
        `order ${orderId} to execute`,
      );
      // The provider request is finished too (the callback confirmed by STK Query): nothing more goes out.
      const payment = (await statusOf(p.t, partner, orderId)).payment!;
      await waitFor(
        async () => ((await requestStateOf(p.t, payment.id))?.state === 'DONE' ? true : undefined),
        10_000,
        `the collection of ${orderId} to be done`,
      );
      return { orderId, order, customerId };
    };
    const pull = async () => {
      const report = await worker.pullNow();
      expect(report.ok, 'the feed pull').toBe(true);
      return report;
    };

    beforeAll(async () => {
      feed = await startFakePrices({
        instruments: [
          { symbol: SYMBOL, price: '20.0000' },
          { symbol: OTHER, price: '50.0000' },
        ],
        now: () => now,
      });
      // MARKET_HOURS unset (the test apps' default is always-open): production's own default, enforced.
      p = await startProduction({ ...FAKE_PRICES_ENV(feed), MARKET_HOURS: '', PRICE_MAX_AGE_SECONDS: '900' });
      expect(p.t.ctx.config.APP_ENV).toBe('production');
      expect(p.t.ctx.config.MARKET_HOURS).toBeUndefined();
      expect(marketHoursEnforced(p.t.ctx.config)).toBe(true);
      p.t.ctx.clock = () => now;
      await upsertStocks(db(), [
        { symbol: SYMBOL, name: 'Rehearsal Holdings', price: '20.0000', currency: 'KES' },
        { symbol: OTHER, name: 'Rehearsal Other', price: '50.0000', currency: 'KES' },
      ]);
      // Tuesday's close: the band's reference on Wednesday.
      for (const [symbol, price] of [
        [SYMBOL, '20.0000'],
        [OTHER, '50.0000'],
      ] as const) {
        const res = await adminInject(p.t, 'POST', '/admin/prices', {
          symbol,
          price,
          asOf: eat(`${TUESDAY}T14:59`).toISOString(),
        });
        expect(res.statusCode, res.body).toBe(201);
      }
      // Pulled on demand (an hour's interval: only its first pull, at start, comes by itself).
      worker = startFeedWorker(
        p.t.ctx,
        priceFeedProvider.createFeed(p.t.ctx.config.priceFeed!),
        3_600_000,
        silent,
      );
      p.t.ctx.feedWorker = worker;
      // Its first pull, at start (pre-open): done before the rehearsal's own pulls begin.
      expect(await worker.pullNow()).toMatchObject({ ok: true, applied: 2 });
    }, 60_000);
    afterAll(async () => {
      await worker?.stop();
      await p?.close();
      await feed?.close();
    });

    it('(a) Wednesday 10:00 EAT: a buy approved on M-Pesa executes at the feed price', async () => {
      now = eat(`${WEDNESDAY}T10:00`);
      expect(await pull()).toMatchObject({ applied: 2, held: 0 });
      const fed = feed.prices()[SYMBOL]!;
      wednesdayClose = fed;
      expect(feed.requests.length).toBeGreaterThan(0);
      expect(await instrument(SYMBOL)).toEqual({ price: fed, priceAsOf: now });

      const { orderId, order } = await paidBuy();
      const units = unitsAt(fed);
      expect(order).toMatchObject({ side: 'BUY', amount: '1000.00', price: fed, quantity: units });
      // Executed at the rehearsal's 10:00 (the market's clock), settling T+3 trading days later.
      const execution = await executionOf(orderId);
      expect(execution).toMatchObject({ side: 'BUY', status: 'FILLED', units, price: fed, priceAsOf: now });
      expect(execution?.executedAt.getTime()).toBeGreaterThanOrEqual(now.getTime());
      expect(execution?.executedAt.getTime()).toBeLessThan(now.getTime() + 60_000);
      expect(execution?.settlementDate).toBe(plusDays(WEDNESDAY, 5)); // Thursday, Friday, Monday
      expect(await checkLedger(db())).toEqual([]);
    }, 60_000);

    it('(b) Wednesday 15:05 EAT: the buy is refused on its confirmation; no order, no prompt', async () => {
      now = eat(`${WEDNESDAY}T15:05`);
      const { partner, customerId } = await newCustomer();
      const requestsBefore = p.fake.requests.length;
      const client = ussdClient(p.t, partner);
      const confirm = await client.walk(customerId, ['1', '8', SYMBOL, '1', '1', AMOUNT]);
      expect(confirm.currentState).toBe('BUY_CONFIRM');
      // docs/ussd-and-payments.md, "Orders and market hours", byte for byte (menus.ts MARKET_CLOSED).
      expect(MARKET_CLOSED).toBe('The market is closed. Orders are taken Mon-Fri 09:31-15:00 EAT.');
      expect(confirm.menu).toEqual({
        state: 'BUY_CONFIRM',
        text: `Buy ${SYMBOL} for KES 1,000.00\nThe market is closed. Orders are taken Mon-Fri 09:31-15:00 EAT.`,
        options: [{ key: '0', label: 'Home', nextState: 'HOME' }],
        isEndState: false,
      });
      // On the handset: the menu text, a blank line, the options (docs/partner-api-spec.md, ussdText).
      expect(confirm.ussdText).toBe(
        `Buy ${SYMBOL} for KES 1,000.00\nThe market is closed. Orders are taken Mon-Fri 09:31-15:00 EAT.\n\n0. Home`,
      );
      expect(confirm.ussdText.length).toBeLessThanOrEqual(182);
      // Pressing 1 (Confirm, which is not offered) is an invalid choice on the same screen.
      const pressed = (await client.press(confirm.sessionId, '1')).json().data;
      expect(pressed.currentState).toBe('BUY_CONFIRM');
      expect(pressed.menu.text).toMatch(/^Invalid choice\./);

      const orders = await one<{ n: number }>(
        db(),
        sql`select count(*)::int as n from orders where customer_id = ${customerId}`,
      );
      expect(orders?.n).toBe(0);
      const transactions = await one<{ n: number }>(
        db(),
        sql`select count(*)::int as n from transactions t join orders o on o.id = t.order_id
  where o.customer_id = ${customerId}`,
      );
      expect(transactions?.n).toBe(0);
      // Nothing reached the Daraja fake: no token, no prompt, no query.
      expect(p.fake.requests.slice(requestsBefore)).toEqual([]);
    }, 30_000);

    it('(c) Thursday: a price beyond the band is held; buys use the old one until the operator confirms it', async () => {
      now = eat(`${THURSDAY}T10:00`);
      expect(await pull()).toMatchObject({ applied: 2, held: 0 });
      const before = await instrument(SYMBOL);
      expect(before).toEqual({ price: feed.prices()[SYMBOL], priceAsOf: now });

      now = eat(`${THURSDAY}T10:05`);
      const jumpedAt = now;
      feed.queue('jump');
      const report = await pull();
      expect(report).toMatchObject({ held: 1, applied: 1 });
      const jumped = feed.prices()[SYMBOL]!;
      // The fake's jump: 25% up, to the ten-thousandth.
      expect(jumped).toBe(new Big(before!.price).times('1.25').round(4, Big.roundDown).toFixed(4));
      // Held, not applied: the instrument keeps its price; the other instrument moved as usual.
      expect(await instrument(SYMBOL)).toEqual(before);
      expect(await instrument(OTHER)).toEqual({ price: feed.prices()[OTHER], priceAsOf: jumpedAt });
      const held = (await adminInject(p.t, 'GET', '/admin/prices/held')).json().data as PriceRecord[];
      const mine = held.filter((h) => h.symbol === SYMBOL);
      expect(mine).toMatchObject([
        {
          price: jumped,
          source: 'FEED',
          status: 'HELD',
          reference: wednesdayClose,
          asOf: jumpedAt.toISOString(),
        },
      ]);

      // A buy now, in the session at a fresh price: it executes at the price still applied.
      now = eat(`${THURSDAY}T10:06`);
      const old = await paidBuy();
      expect(await executionOf(old.orderId)).toMatchObject({
        price: before!.price,
        priceAsOf: before!.priceAsOf,
        units: unitsAt(before!.price),
      });

      // The operator confirms it (admin API, admin token): it becomes the price.
      now = eat(`${THURSDAY}T10:07`);
      const confirmed = await adminInject(p.t, 'POST', `/admin/prices/${mine[0]!.id}/confirm`);
      expect(confirmed.statusCode, confirmed.body).toBe(200);
      expect(confirmed.json().data).toMatchObject({ id: mine[0]!.id, status: 'APPLIED', price: jumped });
      expect(await instrument(SYMBOL)).toEqual({ price: jumped, priceAsOf: jumpedAt });
      const stillHeld = (await adminInject(p.t, 'GET', '/admin/prices/held')).json().data as PriceRecord[];
      expect(stillHeld.filter((h) => h.symbol === SYMBOL)).toEqual([]);

      now = eat(`${THURSDAY}T10:08`);
      const fresh = await paidBuy();
      expect(await executionOf(fresh.orderId)).toMatchObject({
        price: jumped,
        priceAsOf: jumpedAt,
        units: unitsAt(jumped),
      });
      expect(await checkLedger(db())).toEqual([]);
    }, 90_000);
  },
);
