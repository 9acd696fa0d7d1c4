import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { one } from '../../src/db/query.ts';
import { setHoliday } from '../../src/services/market/holidays.ts';
import { recordPrice } from '../../src/services/market/prices.ts';
import { HAS_CHROMIUM, SKIP_REASON } from './chromium.ts';
import { type ConsoleBrowser, checkPage } from './console-kit.ts';
import { marketBrowser, signInAs } from './console-market-kit.ts';

if (!HAS_CHROMIUM) console.warn(SKIP_REASON);

/**
 * The Market page in Chromium (docs/console.md, "Market"): accessible and as its baselines at 1280
 * and 390 px; an operator confirms a held price by keyboard and sees it applied.
 */
describe.skipIf(!HAS_CHROMIUM)('in headless Chromium: the console Market page', () => {
  let b: ConsoleBrowser;

  beforeAll(async () => {
    ({ b } = await marketBrowser());
    const db = b.t.ctx.database.db;
    await db.transaction(async (tx) => {
      await recordPrice(tx, {
        symbol: 'ZLKT',
        price: '100.0000',
        asOf: new Date('2026-11-30T11:59:00Z'),
        source: 'IMPORT',
      });
      await recordPrice(tx, {
        symbol: 'ZMVC',
        price: '46.0000',
        asOf: new Date('2026-12-01T07:55:00Z'),
        source: 'FEED',
      });
    });
    const held = await db.transaction((tx) =>
      recordPrice(tx, {
        symbol: 'ZLKT',
        price: '130.0000',
        asOf: new Date('2026-12-01T07:00:00Z'),
        source: 'FEED',
      }),
    );
    expect(held?.status).toBe('HELD');
    await setHoliday(db, { market: 'XNAI', date: '2026-12-12', name: 'Jamhuri Day' });
  }, 120_000);
  afterAll(() => b?.close());

  it('shows the market accessibly at 1280 and 390 px; a held price confirmed by keyboard is applied', async () => {
    const page = await signInAs(b, 'operator');
    await page.goto(`${b.baseUrl}/console/market`);
    await expect(page.locator('h1').textContent()).resolves.toBe('Market');
    await checkPage(page, 'market');

    const confirm = page.getByRole('button', { name: 'Confirm ZLKT at 130.0000' });
    await confirm.focus();
    await page.keyboard.press('Enter');
    await page.waitForURL(`${b.baseUrl}/console/market?done=confirmed`);
    await expect(page.getByRole('status').textContent()).resolves.toBe(
      'The held price was confirmed: it is applied.',
    );
    await expect(page.locator('#s-held ~ .empty, #s-held ~ p.empty').count()).resolves.toBe(1);
    const row = page.getByRole('row').filter({ hasText: 'Lakeside Tea Ltd' });
    await expect(row.locator('td').nth(3).textContent()).resolves.toBe('130.0000 KES');
    await expect(row.locator('td').nth(4).textContent()).resolves.toBe('FEED');
    const stock = await one<{ price: string }>(
      b.t.ctx.database.db,
      sql`select price::text as price from stocks where symbol = 'ZLKT'`,
    );
    expect(stock?.price).toBe('130.0000');
    expect(b.outside).toEqual([]);
  }, 120_000);
});
