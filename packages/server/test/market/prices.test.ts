import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { adminInject } from '@partner-api/testkit/helpers.ts';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { one } from '../../src/db/query.ts';
import { isStale, listPrices, recordPrice } from '../../src/services/market/prices.ts';
import { upsertStocks } from '../../src/services/stocks/upsert.ts';

/** An instant in East Africa Time. */
const eat = (local: string) => new Date(`${local}+03:00`);

describeStores('prices as a series, the band and held prices on %s', (store) => {
  let t: TestApp;
  let n = 0;
  /** A fresh instrument priced 100 by the operator (an IMPORT, applied) as of Monday 30 Nov 2026. */
  const instrument = async () => {
    const symbol = `ZZP${++n}${Math.random().toString(36).slice(2, 6).toUpperCase()}`;
    await upsertStocks(t.ctx.database.db, [
      { symbol, name: 'Price Series Test Ltd', price: '100.0000', currency: 'KES' },
    ]);
    await t.ctx.database.db.transaction((tx) =>
      recordPrice(tx, { symbol, price: '100.0000', asOf: eat('2026-11-30T14:59'), source: 'IMPORT' }),
    );
    return symbol;
  };
  const feed = (symbol: string, price: string, asOf: Date) =>
    t.ctx.database.db.transaction((tx) => recordPrice(tx, { symbol, price, asOf, source: 'FEED' }));
  const current = (symbol: string) =>
    one<{ price: string; asOf: string }>(
      t.ctx.database.db,
      sql`select price::text as price, price_as_of::text as "asOf" from stocks where symbol = ${symbol}`,
    );

  beforeAll(async () => {
    t = await buildTestApp(store);
  });
  afterAll(() => t?.close());

  it('an import joins the series as the operator’s, applied', async () => {
    const symbol = await instrument();
    const series = await listPrices(t.ctx.database.db, symbol);
    expect(series.map((p) => [p.source, p.status, p.price])).toEqual([
      ['IMPORT', 'APPLIED', '100.0000'],
      ['IMPORT', 'APPLIED', '100.0000'],
    ]);
  });

  it('a feed price within 10% of the previous close is applied; beyond it is held, the price unchanged', async () => {
    const symbol = await instrument();
    const within = await feed(symbol, '109.9000', eat('2026-12-01T10:00'));
    expect(within).toMatchObject({ status: 'APPLIED', reference: '100.0000', source: 'FEED' });
    expect((await current(symbol))?.price).toBe('109.9000');
    // The same day: the band is still measured from the previous close (100), not from 109.90.
    const beyond = await feed(symbol, '111.0000', eat('2026-12-01T11:00'));
    expect(beyond).toMatchObject({ status: 'HELD', reference: '100.0000' });
    expect((await current(symbol))?.price).toBe('109.9000');
    const down = await feed(symbol, '89.0000', eat('2026-12-01T11:30'));
    expect(down?.status).toBe('HELD');
  });

  it('the operator sees held prices, confirms one (applied) and rejects another; a decided one is a 404', async () => {
    const symbol = await instrument();
    const first = await feed(symbol, '130.0000', eat('2026-12-01T10:00'));
    const second = await feed(symbol, '131.0000', eat('2026-12-01T10:05'));
    const held = await adminInject(t, 'GET', '/admin/prices/held');
    expect(held.statusCode).toBe(200);
    const ids = (held.json().data as { id: string }[]).map((p) => p.id);
    expect(ids).toEqual(expect.arrayContaining([first!.id, second!.id]));

    const confirmed = await adminInject(t, 'POST', `/admin/prices/${first!.id}/confirm`);
    expect([confirmed.statusCode, confirmed.json().data.status]).toEqual([200, 'APPLIED']);
    expect(await current(symbol)).toMatchObject({ price: '130.0000' });
    const rejected = await adminInject(t, 'POST', `/admin/prices/${second!.id}/reject`);
    expect([rejected.statusCode, rejected.json().data.status]).toEqual([200, 'REJECTED']);
    expect(await current(symbol)).toMatchObject({ price: '130.0000' });

    const again = await adminInject(t, 'POST', `/admin/prices/${first!.id}/reject`);
    expect([again.statusCode, again.json()]).toEqual([
      404,
      { error: 'Not found', message: 'No held price has this id' },
    ]);
    const left = (await adminInject(t, 'GET', '/admin/prices/held')).json().data as { id: string }[];
    expect(left.map((p) => p.id)).not.toContain(first!.id);
  });

  it('a feed price older than the instrument’s price is recorded but does not replace it', async () => {
    const symbol = await instrument();
    await feed(symbol, '101.0000', eat('2026-12-01T10:10'));
    await feed(symbol, '102.0000', eat('2026-12-01T10:00'));
    expect((await current(symbol))?.price).toBe('101.0000');
    const series = await listPrices(t.ctx.database.db, symbol, { from: eat('2026-12-01T00:00') });
    expect(series.map((p) => p.price)).toEqual(['102.0000', '101.0000']);
  });

  it('an operator edit through the admin API is applied at once, whatever the band; unknown symbol 404', async () => {
    const symbol = await instrument();
    const edit = await adminInject(t, 'POST', '/admin/prices', {
      symbol,
      price: '150',
      asOf: '2026-12-01T07:00:00Z',
    });
    expect([edit.statusCode, edit.json().data]).toEqual([
      201,
      expect.objectContaining({ source: 'EDIT', status: 'APPLIED', price: '150.0000' }),
    ]);
    expect((await current(symbol))?.price).toBe('150.0000');
    const unknown = await adminInject(t, 'POST', '/admin/prices', { symbol: 'NOPE', price: '1' });
    expect([unknown.statusCode, unknown.json()]).toEqual([
      404,
      { error: 'Not found', message: 'Instrument not found' },
    ]);
    const bad = await adminInject(t, 'POST', '/admin/prices', { symbol, price: '-1' });
    expect(bad.statusCode).toBe(400);
    expect((await current(symbol))?.price).toBe('150.0000');
  });

  it('a price is stale past the maximum age', () => {
    const asOf = eat('2026-12-01T10:00');
    expect(isStale(asOf, eat('2026-12-01T10:14'), 15 * 60_000)).toBe(false);
    expect(isStale(asOf, eat('2026-12-01T10:16'), 15 * 60_000)).toBe(true);
    expect(isStale(null, asOf, 15 * 60_000)).toBe(true);
  });
});

