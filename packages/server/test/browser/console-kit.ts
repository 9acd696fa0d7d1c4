import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { buildTestApp, type TestApp } from '@partner-api/testkit/app.ts';
import { adminInject } from '@partner-api/testkit/helpers.ts';
import { freePort } from '@partner-api/testkit/process.ts';
import type { BrowserContext, Page } from 'playwright-core';
import { expect } from 'vitest';
import { launchChromium, VIEWPORT } from './chromium.ts';
import { compareWithBaseline } from './screenshots.ts';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

type AxeViolation = { id: string; impact: string | null; help: string; nodes: unknown[] };

/** axe-core's serious and critical findings on the page as it stands. */
export async function axeProblems(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol, which the page's CSP does not govern (a <script> tag would be).
  await page.evaluate(AXE);
  const result = (await page.evaluate('axe.run(document, { resultTypes: ["violations"] })')) as {
    violations: AxeViolation[];
  };
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help}, ${v.nodes.length} node(s)`);
}

export type ConsoleBrowser = {
  t: TestApp;
  baseUrl: string;
  context: BrowserContext;
  /** Requests the browser tried outside our server (refused): must stay empty. */
  outside: string[];
  /** Credentials of an `operator` and a `viewer` made for the run. */
  operator: { name: string; credential: string };
  viewer: { name: string; credential: string };
  close(): Promise<void>;
};

async function addOperator(t: TestApp, role: 'operator' | 'viewer') {
  // Fixed names (each app has its own fresh store): the header's width, and so the screenshots, depend on them.
  const name = `console-${role}`;
  const answer = await adminInject(t, 'POST', '/admin/operators', { name, role });
  return { name, credential: (answer.json() as { credential: string }).credential };
}

/** A test app whose admin listener serves the console on a free port, two operators, and a Chromium that may reach it only. */
export async function consoleBrowser(
  env: Record<string, string> = {},
  options: Parameters<typeof buildTestApp>[2] = {},
): Promise<ConsoleBrowser> {
  const t = await buildTestApp('pglite', env, options);
  const port = await freePort();
  await t.admin.listen({ port, host: '127.0.0.1' });
  const baseUrl = `http://127.0.0.1:${port}`;
  const operator = await addOperator(t, 'operator');
  const viewer = await addOperator(t, 'viewer');
  const { context, outside } = await launchChromium(baseUrl);
  return {
    t,
    baseUrl,
    context,
    outside,
    operator,
    viewer,
    async close() {
      await context.close();
      await t.close();
    },
  };
}

/** Signs in through the form in a new page, and answers the page on the Overview. */
export async function signIn(b: ConsoleBrowser, who: { name: string; credential: string }): Promise<Page> {
  const page = await b.context.newPage();
  await page.goto(`${b.baseUrl}/console/sign-in`);
  await page.fill('#name', who.name);
  await page.fill('#credential', who.credential);
  await page.click('button[type=submit]');
  await page.waitForURL(`${b.baseUrl}/console`);
  return page;
}

/**
 * The page as it stands at 1280 and at 390 px: no serious axe finding at either width, no
 * horizontal scroll of the page at 390, and each full-page screenshot (with `.volatile` masked)
 * compared with baseline/console-<name>-<width>.png. Leaves the viewport at 1280.
 */
export async function checkPage(page: Page, name: string): Promise<void> {
  for (const width of [VIEWPORT.width, 390]) {
    await page.setViewportSize({ width, height: width === 390 ? 844 : VIEWPORT.height });
    expect(await axeProblems(page), `${name} at ${width}px`).toEqual([]);
    if (width === 390)
      expect(
        await page.evaluate(() => document.documentElement.scrollWidth),
        `${name} scrolls`,
      ).toBeLessThanOrEqual(390);
    const png = await page.screenshot({
      fullPage: true,
      mask: [page.locator('.volatile')],
      animations: 'disabled',
    });
    const compared = compareWithBaseline(`console-${name}-${width}`, png);
    expect(compared.report, `${name} at ${width}px`).toBeUndefined();
  }
  await page.setViewportSize(VIEWPORT);
}
