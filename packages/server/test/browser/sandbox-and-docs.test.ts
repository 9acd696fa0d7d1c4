import type { ServerProcess } from '@partner-api/testkit/process.ts';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrowserSandbox, HAS_CHROMIUM, SKIP_REASON, startBrowserSandbox } from './chromium.ts';
import { compareWithBaseline, MAX_DIFF_RATIO } from './screenshots.ts';

if (!HAS_CHROMIUM) console.warn(SKIP_REASON);

describe.skipIf(!HAS_CHROMIUM)('in headless Chromium: the sandbox handset and the reference', () => {
  let sandbox: BrowserSandbox;
  let server: ServerProcess;
  let context: BrowserContext;
  let outside: string[] = [];

  beforeAll(async () => {
    sandbox = await startBrowserSandbox({ SANDBOX_SETTLE_MS: '300' });
    ({ server, context, outside } = sandbox);
  }, 120_000);

  afterAll(() => sandbox?.close());

  async function openHandset(): Promise<Page> {
    const page = await context.newPage();
    await page.goto(`${server.baseUrl}/sandbox/ussd`);
    await page.waitForSelector('body[data-ready="true"]');
    return page;
  }

  const screenText = async (page: Page) => (await page.locator('#screen').textContent()) ?? '';

  /** Types a choice on the keypad and presses Send; resolves with the next screen. */
  async function choose(page: Page, keys: string): Promise<string> {
    const before = await screenText(page);
    for (const key of keys) await page.click(`.keypad button[data-key="${key}"]`);
    await page.click('#send');
    await page.waitForFunction(
      (previous) =>
        document.body.dataset.busy === 'false' && document.getElementById('screen')!.textContent !== previous,
      before,
    );
    const text = await screenText(page);
    expect(text.length).toBeLessThanOrEqual(182);
    return text;
  }

  const stateOf = (page: Page) => page.evaluate(() => document.body.dataset.state);

  it('buys a stock by keypad, from dialing to a settled payment', async () => {
    const page = await openHandset();
    await page.selectOption('#customer', { label: 'Amina Wanjiru · 254712345678' });
    await page.click('#send');
    await page.waitForSelector('body[data-state="HOME"]');
    expect(await screenText(page)).toContain('Demo Investments');

    expect(await choose(page, '1')).toMatch(/Select a stock/);
    const firstPage = await screenText(page);
    const secondPage = await choose(page, '7');
    expect(await stateOf(page)).toBe('STOCKS');
    expect(secondPage).not.toBe(firstPage);
    const stock = /^1\. (.+)$/m.exec(secondPage)![1]!;

    expect(await choose(page, '1')).toContain(stock.split(' ')[0]!);
    expect(await stateOf(page)).toBe('SELECT_STOCK');
    await choose(page, '1');
    expect(await stateOf(page)).toBe('BUY_AMOUNT');
    await choose(page, '1000');
    expect(await stateOf(page)).toBe('BUY_CONFIRM');
    const submitted = await choose(page, '1');
    expect(await stateOf(page)).toBe('BUY_SUBMITTED');
    expect(submitted).toMatch(/Request received/);

    const orderId = (await page.locator('#order-id').textContent()) ?? '';
    expect(submitted).toContain(orderId);
    await page.waitForSelector('#payment-status.SUCCESS', { timeout: 20_000 });
    expect(await page.locator('#payment-amount').textContent()).toMatch(/^KES 1000(\.00)? · MPESA$/);

    // The handset read what a partner polling GET /v1/payment/status/{orderId} reads.
    expect(outside).toEqual([]);
    await page.close();
  }, 90_000);

  it('with the webhooks preview off (the default), asks for no events: no 404, no console error', async () => {
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console: ${message.text()}`);
    });
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('response', (response) => {
      if (response.status() >= 400) problems.push(`${response.status()} ${response.url()}`);
    });
    const asked: string[] = [];
    page.on('request', (request) => asked.push(new URL(request.url()).pathname));
    await page.goto(`${server.baseUrl}/sandbox/ussd`);
    await page.waitForSelector('body[data-ready="true"]');
    // A move refreshes the events panel too when the preview is on.
    await page.click('#send');
    await page.waitForSelector('body[data-state="HOME"][data-busy="false"]');
    await page.waitForLoadState('networkidle');
    expect(asked).not.toContain('/sandbox/api/events');
    expect(problems).toEqual([]);
    expect(await page.locator('#events').isHidden()).toBe(true);
    await page.close();
  }, 60_000);

  it('at a phone width (390 px) /docs keeps every nav link and the client id on screen', async () => {
    const page = await context.newPage();
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${server.baseUrl}/docs`);
    await page.waitForSelector('#try-it-out[data-credential="demo"]');
    expect(await page.locator('#try-status').textContent()).toMatch(/client id org_[0-9a-f]{32}\b/);
    const layout = await page.evaluate(() => {
      const box = (element: Element) => {
        const { left, right } = element.getBoundingClientRect();
        return { left, right };
      };
      const status = document.getElementById('try-status')!;
      return {
        viewport: window.innerWidth,
        scrollWidth: document.documentElement.scrollWidth,
        links: [...document.querySelectorAll('header.site a')].map((a) => ({
          text: a.textContent,
          ...box(a),
        })),
        panel: box(document.getElementById('try-it-out')!),
        status: { ...box(status), overflow: status.scrollWidth - status.clientWidth },
      };
    });
    expect(layout.viewport).toBe(390);
    expect(layout.links.map((link) => link.text)).toEqual([
      'Partner API',
      'Reference',
      'Signing requests',
      'USSD handset',
      'openapi.json',
    ]);
    for (const link of layout.links) {
      expect(link.left, link.text!).toBeGreaterThanOrEqual(0);
      expect(link.right, link.text!).toBeLessThanOrEqual(layout.viewport);
    }
    // Nothing wider than the screen (no sideways scrolling), the status line inside its panel.
    expect(layout.scrollWidth).toBeLessThanOrEqual(layout.viewport);
    expect(layout.status.overflow).toBeLessThanOrEqual(0);
    expect(layout.status.left).toBeGreaterThanOrEqual(layout.panel.left);
    expect(layout.status.right).toBeLessThanOrEqual(layout.panel.right);
    expect(outside).toEqual([]);
    await page.close();
  }, 60_000);

  it('looks like its baseline: the handset on the HOME screen', async () => {
    const page = await openHandset();
    await page.selectOption('#customer', { label: 'Brian Otieno · 254722000111' });
    await page.click('#send');
    await page.waitForSelector('body[data-state="HOME"]');
    const result = compareWithBaseline('handset-home', await page.screenshot({ animations: 'disabled' }));
    expect(result.report ?? '', 'screenshot comparison').toBe('');
    expect(result.ratio).toBeLessThan(MAX_DIFF_RATIO);
    await page.close();
  }, 60_000);

  it('renders the reference from /v1/openapi.json with local assets only, like its baseline', async () => {
    const page = await context.newPage();
    await page.goto(`${server.baseUrl}/docs`);
    await page.waitForSelector('.opblock-summary-path');
    await page.waitForLoadState('networkidle');
    const paths = await page.locator('.opblock-summary-path').allTextContents();
    expect(paths.map((p) => p.replace(/\u200b/g, '').trim())).toEqual(
      expect.arrayContaining([
        '/oauth/token',
        '/customers/{id}',
        '/payment/status/{orderId}',
        '/ussd/process',
      ]),
    );
    expect(paths).toHaveLength(11);
    expect(await page.locator('.info .title').textContent()).toContain('Investment Platform Partner API');
    await page.waitForSelector('#try-it-out[data-credential="demo"]');
    // The server URL carries this run's port, the status line this run's demo client id: masked.
    const shot = await page.screenshot({
      animations: 'disabled',
      mask: [page.locator('.servers select'), page.locator('#try-status')],
    });
    const result = compareWithBaseline('docs-reference', shot);
    expect(result.report ?? '', 'screenshot comparison').toBe('');
    expect(outside).toEqual([]);
    await page.close();
  }, 60_000);

  it('serves the signing guide as a page', async () => {
    const page = await context.newPage();
    await page.goto(`${server.baseUrl}/docs/signing`);
    expect(await page.locator('h1').textContent()).toBe('Signing requests');
    expect(await page.locator('pre').count()).toBeGreaterThan(5);
    expect(outside).toEqual([]);
    await page.close();
  });
});
