import { createId } from '@partner-api/contract';
import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { adminInject } from '@partner-api/testkit/helpers.ts';
import { createPartner } from '@partner-api/testkit/partner.ts';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { run } from '../../src/db/query.ts';
import { bookFor, checkBook } from '../../src/services/market/book.ts';
import { upsertStocks } from '../../src/services/stocks/upsert.ts';
import { insertCustomer, insertHolding } from '../ussd/support.ts';

const silent = { info() {}, warn() {}, error() {} };

describeStores("the operator's book on %s", (store) => {
  let t: TestApp;
  const symbol = `ZZBK${Math.random().toString(36).slice(2, 7).toUpperCase()}`;
  let stockId: string;

  beforeAll(async () => {
    t = await buildTestApp(store);
    t.ctx.clock = () => new Date('2026-12-02T12:00:00Z'); // Wednesday 15:00 EAT
    const [stock] = await upsertStocks(t.ctx.database.db, [
      { symbol, name: 'Book Test Ltd', price: '10.0000', currency: 'KES' },
    ]);
    stockId = stock!.id;
    const partner = await createPartner(t);
    const first = await insertCustomer(t, partner);
    const second = await insertCustomer(t, partner);
    await insertHolding(t, partner, first, stockId, '7.5');
    await insertHolding(t, partner, second, stockId, '2');
    // Today (2 December, EAT) the first customer bought 1.5 of those units.
    const orderId = createId();
    await run(
      t.ctx.database.db,
      sql`insert into orders (id, organization_id, customer_id, stock_id, side, status, amount, currency, quantity, price)
    values (${orderId}, ${partner.organizationId}, ${first}, ${stockId}, 'BUY', 'EXECUTED', 15, 'KES', 1.5, 10)`,
    );
    await run(
      t.ctx.database.db,
      sql`insert into executions (id, organization_id, order_id, stock_id, side, units, price, executed_at, settlement_date, status)
    values (${createId()}, ${partner.organizationId}, ${orderId}, ${stockId}, 'BUY', 1.5, 10,
      '2026-12-02T07:00:00Z', '2026-12-07', 'FILLED')`,
    );
  });
  afterAll(() => t?.close());

  const lineOf = async (date: string) =>
    (await bookFor(t.ctx.database.db, date)).find((l) => l.symbol === symbol);

  it('per day: bought, sold, claims as they were, the pooled position, and the whole shares to buy', async () => {
    const recorded = await adminInject(t, 'PUT', `/admin/book/positions/${symbol}/2026-12-01`, {
      units: '8',
    });
    expect([recorded.statusCode, recorded.json().data]).toEqual([
      200,
      { symbol, date: '2026-12-01', units: '8.0000' },
    ]);

    expect(await lineOf('2026-12-02')).toEqual({
      symbol,
      bought: '1.5000',
      sold: '0.0000',
      claims: '9.5000',
      pooled: '8.0000',
      pooledDate: '2026-12-01',
      toTrade: '2',
      shortfall: true,
    });
    // The day before: the claims before today's buy, and nothing traded.
    expect(await lineOf('2026-12-01')).toMatchObject({
      bought: '0.0000',
      claims: '8.0000',
      pooled: '8.0000',
      toTrade: '0',
      shortfall: false,
    });
  });

  it('a shortfall sets the gauge and /healthz detail; a position covering the claims clears it', async () => {
    await checkBook(t.ctx, silent);
    expect(t.ctx.bookCheck?.shortfall).toContain(symbol);
    const health = (await t.app.inject({ method: 'GET', url: '/healthz' })).json();
    expect(health.book).toMatchObject({ date: '2026-12-02', shortfall: expect.arrayContaining([symbol]) });
    expect(await t.ctx.metrics.registry.getSingleMetricAsString('book_shortfall_instruments')).toMatch(
      /book_shortfall_instruments [1-9]/,
    );

    await adminInject(t, 'PUT', `/admin/book/positions/${symbol}/2026-12-02`, { units: 10 });
    const book = await adminInject(t, 'GET', '/admin/book');
    const line = (book.json().data.lines as { symbol: string }[]).find((l) => l.symbol === symbol);
    expect(book.json().data.date).toBe('2026-12-02');
    expect(line).toMatchObject({ pooled: '10.0000', toTrade: '0', shortfall: false });
    await checkBook(t.ctx, silent);
    expect(t.ctx.bookCheck?.shortfall).not.toContain(symbol);
  });

  it('refuses an unknown instrument and bad units, changing nothing', async () => {
    const unknown = await adminInject(t, 'PUT', '/admin/book/positions/NOPE/2026-12-02', { units: '1' });
    expect([unknown.statusCode, unknown.json()]).toEqual([
      404,
      { error: 'Not found', message: 'Instrument not found' },
    ]);
    for (const units of ['-1', '1.23456', 'ten']) {
      const bad = await adminInject(t, 'PUT', `/admin/book/positions/${symbol}/2026-12-02`, { units });
      expect(bad.statusCode).toBe(400);
    }
    expect((await lineOf('2026-12-02'))?.pooled).toBe('10.0000');
  });
});
