import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { adminInject, runCli } from '@partner-api/testkit/helpers.ts';
import { freePort } from '@partner-api/testkit/process.ts';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { NSE } from '../../src/services/market/calendar.ts';
import {
  dailyBars,
  decideHeldPrice,
  instrumentBySymbol,
  type PriceSource,
  recordPrice,
} from '../../src/services/market/prices.ts';
import { upsertStocks } from '../../src/services/stocks/upsert.ts';

/** An instant in East Africa Time. */
const eat = (local: string) => new Date(`${local}+03:00`);

describeStores('daily open, high, low and close from applied prices on %s', (store) => {
  let t: TestApp;
  let symbol: string;
  let stockId: string;
  const price = (value: string, asOf: Date, source: PriceSource = 'FEED') =>
    t.ctx.database.db.transaction((tx) => recordPrice(tx, { symbol, price: value, asOf, source }));

  beforeAll(async () => {
    t = await buildTestApp(store);
    symbol = `ZD${Math.random().toString(36).slice(2, 8).toUpperCase()}`;
    await upsertStocks(t.ctx.database.db, [
      { symbol, name: 'Daily Bars Test Ltd', price: '100.0000', currency: 'KES' },
    ]);
    stockId = (await instrumentBySymbol(t.ctx.database.db, symbol))!.id;
    // Monday 29 Nov: the previous close, 100.
    await price('100.0000', eat('2032-11-29T14:59'), 'IMPORT');
    // Tuesday 30 Nov: 09:45 opens at 104, 109 is the high, 95 the low, the last (23:59 EAT) closes.
    await price('104.0000', eat('2032-11-30T09:45'));
    await price('109.0000', eat('2032-11-30T11:00'));
    await price('95.0000', eat('2032-11-30T12:00'));
    await price('101.5000', eat('2032-11-30T23:59'), 'EDIT');
    // Held beyond the band (and left held), and held then rejected: neither is a price it had.
    await price('130.0000', eat('2032-11-30T10:00'));
    const rejected = await price('80.0000', eat('2032-11-30T13:00'));
    expect(rejected?.status).toBe('HELD');
    await t.ctx.database.db.transaction((tx) => decideHeldPrice(tx, rejected!.id, 'REJECTED'));
    // 23:30 UTC on 30 Nov is 02:30 EAT on Wednesday 1 Dec: it opens the 1st, not closes the 30th.
    await price('102.0000', new Date('2032-11-30T23:30:00Z'));
    // A held price confirmed by the operator is applied: it counts.
    const confirmed = await price('89.0000', eat('2032-12-01T10:00'));
    expect(confirmed?.status).toBe('HELD');
    await t.ctx.database.db.transaction((tx) => decideHeldPrice(tx, confirmed!.id, 'APPLIED'));
    await price('99.0000', eat('2032-12-01T14:00'));
    // Friday 3 Dec only: Thursday has no price, so no bar.
    await price('98.0000', eat('2032-12-03T09:40'));
  });
  afterAll(() => t?.close());

  const TUESDAY = {
    date: '2032-11-30',
    open: '104.0000',
    high: '109.0000',
    low: '95.0000',
    close: '101.5000',
    count: 4,
  };
  const WEDNESDAY = {
    date: '2032-12-01',
    open: '102.0000',
    high: '102.0000',
    low: '89.0000',
    close: '99.0000',
    count: 3,
  };
  const FRIDAY = {
    date: '2032-12-03',
    open: '98.0000',
    high: '98.0000',
    low: '98.0000',
    close: '98.0000',
    count: 1,
  };

  it('one bar per EAT day with applied prices; held and rejected prices left out; 23:30 UTC is the next day', async () => {
    const bars = await dailyBars(t.ctx.database.db, stockId, '2032-11-30', '2032-12-03', NSE.timeZone);
    expect(bars).toEqual([TUESDAY, WEDNESDAY, FRIDAY]);
  });

  it('the range is of local dates, both included', async () => {
    const db = t.ctx.database.db;
    expect(await dailyBars(db, stockId, '2032-12-01', '2032-12-01', NSE.timeZone)).toEqual([WEDNESDAY]);
    expect(await dailyBars(db, stockId, '2032-11-29', '2032-11-29', NSE.timeZone)).toEqual([
      {
        date: '2032-11-29',
        open: '100.0000',
        high: '100.0000',
        low: '100.0000',
        close: '100.0000',
        count: 1,
      },
    ]);
    expect(await dailyBars(db, stockId, '2032-12-02', '2032-12-02', NSE.timeZone)).toEqual([]);
    // In UTC the 23:30 price is the 1st's: the day is the time zone's.
    const utc = await dailyBars(db, stockId, '2032-11-30', '2032-11-30', 'UTC');
    expect(utc.map((b) => [b.date, b.close, b.count])).toEqual([['2032-11-30', '102.0000', 5]]);
  });

  it('GET /admin/instruments/{symbol}/prices/daily answers the bars with the range it used', async () => {
    const res = await adminInject(
      t,
      'GET',
      `/admin/instruments/${symbol.toLowerCase()}/prices/daily?from=2032-11-30&to=2032-12-03`,
    );
    expect([res.statusCode, res.json()]).toEqual([
      200,
      {
        data: {
          symbol,
          market: 'XNAI',
          timeZone: 'Africa/Nairobi',
          from: '2032-11-30',
          to: '2032-12-03',
          bars: [TUESDAY, WEDNESDAY, FRIDAY],
        },
      },
    ]);
    // Without a range: the 30 days that end today in the market's time zone.
    t.ctx.clock = () => new Date('2032-12-03T21:30:00Z'); // Saturday 4 Dec, 00:30 EAT
    const recent = await adminInject(t, 'GET', `/admin/instruments/${symbol}/prices/daily`);
    expect(recent.json().data).toMatchObject({ from: '2032-11-05', to: '2032-12-04' });
    expect(recent.json().data.bars).toHaveLength(4);
    const fromOnlyTo = await adminInject(t, 'GET', `/admin/instruments/${symbol}/prices/daily?to=2032-11-30`);
    expect(fromOnlyTo.json().data).toMatchObject({ from: '2032-11-01', to: '2032-11-30' });
  });

  it('refuses bad dates and ranges with a 400 naming the field; an unknown instrument is a 404', async () => {
    const get = (query: string, sym = symbol) =>
      adminInject(t, 'GET', `/admin/instruments/${sym}/prices/daily?${query}`);
    const cases: [string, string, string][] = [
      ['from=2026-12-1', 'from', 'date must be YYYY-MM-DD'],
      ['from=2026-12-01T00:00:00Z', 'from', 'date must be YYYY-MM-DD'],
      ['to=2026-02-30', 'to', 'date must be a real date'],
      ['from=1969-12-31&to=1970-01-01', 'from', 'must be a date between 1970 and 9999'],
      ['to=9999-12-31', 'to', 'must be a date between 1970 and 9999'],
      ['from=2026-12-02&to=2026-12-01', 'from', 'must not be after to'],
      ['from=2025-01-01&to=2026-01-02', 'to', 'must be at most 366 days from from'],
    ];
    for (const [query, field, message] of cases) {
      const res = await get(query);
      expect([query, res.statusCode, res.json()]).toEqual([
        query,
        400,
        { error: 'Validation failed', details: [{ field, message }] },
      ]);
    }
    const unknownKey = await get('from=2026-12-01&limit=5');
    expect([unknownKey.statusCode, unknownKey.json().details[0].field]).toEqual([400, 'limit']);
    // A year and a day at most: 2024 is a leap year.
    expect((await get('from=2024-01-01&to=2024-12-31')).statusCode).toBe(200);
    const unknown = await get('from=2032-11-30&to=2032-12-03', 'NOPE');
    expect([unknown.statusCode, unknown.json()]).toEqual([
      404,
      { error: 'Not found', message: 'Instrument not found' },
    ]);
  });

  it('partner-api prices history --daily prints the bars (JSON with --json)', async () => {
    const port = await freePort();
    await t.admin.listen({ port, host: '127.0.0.1' });
    const env = { ADMIN_URL: `http://127.0.0.1:${port}`, ADMIN_TOKEN: t.ctx.secrets.adminToken };
    const json = await runCli(
      ['--json', 'prices', 'history', symbol, '--daily', '--from', '2032-11-30', '--to', '2032-12-03'],
      env,
    );
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout).bars).toEqual([TUESDAY, WEDNESDAY, FRIDAY]);
    const text = await runCli(
      ['prices', 'history', symbol, '--daily', '--from', '2032-12-03', '--to', '2032-12-03'],
      env,
    );
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toBe(
      `${symbol} 2032-12-03 to 2032-12-03 (Africa/Nairobi)\n` +
        '2032-12-03  open 98.0000  high 98.0000  low 98.0000  close 98.0000  1 price\n',
    );
    const bad = await runCli(
      ['prices', 'history', symbol, '--daily', '--from', '2032-12-04', '--to', '2032-12-03'],
      env,
    );
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('must not be after to');
  }, 60_000);
});
