import { adminInject } from '@partner-api/testkit/helpers.ts';
import { createPartner } from '@partner-api/testkit/partner.ts';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../src/db/query.ts';
import { insertCustomer } from '../ussd/support.ts';
import { HAS_CHROMIUM, SKIP_REASON } from './chromium.ts';
import { type ConsoleBrowser, checkPage } from './console-kit.ts';
import { marketBrowser, signInAs } from './console-market-kit.ts';

if (!HAS_CHROMIUM) console.warn(SKIP_REASON);

/**
 * The Book page in Chromium (docs/console.md, "Book"): one instrument short, one covered, a
 * ledger difference; accessible and as its baselines at 1280 and 390 px; another day chosen by keyboard.
 */
describe.skipIf(!HAS_CHROMIUM)('in headless Chromium: the console Book page', () => {
  let b: ConsoleBrowser;

  beforeAll(async () => {
    const made = await marketBrowser();
    b = made.b;
    const { stocks } = made;
    const db = b.t.ctx.database.db;
    const partner = await createPartner(b.t, { name: 'Book Browser Org' });
    const customerId = await insertCustomer(b.t, partner);
    // Holdings without units entries: claims the ledger check reports as differences.
    for (const [stock, units] of [
      [stocks.find((s) => s.symbol === 'ZLKT')!, '10.5'],
      [stocks.find((s) => s.symbol === 'ZMVC')!, '4'],
    ] as const)
      await run(
        db,
        sql`insert into holdings (organization_id, customer_id, stock_id, units)
  values (${partner.organizationId}, ${customerId}, ${stock.id}, ${units}::numeric)`,
      );
    for (const [symbol, units] of [
      ['ZLKT', '8'],
      ['ZMVC', '6'],
    ])
      expect(
        (await adminInject(b.t, 'PUT', `/admin/book/positions/${symbol}/2026-11-30`, { units })).statusCode,
      ).toBe(200);
  }, 120_000);
  afterAll(() => b?.close());

  it('shows the book and the ledger check accessibly at 1280 and 390 px; another day by keyboard', async () => {
    const page = await signInAs(b, 'viewer');
    await page.goto(`${b.baseUrl}/console/book`);
    await expect(page.locator('h1').textContent()).resolves.toBe('Book');
    const short = page.getByRole('row').filter({ hasText: 'ZLKT' }).first();
    await expect(short.getAttribute('class')).resolves.toBe('attention');
    await expect(short.locator('td').nth(6).textContent()).resolves.toBe('Buy 3');
    const covered = page.getByRole('row').filter({ hasText: 'ZMVC' }).first();
    await expect(covered.getAttribute('class')).resolves.toBe('ok');
    await expect(covered.locator('td').nth(6).textContent()).resolves.toBe('Sell 2');
    await expect(page.locator('#s-ledger ~ div tr.attention').count()).resolves.toBe(2);
    await checkPage(page, 'book');

    await page.getByLabel(/^Day/).focus();
    await page.keyboard.type('11292026');
    await page.keyboard.press('Enter');
    await page.waitForURL(`${b.baseUrl}/console/book?date=2026-11-29`);
    await expect(
      page.getByRole('row').filter({ hasText: 'ZLKT' }).first().locator('td').nth(4).textContent(),
    ).resolves.toBe('never recorded');
    expect(b.outside).toEqual([]);
  }, 120_000);
});
