import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { adminInject } from '@partner-api/testkit/helpers.ts';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { run } from '../../src/db/query.ts';
import { instantOf, NSE } from '../../src/services/market/calendar.ts';
import {
  HOLIDAYS_TTL_MS,
  marketHolidays,
  removeHoliday,
  setHoliday,
} from '../../src/services/market/holidays.ts';
import { tradingNow } from '../../src/services/market/trading.ts';

/** Market codes of this run alone (the PostgreSQL test database is shared), removed after. */
const markets: string[] = [];
const market = () => {
  const mic = `XT${Math.random().toString(36).slice(2, 8).toUpperCase()}`;
  markets.push(mic);
  return mic;
};

describeStores('one cached reader of a market’s holidays on %s', (store) => {
  let t: TestApp;
  let other: TestApp;
  const at = (ms: number) => new Date(Date.UTC(2030, 0, 7) + ms);
  const insertDirectly = (app: TestApp, mic: string, date: string) =>
    run(
      app.ctx.database.db,
      sql`insert into market_holidays (market, date, name) values (${mic}, ${date}, 'Written elsewhere')`,
    );

  beforeAll(async () => {
    t = await buildTestApp(store);
    other = await buildTestApp(store);
  });
  afterAll(async () => {
    for (const mic of markets)
      await run(t.ctx.database.db, sql`delete from market_holidays where market = ${mic}`);
    await t?.close();
    await other?.close();
  });

  it('reads at most once per TTL: a holiday written behind its back is seen after the TTL', async () => {
    const db = t.ctx.database.db;
    const mic = market();
    expect([...(await marketHolidays(db, mic, at(0)))]).toEqual([]);
    await insertDirectly(t, mic, '2030-01-08');
    expect([...(await marketHolidays(db, mic, at(HOLIDAYS_TTL_MS)))]).toEqual([]);
    expect([...(await marketHolidays(db, mic, at(HOLIDAYS_TTL_MS + 1)))]).toEqual(['2030-01-08']);
    // A clock set back (tests set it) reads again rather than trusting a read from its future.
    await insertDirectly(t, mic, '2030-01-09');
    expect([...(await marketHolidays(db, mic, at(0)))]).toEqual(['2030-01-08', '2030-01-09']);
  });

  it('a holiday set or removed through setHoliday/removeHoliday is seen at once', async () => {
    const db = t.ctx.database.db;
    const mic = market();
    expect((await marketHolidays(db, mic, at(0))).size).toBe(0);
    await setHoliday(db, { market: mic, date: '2030-01-08', name: 'Set Here' });
    expect([...(await marketHolidays(db, mic, at(1)))]).toEqual(['2030-01-08']);
    expect(await removeHoliday(db, mic, '2030-01-08')).toBe(true);
    expect([...(await marketHolidays(db, mic, at(2)))]).toEqual([]);
    // A removal that removed nothing changes nothing, and is harmless.
    expect(await removeHoliday(db, mic, '2030-01-08')).toBe(false);
    expect([...(await marketHolidays(db, mic, at(3)))]).toEqual([]);
  });

  it('inside a transaction, reads in it (via) and keeps the read for the store', async () => {
    const db = t.ctx.database.db;
    const mic = market();
    await insertDirectly(t, mic, '2030-01-15');
    const inTransaction = await db.transaction(async (tx) => [...(await marketHolidays(db, mic, at(0), tx))]);
    expect(inTransaction).toEqual(['2030-01-15']);
    await insertDirectly(t, mic, '2030-01-16');
    expect([...(await marketHolidays(db, mic, at(1)))]).toEqual(['2030-01-15']);
  });

  it('keeps one read per store and market', async () => {
    const mic = market();
    const another = market();
    await marketHolidays(t.ctx.database.db, mic, at(0));
    await marketHolidays(t.ctx.database.db, another, at(0));
    await insertDirectly(t, mic, '2030-01-10');
    await insertDirectly(t, another, '2030-01-11');
    // Each store has its own cache: a second app's first read is a read.
    const seenByOther = await marketHolidays(other.ctx.database.db, mic, at(1));
    expect([...seenByOther]).toEqual(store === 'postgres' ? ['2030-01-10'] : []);
    expect((await marketHolidays(t.ctx.database.db, mic, at(1))).size).toBe(0);
    expect((await marketHolidays(t.ctx.database.db, another, at(1))).size).toBe(0);
  });

  it('a failed read is not kept: the next call reads again', async () => {
    const db = t.ctx.database.db;
    const mic = market();
    await insertDirectly(t, mic, '2030-01-14');
    let down = true;
    // The same store, whose reads fail while `down`.
    const flaky = {
      execute: (query: Parameters<typeof db.execute>[0]) =>
        down ? Promise.reject(new Error('connection lost')) : db.execute(query),
    } as unknown as typeof db;
    await expect(marketHolidays(flaky, mic, at(0))).rejects.toThrow('connection lost');
    down = false;
    expect([...(await marketHolidays(flaky, mic, at(1)))]).toEqual(['2030-01-14']);
  });
});

describeStores('orders and the session route see a holiday the operator sets at once on %s', (store) => {
  let t: TestApp;
  // A weekday of its own, far from other suites' dates (the PostgreSQL test database is shared).
  const day = new Date(Date.UTC(2034, 0, 2 + 7 * Math.floor(Math.random() * 200))); // a Monday
  const date = day.toISOString().slice(0, 10);
  beforeAll(async () => {
    t = await buildTestApp(store, { MARKET_HOURS: 'enforced' });
    t.ctx.clock = () => instantOf(NSE.timeZone, date, '10:00');
  });
  afterAll(async () => {
    await adminInject(t, 'DELETE', `/admin/markets/XNAI/holidays/${date}`);
    await t?.close();
  });

  it('tradingNow and GET /admin/markets/XNAI/session close on the holiday and reopen on its removal', async () => {
    const session = async () => (await adminInject(t, 'GET', '/admin/markets/XNAI/session')).json().data;
    expect((await tradingNow(t.ctx))?.open).toBe(true);
    expect((await session()).state).toBe('OPEN');

    const set = await adminInject(t, 'PUT', `/admin/markets/XNAI/holidays/${date}`, { name: 'Cache Test' });
    expect(set.statusCode).toBe(200);
    expect((await tradingNow(t.ctx))?.open).toBe(false);
    expect(await session()).toMatchObject({ state: 'CLOSED', tradingDay: false });

    expect((await adminInject(t, 'DELETE', `/admin/markets/XNAI/holidays/${date}`)).statusCode).toBe(204);
    expect((await tradingNow(t.ctx))?.open).toBe(true);
    expect((await session()).state).toBe('OPEN');
  });
});