describeStores('market sessions and holidays through the admin API on %s', (store) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp(store);
  });
  afterAll(() => t?.close());

  it('reads the session at the injected clock, and a holiday the operator sets closes the day', async () => {
    t.ctx.clock = () => new Date('2026-12-02T07:00:00Z'); // Wednesday 10:00 EAT
    const open = await adminInject(t, 'GET', '/admin/markets/xnai/session');
    expect(open.json().data).toMatchObject({
      market: 'XNAI',
      state: 'OPEN',
      date: '2026-12-02',
      tradingDay: true,
    });

    const set = await adminInject(t, 'PUT', '/admin/markets/XNAI/holidays/2026-12-02', { name: 'Test Day' });
    expect([set.statusCode, set.json().data]).toEqual([
      200,
      { market: 'XNAI', date: '2026-12-02', name: 'Test Day' },
    ]);
    const closed = await adminInject(t, 'GET', '/admin/markets/XNAI/session');
    expect(closed.json().data).toMatchObject({
      state: 'CLOSED',
      tradingDay: false,
      nextOpen: '2026-12-03T06:31:00.000Z',
    });
    const listed = await adminInject(t, 'GET', '/admin/markets/XNAI/holidays');
    expect(listed.json().data).toContainEqual({ market: 'XNAI', date: '2026-12-02', name: 'Test Day' });

    expect((await adminInject(t, 'DELETE', '/admin/markets/XNAI/holidays/2026-12-02')).statusCode).toBe(204);
    expect((await adminInject(t, 'DELETE', '/admin/markets/XNAI/holidays/2026-12-02')).statusCode).toBe(404);
    expect((await adminInject(t, 'GET', '/admin/markets/XNAI/session')).json().data.state).toBe('OPEN');
  });

  it('refuses an unknown market, a malformed date and a missing name, changing nothing', async () => {
    const unknown = await adminInject(t, 'GET', '/admin/markets/XLON/session');
    expect(unknown.statusCode).toBe(400);
    expect(
      (await adminInject(t, 'PUT', '/admin/markets/XNAI/holidays/2026-13-40', { name: 'x' })).statusCode,
    ).toBe(400);
    expect((await adminInject(t, 'PUT', '/admin/markets/XNAI/holidays/2026-12-25', {})).statusCode).toBe(400);
    const listed = await adminInject(t, 'GET', '/admin/markets/XNAI/holidays');
    expect(listed.json().data).not.toContainEqual(expect.objectContaining({ date: '2026-12-25' }));
  });

  it('needs the admin token', async () => {
    expect((await adminInject(t, 'GET', '/admin/prices/held', undefined, null)).statusCode).toBe(401);
  });
});
