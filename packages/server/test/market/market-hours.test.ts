import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { createPartner } from '@partner-api/testkit/partner.ts';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { one } from '../../src/db/query.ts';
import { recordPrice } from '../../src/services/market/prices.ts';
import { upsertStocks } from '../../src/services/stocks/upsert.ts';
import { MARKET_CLOSED } from '../../src/services/ussd/menus.ts';
import { insertCustomer, insertHolding, ussdClient } from '../ussd/support.ts';

const eat = (local: string) => new Date(`${local}+03:00`);
const HOME = [{ key: '0', label: 'Home', nextState: 'HOME' }];

describeStores('orders only in the session and at a fresh price (MARKET_HOURS=enforced) on %s', (store) => {
  let t: TestApp;
  // Instruments of this run alone: on the shared PostgreSQL database other suites re-import the
  // fixtures (their prices as of now) while this one sets their age.
  const run = Math.random().toString(36).slice(2, 6).toUpperCase();
  const BUY = `ZZHB${run}`;
  const SELL = `ZZHS${run}`;
  let sellId: string;
  beforeAll(async () => {
    t = await buildTestApp(store, { MARKET_HOURS: 'enforced', PRICE_MAX_AGE_SECONDS: '900' });
    const listed = await upsertStocks(t.ctx.database.db, [
      { symbol: BUY, name: 'Hours Buy Test Ltd', price: '25.0000', currency: 'KES' },
      { symbol: SELL, name: 'Hours Sell Test Ltd', price: '40.0000', currency: 'KES' },
    ]);
    sellId = listed.find((s) => s.symbol === SELL)!.id;
  });
  afterAll(() => t?.close());

  /** The fixtures priced as of `asOf` (the operator's edit). */
  const priceAt = async (asOf: Date) => {
    for (const [symbol, price] of [
      [BUY, '25.0000'],
      [SELL, '40.0000'],
    ] as const)
      await t.ctx.database.db.transaction((tx) => recordPrice(tx, { symbol, price, asOf, source: 'EDIT' }));
  };
  const ordersOf = async (customerId: string) =>
    (await one<{ n: number }>(
      t.ctx.database.db,
      sql`select count(*)::int as n from orders where customer_id = ${customerId}`,
    ))!.n;
  const customer = async () => {
    const partner = await createPartner(t);
    const customerId = await insertCustomer(t, partner);
    await insertHolding(t, partner, customerId, sellId, '10');
    return { partner, customerId, client: ussdClient(t, partner) };
  };

  it('outside the session a buy and a sell are refused at their confirmation, before any prompt', async () => {
    await priceAt(eat('2026-11-27T14:59'));
    t.ctx.clock = () => eat('2026-11-28T10:00'); // a Saturday
    const { customerId, client } = await customer();
    const buy = await client.walk(customerId, ['1', '8', BUY, '1', '1', '1000000']);
    expect(buy.currentState).toBe('BUY_CONFIRM');
    expect(buy.menu).toMatchObject({
      text: `Buy ${BUY} for KES 1,000,000.00\n${MARKET_CLOSED}`,
      options: HOME,
    });
    expect(buy.ussdText.length).toBeLessThanOrEqual(182);
    const pressed = (await client.press(buy.sessionId, '1')).json().data;
    expect(pressed.currentState).toBe('BUY_CONFIRM');
    expect(pressed.menu.text).toMatch(/^Invalid choice\./);

    const sell = await client.walk(customerId, ['1', '8', SELL, '1', '2', '3']);
    expect(sell.menu).toMatchObject({ text: `Sell 3 ${SELL} units\n${MARKET_CLOSED}`, options: HOME });
    await client.press(sell.sessionId, '1');
    expect(await ordersOf(customerId)).toBe(0);
    const held = await one<{ units: string }>(
      t.ctx.database.db,
      sql`select units::text as units from holdings where customer_id = ${customerId}`,
    );
    expect(held?.units).toBe('10.0000');
  });

  it('in the session at a stale price: refused, naming the instrument', async () => {
    await priceAt(eat('2026-12-02T09:40'));
    t.ctx.clock = () => eat('2026-12-02T10:00'); // Wednesday, 20 minutes after the price
    const { customerId, client } = await customer();
    const buy = await client.walk(customerId, ['1', '8', BUY, '1', '1', '500']);
    expect(buy.menu).toMatchObject({
      text: `Buy ${BUY} for KES 500.00\nNo current price for ${BUY}. Try again later.`,
      options: HOME,
    });
    await client.press(buy.sessionId, '1');
    expect(await ordersOf(customerId)).toBe(0);
  });

  it('in the session at a fresh price: the confirmation and the submission are as always', async () => {
    await priceAt(eat('2026-12-02T09:55'));
    t.ctx.clock = () => eat('2026-12-02T10:00');
    const { customerId, client } = await customer();
    const buy = await client.walk(customerId, ['1', '8', BUY, '1', '1', '500']);
    expect(buy.menu.text).toBe(`Buy ${BUY} for KES 500.00\nPrice: KES 25.00\nEst. units: 20.00`);
    const submitted = (await client.press(buy.sessionId, '1')).json().data;
    expect(submitted.currentState).toBe('BUY_SUBMITTED');
    expect(submitted.menu.text).toMatch(
      /^Request received\. Approve the payment prompt on your phone\. Ref c[a-z0-9]{24}$/,
    );
    expect(await ordersOf(customerId)).toBe(1);
  });
});
