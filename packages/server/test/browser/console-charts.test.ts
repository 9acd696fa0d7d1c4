import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedPayments } from '../console/charts-seed.ts';
import { HAS_CHROMIUM, SKIP_REASON } from './chromium.ts';
import { type ConsoleBrowser, checkPage, consoleBrowser, signIn } from './console-kit.ts';

if (!HAS_CHROMIUM) console.warn(SKIP_REASON);

/** A fixed "now": the charts' hour axis and figures are the same every run. */
const NOW = new Date('2030-01-15T12:30:00Z');
const MINUTE = 60_000;

/**
 * The Charts page in headless Chromium (docs/console.md, Charts): seeded payments through two
 * providers and a sampled request history at fixed times, axe-clean and screenshot-stable at 1280
 * and 390 px, each chart's figures opened by keyboard.
 */
describe.skipIf(!HAS_CHROMIUM)('in headless Chromium: the console Charts page', () => {
  let b: ConsoleBrowser;

  beforeAll(async () => {
    b = await consoleBrowser();
    b.t.ctx.clock = () => NOW;
    await seedPayments(b.t, NOW, [
      ...Array.from({ length: 18 }, (_, i) => ({
        adapter: 'mpesa',
        minutesAgo: 15 + i * 70,
        status: i % 6 === 5 ? ('FAILED' as const) : ('SUCCESS' as const),
        latencyMs: 300 + i * 20,
      })),
      { adapter: 'mpesa', minutesAgo: 3, status: 'PENDING' },
      ...Array.from({ length: 10 }, (_, i) => ({
        adapter: 'airtel',
        minutesAgo: 20 + i * 110,
        status: i % 3 === 0 ? ('FAILED' as const) : ('SUCCESS' as const),
        latencyMs: 800 + i * 50,
      })),
    ]);
    // Six hours of the tally, sampled every 30 minutes, with fixed latencies.
    const { requests, history } = b.t.ctx.metrics;
    const start = NOW.getTime() - 6 * 60 * MINUTE;
    for (let i = 0; i < 12; i++) {
      history.sample(new Date(start + i * 30 * MINUTE));
      for (let n = 0; n < 40 + i * 5; n++)
        requests.record('/v1/customers/:id', 'GET', 200, 0.004 + (n % 10) * 0.003);
      for (let n = 0; n < 20 + (i % 4) * 6; n++)
        requests.record('/v1/payments', 'POST', 201, 0.03 + (n % 5) * 0.04);
      for (let n = 0; n < 8; n++) requests.record('/v1/oauth/token', 'POST', 200, 0.06 + n * 0.02);
    }
    history.sample(new Date(start + 12 * 30 * MINUTE - MINUTE));
  }, 120_000);
  afterAll(async () => {
    await b?.close();
  });

  it('shows both charts accessibly at 1280 and 390 px; a viewer opens the figures by keyboard', async () => {
    const page = await signIn(b, b.viewer);
    await page.getByRole('link', { name: 'Charts' }).click();
    await page.waitForURL(`${b.baseUrl}/console/charts`);
    await expect(page.locator('h1').textContent()).resolves.toBe('Charts');
    expect(await page.locator('figure figcaption').allTextContents()).toEqual([
      'airtel: payments per hour and success rate',
      'mpesa: payments per hour and success rate',
      'Requests per minute, the 3 busiest routes',
      '95th percentile latency, the 3 busiest routes',
    ]);
    expect(await page.locator('svg.chart[role="img"]:visible').count()).toBe(4);
    await checkPage(page, 'charts');

    // The first chart's figures, by keyboard: focus its summary, open it, read the table.
    const summary = page.locator('figure summary').first();
    await summary.focus();
    await page.keyboard.press('Enter');
    const rows = page
      .getByRole('table', { name: 'Payments through airtel per hour (UTC)' })
      .locator('tbody tr');
    await expect(rows.first().isVisible()).resolves.toBe(true);
    expect(await rows.count()).toBe(10);
    expect(await rows.first().locator('td').allTextContents()).toEqual([
      '2030-01-14 19:00Z',
      '1',
      '0',
      '1',
      '0',
      '0.0%',
    ]);
    expect(b.outside).toEqual([]);
  });
});
