import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { one } from '../../src/db/query.ts';
import { listHolidays } from '../../src/services/market/holidays.ts';
import { priceById, recordPrice } from '../../src/services/market/prices.ts';
import { upsertStocks } from '../../src/services/stocks/upsert.ts';
import { auditRow, carriesSecret, type FormBrowser, rowWith, signedIn } from './market-support.ts';

/** An instant in East Africa Time. */
const eat = (local: string) => new Date(`${local}+03:00`);
/** Tuesday 1 Dec 2026, 11:00 EAT: the NSE is in its session. */
const NOW = eat('2026-12-01T11:00');

/**
 * The console's Market page (docs/console.md, "Market"): instruments with their price's source,
 * age and freshness, held prices confirmed or rejected (applied or not, audited with before and
 * after), the session, and holidays set and removed; a viewer and a bad CSRF token change nothing.
 */
describeStores('the console Market page on %s', (store) => {
  let t: TestApp;
  let operator: FormBrowser & { id: string };
  let viewer: FormBrowser & { id: string };
  let n = 0;

  beforeAll(async () => {
    t = await buildTestApp(store, { MARKET_HOURS: 'enforced', PRICE_MAX_AGE_SECONDS: '900' });
    t.ctx.clock = () => NOW;
    operator = await signedIn(t, 'operator');
    viewer = await signedIn(t, 'viewer');
  });
  afterAll(() => t?.close());

  /** A fresh instrument priced 100 (an IMPORT) at Monday's close, and `held` feed prices beyond the band on Tuesday. */
  async function instrumentWithHeld(...held: string[]) {
    const symbol = `ZCM${++n}${Math.random().toString(36).slice(2, 6).toUpperCase()}`;
    const db = t.ctx.database.db;
    await upsertStocks(db, [{ symbol, name: 'Console Market Test Ltd', price: '100.0000', currency: 'KES' }]);
    await db.transaction((tx) =>
      recordPrice(tx, { symbol, price: '100.0000', asOf: eat('2026-11-30T14:59'), source: 'IMPORT' }),
    );
    const ids: string[] = [];
    for (const [i, price] of held.entries()) {
      const recorded = await db.transaction((tx) =>
        recordPrice(tx, { symbol, price, asOf: eat(`2026-12-01T10:0${i}`), source: 'FEED' }),
      );
      expect(recorded?.status).toBe('HELD');
      ids.push(recorded!.id);
    }
    return { symbol, ids };
  }
  const current = (symbol: string) =>
    one<{ price: string }>(
      t.ctx.database.db,
      sql`select price::text as price from stocks where symbol = ${symbol}`,
    );
  const statusOf = async (id: string) => (await priceById(t.ctx.database.db, id))?.status;

  it('shows instruments with source, age and the order gate, held prices with their decisions, the session', async () => {
    const { symbol, ids } = await instrumentWithHeld('130.0000');
    const res = await viewer.get('/console/market');
    expect(res.statusCode).toBe(200);
    const held = rowWith(res.body, symbol);
    expect(held).toContain('130.0000');
    expect(held).toContain('+30.0%');
    expect(res.body).toContain(`action="/console/market/prices/${ids[0]}/confirm"`);
    expect(res.body).toContain(`action="/console/market/prices/${ids[0]}/reject"`);
    // The instrument's row: its price is Monday's import, 20 hours old by 11:00 Tuesday, in session: stale.
    const rows = res.body.match(/<tr[^>]*>[\s\S]*?<\/tr>/g)!.filter((r) => r.includes(`>${symbol}<`));
    const instrument = rows.find((r) => r.includes('Console Market Test Ltd'))!;
    expect(instrument).toMatch(/^<tr class="attention">/);
    expect(instrument).toContain('>IMPORT<');
    expect(instrument).toContain('20 hours');
    expect(instrument).toContain('Stale: orders wait');
    expect(res.body).toContain('Nairobi Securities Exchange (XNAI)');
    expect(res.body).toMatch(/<span class="badge">Open<\/span>/);
    expect(res.body).toMatch(/\d+ held prices? to confirm or reject/);
    expect(carriesSecret(t, res.body)).toBe(false);
  });

  it('confirming a held price applies it and audits before and after; rejecting another leaves it unapplied', async () => {
    const { symbol, ids } = await instrumentWithHeld('130.0000', '131.0000');
    const [first, second] = ids as [string, string];
    const confirmed = await operator.post(`/console/market/prices/${first}/confirm`);
    expect([confirmed.statusCode, confirmed.headers.location]).toEqual([
      303,
      '/console/market?done=confirmed',
    ]);
    expect(await statusOf(first)).toBe('APPLIED');
    expect(await current(symbol)).toEqual({ price: '130.0000' });
    const audit = await auditRow(t, '/console/market/prices/:id/confirm', operator.id, first);
    expect(audit).toMatchObject({
      status: 303,
      before: {
        price: { id: first, status: 'HELD' },
        instrument: { symbol, price: '100.0000', source: 'IMPORT' },
      },
      after: {
        price: { id: first, status: 'APPLIED' },
        instrument: { symbol, price: '130.0000', source: 'FEED' },
      },
    });

    const rejected = await operator.post(`/console/market/prices/${second}/reject`);
    expect([rejected.statusCode, rejected.headers.location]).toEqual([303, '/console/market?done=rejected']);
    expect(await statusOf(second)).toBe('REJECTED');
    expect(await current(symbol)).toEqual({ price: '130.0000' });
    expect(await auditRow(t, '/console/market/prices/:id/reject', operator.id, second)).toMatchObject({
      before: { price: { status: 'HELD' } },
      after: { price: { status: 'REJECTED' }, instrument: { price: '130.0000' } },
    });

    const page = await operator.get('/console/market?done=confirmed');
    expect(page.body).toContain('The held price was confirmed: it is applied.');
    expect(page.body).not.toContain(first);
    const instrument = page.body.match(/<tr[^>]*>[\s\S]*?<\/tr>/g)!.find((r) => r.includes(`>${symbol}<`));
    expect(instrument).toContain('130.0000 KES');
    expect(instrument).toContain('>FEED<');
    // Decided already: 404, nothing changes.
    const again = await operator.post(`/console/market/prices/${first}/reject`);
    expect(again.statusCode).toBe(404);
    expect(await statusOf(first)).toBe('APPLIED');
  });

  it('a viewer and a bad CSRF token get 403 and change nothing', async () => {
    const { symbol, ids } = await instrumentWithHeld('130.0000');
    const id = ids[0]!;
    const byViewer = await viewer.post(`/console/market/prices/${id}/confirm`);
    expect(byViewer.statusCode).toBe(403);
    expect(byViewer.body).toContain('A viewer cannot change anything');
    const forged = await operator.post(`/console/market/prices/${id}/confirm`, { csrf: 'forged' });
    expect(forged.statusCode).toBe(403);
    expect(await statusOf(id)).toBe('HELD');
    expect(await current(symbol)).toEqual({ price: '100.0000' });

    const date = `2097-0${1 + Math.floor(Math.random() * 9)}-1${Math.floor(Math.random() * 9)}`;
    expect(
      (await viewer.post('/console/market/holidays', { market: 'XNAI', date, name: 'Refused' })).statusCode,
    ).toBe(403);
    expect((await listHolidays(t.ctx.database.db, 'XNAI')).some((h) => h.date === date)).toBe(false);
  });

  it('adds, renames and removes a holiday, audited; a bad date or market is a 400 and changes nothing', async () => {
    const date = `2096-0${1 + Math.floor(Math.random() * 9)}-1${Math.floor(Math.random() * 9)}`;
    const db = t.ctx.database.db;
    const holidayOn = async () => (await listHolidays(db, 'XNAI')).find((h) => h.date === date);
    const before = (await listHolidays(db, 'XNAI')).length;
    for (const bad of [
      { market: 'XNAI', date: '2096-02-30', name: 'No such day' },
      { market: 'XNAI', date: '30/01/2096', name: 'Wrong form' },
      { market: 'XLON', date, name: 'Not our market' },
      { market: 'XNAI', date, name: '   ' },
    ]) {
      const res = await operator.post('/console/market/holidays', bad);
      expect(res.statusCode, JSON.stringify(bad)).toBe(400);
    }
    expect((await listHolidays(db, 'XNAI')).length).toBe(before);

    const added = await operator.post('/console/market/holidays', {
      market: 'XNAI',
      date,
      name: 'Console Day',
    });
    expect([added.statusCode, added.headers.location]).toEqual([303, '/console/market?done=holiday-set']);
    expect(await holidayOn()).toEqual({ market: 'XNAI', date, name: 'Console Day' });
    expect(await auditRow(t, '/console/market/holidays', operator.id, `XNAI/${date}`)).toMatchObject({
      status: 303,
      before: null,
      after: { market: 'XNAI', date, name: 'Console Day' },
    });
    const page = await operator.get('/console/market?done=holiday-set');
    expect(rowWith(page.body, date)).toContain('Console Day');
    expect(page.body).toContain(`action="/console/market/holidays/XNAI/${date}/remove"`);

    await operator.post('/console/market/holidays', { market: 'XNAI', date, name: 'Console Day, renamed' });
    expect(await holidayOn()).toEqual({ market: 'XNAI', date, name: 'Console Day, renamed' });
    expect(await auditRow(t, '/console/market/holidays', operator.id, `XNAI/${date}`)).toMatchObject({
      before: { name: 'Console Day' },
      after: { name: 'Console Day, renamed' },
    });

    const removed = await operator.post(`/console/market/holidays/XNAI/${date}/remove`);
    expect([removed.statusCode, removed.headers.location]).toEqual([
      303,
      '/console/market?done=holiday-removed',
    ]);
    expect(await holidayOn()).toBeUndefined();
    expect(
      await auditRow(t, '/console/market/holidays/:market/:date/remove', operator.id, `XNAI/${date}`),
    ).toMatchObject({ before: { market: 'XNAI', date, name: 'Console Day, renamed' }, after: null });
    expect((await operator.post(`/console/market/holidays/XNAI/${date}/remove`)).statusCode).toBe(404);
    expect((await operator.post('/console/market/holidays/XNAI/2096-13-01/remove')).statusCode).toBe(400);
  });
});
