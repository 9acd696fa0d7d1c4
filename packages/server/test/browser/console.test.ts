import { buildTestApp, type TestApp } from '@partner-api/testkit/app.ts';
import { adminInject } from '@partner-api/testkit/helpers.ts';
import { freePort } from '@partner-api/testkit/process.ts';
import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HAS_CHROMIUM, launchChromium, SKIP_REASON } from './chromium.ts';
import { axeProblems, checkPage } from './console-kit.ts';

if (!HAS_CHROMIUM) console.warn(SKIP_REASON);

/**
 * The console in headless Chromium on the admin listener (docs/console.md): signing in by keyboard,
 * the Overview at 1280 and 390 px, axe-core's check, the CSP enforced, signing out.
 */
describe.skipIf(!HAS_CHROMIUM)('in headless Chromium: the operator console', () => {
  let t: TestApp;
  let context: BrowserContext;
  let outside: string[];
  let baseUrl: string;
  let credential: string;
  // A fixed name: the header's width (and so the screenshot) depends on it; the store is fresh.
  const name = 'browser-operator';

  beforeAll(async () => {
    t = await buildTestApp('pglite');
    const port = await freePort();
    await t.admin.listen({ port, host: '127.0.0.1' });
    baseUrl = `http://127.0.0.1:${port}`;
    credential = (
      (await adminInject(t, 'POST', '/admin/operators', { name, role: 'operator' })).json() as {
        credential: string;
      }
    ).credential;
    ({ context, outside } = await launchChromium(baseUrl));
  }, 120_000);
  afterAll(async () => {
    await context?.close();
    await t?.close();
  });

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
    await page.keyboard.type(name);
    await page.keyboard.press('Tab');
    await page.keyboard.type(credential);
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
});
