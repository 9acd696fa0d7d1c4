import { type FakePrices, startFakePrices } from '@partner-api/fakes';
import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { adminInject } from '@partner-api/testkit/helpers.ts';
import { createPartner } from '@partner-api/testkit/partner.ts';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { one } from '../../src/db/query.ts';
import { priceFeedProvider } from '../../src/services/market/feed/index.ts';
import { type FeedWorker, startFeedWorker } from '../../src/services/market/feed-worker.ts';
import { upsertStocks } from '../../src/services/stocks/upsert.ts';
import { insertCustomer, ussdClient } from '../ussd/support.ts';

const silent = { info() {}, warn() {}, error() {} };
const eat = (local: string) => new Date(`${local}+03:00`);
const HOME = [{ key: '0', label: 'Home', nextState: 'HOME' }];

/**
 * What a customer sees when the feed holds a price beyond the band or goes down, with market hours
 * enforced: the screens, and that no order, and so no money, exists for a buy that cannot execute.
 */
describeStores(
  'the screens when the feed holds a price or is down (MARKET_HOURS=enforced) on %s',
  (store) => {
    let t: TestApp;
    let fake: FakePrices;
    let worker: FeedWorker;
    const run = Math.random().toString(36).slice(2, 6).toUpperCase();
    const JUMPS = `ZZFJ${run}`; // first in the feed: the one `jump` moves 25%
    const STEADY = `ZZFS${run}`;
    let fakeNow = eat('2026-12-02T10:00');

    beforeAll(async () => {
      fake = await startFakePrices({
        instruments: [
          { symbol: JUMPS, price: '100.0000' },
          { symbol: STEADY, price: '50.0000' },
        ],
        now: () => fakeNow,
      });
      t = await buildTestApp(store, {
        PRICE_FEED_URL: fake.jsonUrl,
        PRICE_MAX_AGE_SECONDS: '900',
        MARKET_HOURS: 'enforced',
      });
      t.ctx.clock = () => eat('2026-12-02T10:00');
      await upsertStocks(t.ctx.database.db, [
        { symbol: JUMPS, name: 'Feed Jump Ltd', price: '100.0000', currency: 'KES' },
        { symbol: STEADY, name: 'Feed Steady Ltd', price: '50.0000', currency: 'KES' },
      ]);
      for (const [symbol, price] of [
        [JUMPS, '100'],
        [STEADY, '50'],
      ])
        await adminInject(t, 'POST', '/admin/prices', { symbol, price, asOf: '2026-12-01T11:59:00Z' });
      worker = startFeedWorker(
        t.ctx,
        priceFeedProvider.createFeed(t.ctx.config.priceFeed!),
        3_600_000,
        silent,
      );
      t.ctx.feedWorker = worker;
      expect(await worker.pullNow()).toMatchObject({ ok: true });
    });
    afterAll(async () => {
      await worker?.stop();
      await t?.close();
      await fake?.close();
    });

    const at = (local: string) => {
      fakeNow = eat(local);
      t.ctx.clock = () => eat(local);
    };
    const customer = async () => {
      const partner = await createPartner(t);
      const customerId = await insertCustomer(t, partner);
      return { customerId, client: ussdClient(t, partner) };
    };
    const priceOf = async (symbol: string) =>
      (
        await one<{ price: string }>(
          t.ctx.database.db,
          sql`select price::text as price from stocks where symbol = ${symbol}`,
        )
      )?.price;
    const moneyOf = async (customerId: string) =>
      one<{ orders: number; transactions: number }>(
        t.ctx.database.db,
        sql`select (select count(*)::int from orders where customer_id = ${customerId}) as orders,
    (select count(*)::int from transactions t join orders o on o.id = t.order_id where o.customer_id = ${customerId}) as transactions`,
      );

    it('a price held for the band: screens keep the last applied price, refused once it is stale', async () => {
      const applied = await priceOf(JUMPS);
      at('2026-12-02T10:05');
      fake.queue('jump');
      expect(await worker.pullNow()).toMatchObject({ ok: true, held: 1 });
      expect(await priceOf(JUMPS)).toBe(applied);
      const { customerId, client } = await customer();

      // Fresh enough (as of 10:00): the confirmation shows the old price, not the held one.
      at('2026-12-02T10:06');
      const fresh = await client.walk(customerId, ['1', '8', JUMPS, '1', '1', '1000']);
      const shown = /^Buy \S+ for KES 1,000\.00\nPrice: KES ([0-9.]+)\nEst\. units: /.exec(fresh.menu.text);
      expect(Number(shown?.[1])).toBe(Number(applied));

      // The feed keeps sending the jumped price, held each time; at 10:16 the applied one is 16 minutes old.
      at('2026-12-02T10:16');
      fake.queue('jump');
      await worker.pullNow();
      const stale = await client.walk(customerId, ['1', '8', JUMPS, '1', '1', '1000']);
      expect(stale.menu).toMatchObject({
        text: `Buy ${JUMPS} for KES 1,000.00\nNo current price for ${JUMPS}. Try again later.`,
        options: HOME,
      });
      expect(stale.ussdText.length).toBeLessThanOrEqual(182);
      expect((await client.press(stale.sessionId, '1')).json().data.menu.text).toMatch(/^Invalid choice\./);
      expect(await moneyOf(customerId)).toEqual({ orders: 0, transactions: 0 });
    });

    it('a feed outage: /healthz says failing, and once the last price is stale orders are refused', async () => {
      at('2026-12-02T10:20');
      expect(await worker.pullNow()).toMatchObject({ ok: true });
      const { customerId, client } = await customer();
      for (const local of ['2026-12-02T10:25', '2026-12-02T10:30', '2026-12-02T10:36']) {
        at(local);
        fake.queue('outage');
        expect(await worker.pullNow()).toMatchObject({ ok: false, applied: 0 });
      }
      const health = (await t.app.inject({ method: 'GET', url: '/healthz' })).json();
      expect(health.prices.feed).toMatchObject({ state: 'failing', lastError: 'the feed answered 503' });

      const refused = await client.walk(customerId, ['1', '8', STEADY, '1', '1', '1000']);
      expect(refused.menu).toMatchObject({
        text: `Buy ${STEADY} for KES 1,000.00\nNo current price for ${STEADY}. Try again later.`,
        options: HOME,
      });
      await client.press(refused.sessionId, '1');
      expect(await moneyOf(customerId)).toEqual({ orders: 0, transactions: 0 });

      // The feed comes back: the next pull's prices are fresh and the screen is as always.
      at('2026-12-02T10:40');
      expect(await worker.pullNow()).toMatchObject({ ok: true });
      const back = await client.walk(customerId, ['1', '8', STEADY, '1', '1', '1000']);
      expect(back.menu.text).toMatch(
        new RegExp(`^Buy ${STEADY} for KES 1,000.00\\nPrice: KES [0-9.]+\\nEst\\. units: `),
      );
    });
  },
);
