import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { adminInject } from '@partner-api/testkit/helpers.ts';
import { createPartner } from '@partner-api/testkit/partner.ts';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { run } from '../../src/db/query.ts';
import type { BookLine } from '../../src/services/market/book.ts';
import { upsertStocks } from '../../src/services/stocks/upsert.ts';
import { insertCustomer } from '../ussd/support.ts';
import { carriesSecret, type FormBrowser, rowWith, signedIn } from './market-support.ts';

/** Tuesday 1 Dec 2026, 11:00 EAT. */
const NOW = new Date('2026-12-01T11:00:00+03:00');
const DAY = '2026-12-01';

/**
 * The console's Book page (docs/console.md, "Book"): a day's claims, pooled position, difference
 * and what to buy or sell, the same figures as GET /admin/book; the ledger check's differences, red.
 */
describeStores('the console Book page on %s', (store) => {
  let t: TestApp;
  let viewer: FormBrowser;
  let symbol: string;
  let customerId: string;
  let stockId: string;

  beforeAll(async () => {
    t = await buildTestApp(store);
    t.ctx.clock = () => NOW;
    viewer = await signedIn(t, 'viewer');
    // A customer holding 10.5 units with no units entry behind them (a ledger difference), and a
    // pooled position of 8: 2.5 short, 3 whole shares to buy.
    symbol = `ZCB${Math.random().toString(36).slice(2, 7).toUpperCase()}`;
    const [stock] = await upsertStocks(t.ctx.database.db, [
      { symbol, name: 'Console Book Test Ltd', price: '50.0000', currency: 'KES' },
    ]);
    stockId = stock!.id;
    const partner = await createPartner(t);
    customerId = await insertCustomer(t, partner);
    await run(
      t.ctx.database.db,
      sql`insert into holdings (organization_id, customer_id, stock_id, units)
  values (${partner.organizationId}, ${customerId}, ${stockId}, 10.5)`,
    );
    const pooled = await adminInject(t, 'PUT', `/admin/book/positions/${symbol}/${DAY}`, { units: '8' });
    expect(pooled.statusCode).toBe(200);
  });
  afterAll(async () => {
    // Leave the shared store balanced for the other suites' checks.
    if (stockId) {
      await run(t.ctx.database.db, sql`delete from holdings where stock_id = ${stockId}`);
      await run(t.ctx.database.db, sql`delete from pooled_positions where stock_id = ${stockId}`);
    }
    await t?.close();
  });

  it('shows the day’s claims, pooled position, difference and trade as GET /admin/book does', async () => {
    const api = await adminInject(t, 'GET', `/admin/book?date=${DAY}`);
    const line = (api.json().data.lines as BookLine[]).find((l) => l.symbol === symbol)!;
    expect(line).toMatchObject({ claims: '10.5000', pooled: '8.0000', toTrade: '3', shortfall: true });

    for (const url of ['/console/book', `/console/book?date=${DAY}`]) {
      const res = await viewer.get(url);
      expect(res.statusCode, url).toBe(200);
      expect(res.body).toContain(`value="${DAY}"`);
      const row = rowWith(res.body, symbol)!;
      expect(row).toMatch(/^<tr class="attention">/);
      for (const figure of [
        line.bought,
        line.sold,
        line.claims,
        `${line.pooled} (recorded for ${line.pooledDate})`,
      ])
        expect(row, figure).toContain(`>${figure}<`);
      expect(row).toContain('>2.5000<');
      expect(row).toContain('>Buy 3<');
      expect(row).toContain('Short: claims exceed the position');
    }
    // Before the position was recorded the day has no pooled line, and claims are the same.
    const earlier = await viewer.get('/console/book?date=2026-11-30');
    expect(rowWith(earlier.body, symbol)).toContain('never recorded');
  });

  it('lists the ledger check’s differences, each red, as GET /admin/ledger/check finds them', async () => {
    const api = await adminInject(t, 'GET', '/admin/ledger/check');
    const differences = api.json().data.differences as { kind: string; customerId?: string }[];
    expect(differences).toContainEqual(
      expect.objectContaining({ kind: 'HOLDING', customerId, symbol, holding: '10.5000', ledger: '0' }),
    );
    const res = await viewer.get('/console/book');
    const row = res.body.match(/<tr[^>]*>[\s\S]*?<\/tr>/g)!.find((r) => r.includes(customerId))!;
    expect(row).toMatch(/^<tr class="attention">/);
    expect(row).toContain('Holding differs from its units entries');
    expect(row).toContain('holding 10.5000, entries 0');
    expect(res.body).toMatch(/\d+ ledger differences?/);
    expect(carriesSecret(t, res.body)).toBe(false);
  });

  it('a bad day is a 400', async () => {
    for (const date of ['2026-02-30', 'yesterday']) {
      const res = await viewer.get(`/console/book?date=${date}`);
      expect(res.statusCode, date).toBe(400);
      expect(res.body).toContain('The day must be a real date');
    }
  });
});
