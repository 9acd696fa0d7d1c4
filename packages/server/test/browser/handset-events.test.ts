import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrowserSandbox, HAS_CHROMIUM, SKIP_REASON, startBrowserSandbox } from './chromium.ts';

if (!HAS_CHROMIUM) console.warn(SKIP_REASON);

describe.skipIf(!HAS_CHROMIUM)('in headless Chromium: the handset shows the events its moves caused', () => {
  let sandbox: BrowserSandbox;
  beforeAll(async () => {
    sandbox = await startBrowserSandbox({ SANDBOX_SETTLE_MS: '300', WEBHOOKS_PREVIEW: 'true' });
  }, 120_000);
  afterAll(() => sandbox?.close());

  async function press(page: Page, keys: string, state: string): Promise<void> {
    for (const key of keys) await page.click(`.keypad button[data-key="${key}"]`);
    await page.click('#send');
    await page.waitForSelector(`body[data-state="${state}"][data-busy="false"]`);
  }

  const listed = (page: Page) =>
    page.$$eval('#event-list li', (items) =>
      items.map((li) => ({ event: li.querySelector('code')?.textContent, id: li.dataset.eventId })),
    );

  it('lists the buy’s webhook events, none from before the page opened', async () => {
    // An event of the demo organization before the page opens: its token's AUTH.CREATED.
    const base = sandbox.server.baseUrl;
    const { clientId, clientSecret } = await (await fetch(`${base}/sandbox/api/demo-credential`)).json();
    const token = await fetch(`${base}/v1/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ clientId, clientSecret }),
    });
    expect(token.status).toBe(200);
    const before = (await (await fetch(`${base}/sandbox/api/events`)).json()).data;
    expect(before.map((e: { event: string }) => e.event)).toContain('AUTH.CREATED');

    const page = await sandbox.context.newPage();
    await page.goto(`${sandbox.server.baseUrl}/sandbox/ussd`);
    await page.waitForSelector('body[data-ready="true"]');
    await page.waitForSelector('#events:not([hidden])');
    expect(await listed(page)).toEqual([]);
    expect(await page.locator('#events-empty').isVisible()).toBe(true);

    await page.selectOption('#customer', { label: 'Amina Wanjiru · 254712345678' });
    await page.click('#send');
    await page.waitForSelector('body[data-state="HOME"]');
    await press(page, '1', 'STOCKS');
    await press(page, '1', 'SELECT_STOCK');
    await press(page, '1', 'BUY_AMOUNT');
    await press(page, '1000', 'BUY_CONFIRM');
    await press(page, '1', 'BUY_SUBMITTED');
    await page.waitForSelector('#event-list li code:text-is("REQUEST.CREATED")', { timeout: 20_000 });
    await page.waitForSelector('#payment-status.SUCCESS', { timeout: 20_000 });

    const events = await listed(page);
    expect(events.map((e) => e.event)).toContain('REQUEST.CREATED');
    const earlier = new Set(before.map((e: { eventId: string }) => e.eventId));
    expect(events.filter((e) => earlier.has(e.id))).toEqual([]);
    for (const e of events) expect(e.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(await page.locator('#events-empty').isVisible()).toBe(false);
    expect(sandbox.outside).toEqual([]);
    await page.close();
  }, 90_000);
});
