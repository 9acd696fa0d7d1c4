import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HAS_CHROMIUM, SKIP_REASON } from './chromium.ts';
import { axeProblems, type ConsoleBrowser, checkPage, consoleBrowser, signIn } from './console-kit.ts';

if (!HAS_CHROMIUM) console.warn(SKIP_REASON);

/**
 * The console in headless Chromium on the admin listener (docs/console.md): signing in by keyboard,
 * the Overview at 1280 and 390 px, axe-core's check, the CSP enforced, signing out; a viewer refused,
 * a forged CSRF token refused, an idle session ended.
 */
describe.skipIf(!HAS_CHROMIUM)('in headless Chromium: the operator console', () => {
  let b: ConsoleBrowser;
  let baseUrl: string;
  let context: BrowserContext;
  let outside: string[];

  beforeAll(async () => {
    b = await consoleBrowser({ CONSOLE_IDLE_MINUTES: '30' });
    ({ baseUrl, context, outside } = b);
  }, 120_000);
  afterAll(() => b?.close());

  it('signs in by keyboard, shows the Overview accessibly at 1280 and 390 px, signs out', async () => {
    const page = await context.newPage();
    const violations: string[] = [];
    page.on('console', (message) => {
      if (/Content.Security.Policy/i.test(message.text())) violations.push(message.text());
    });
    await page.goto(`${baseUrl}/console`);
    expect(page.url()).toBe(`${baseUrl}/console/sign-in`);
    expect(await axeProblems(page)).toEqual([]);

    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('name');
    await page.keyboard.type(b.operator.name);
    await page.keyboard.press('Tab');
    await page.keyboard.type(b.operator.credential);
    await page.keyboard.press('Enter');
    await page.waitForURL(`${baseUrl}/console`);
    await expect(page.locator('h1').textContent()).resolves.toBe('Overview');
    expect(await page.locator('section h2').allTextContents()).toEqual([
      'Health',
      'Payments',
      'Market',
      'Backlogs',
      'Actions',
    ]);
    // The stylesheet applied: served by this server, allowed by the CSP.
    const badge = await page
      .locator('tr.ok .badge')
      .first()
      .evaluate((el) => getComputedStyle(el).fontWeight);
    expect(badge).toBe('600');
    // axe at 1280 and 390 px, no sideways scroll at 390, both screenshots against their baselines.
    await checkPage(page, 'overview');

    // The CSP is enforced: an inline script (what a content injection would add) does not run.
    await page.addScriptTag({ content: 'window.injected = true' }).catch(() => undefined);
    expect(await page.evaluate('window.injected === true')).toBe(false);
    expect(violations.length).toBeGreaterThan(0);

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${baseUrl}/console/sign-in`);
    await page.goto(`${baseUrl}/console`);
    expect(page.url()).toBe(`${baseUrl}/console/sign-in`);
    expect(outside).toEqual([]);
  }, 120_000);

  it('a viewer clicking a change gets the refusal page', async () => {
    const page = await signIn(b, b.viewer);
    await page.getByRole('button', { name: 'Reconcile stuck payments now' }).click();
    await expect(page.locator('h1').textContent()).resolves.toBe('Refused');
    await expect(page.getByRole('alert').textContent()).resolves.toContain('A viewer cannot change anything');
    expect(await axeProblems(page)).toEqual([]);
    await page.close();
  }, 60_000);

  it('a form whose CSRF token was tampered with is refused', async () => {
    const page = await signIn(b, b.operator);
    await page.evaluate(() => {
      for (const field of document.querySelectorAll<HTMLInputElement>('input[name=csrf]'))
        field.value = 'forged';
    });
    await page.getByRole('button', { name: 'Reconcile stuck payments now' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toContain('did not come from the console');
    await page.close();
  }, 60_000);

  it('a session idle past CONSOLE_IDLE_MINUTES sends the browser to sign in again, saying why', async () => {
    const page = await signIn(b, b.viewer);
    const start = Date.now();
    b.t.ctx.clock = () => new Date(start + 31 * 60_000);
    try {
      await page.getByRole('link', { name: 'Payments' }).click();
      await page.waitForURL(`${baseUrl}/console/sign-in?expired=1`);
      await expect(page.getByRole('alert').textContent()).resolves.toContain('sign in again');
    } finally {
      b.t.ctx.clock = () => new Date();
    }
    expect(outside).toEqual([]);
    await page.close();
  }, 60_000);
});
