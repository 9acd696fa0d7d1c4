import { adminInject } from '@partner-api/testkit/helpers.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeAudit } from '../../src/services/audit/log.ts';
import { HAS_CHROMIUM, SKIP_REASON } from './chromium.ts';
import { type ConsoleBrowser, checkPage, consoleBrowser, signIn } from './console-kit.ts';

if (!HAS_CHROMIUM) console.warn(SKIP_REASON);

/**
 * The Audit log page in Chromium (docs/console.md): accessible at 1280 and 390 px, screenshots
 * against the baselines, searched by typing an actor and pressing Enter, before/after opened.
 */
describe.skipIf(!HAS_CHROMIUM)('in headless Chromium: the console, audit log', () => {
  let b: ConsoleBrowser;

  beforeAll(async () => {
    b = await consoleBrowser();
    const org = await adminInject(b.t, 'POST', '/admin/organizations', { name: 'Amani Securities' });
    const id = (org.json() as { id: string }).id;
    await adminInject(b.t, 'PATCH', `/admin/organizations/${id}`, {
      description: '<script>alert(1)</script>',
    });
    await writeAudit(b.t.ctx.database.db, {
      actor: { type: 'operator', id: 'op-fixed', name: 'Amina Otieno' },
      method: 'POST',
      route: '/console/payments/:id/settle',
      targetId: 'txn-0001',
      body: { reason: 'The customer called', csrf: '[REDACTED]' },
      before: { state: 'OPERATOR', amount: '1500.00' },
      after: { state: 'SUCCESS', amount: '1500.00' },
      status: 303,
      ip: '198.51.100.7',
      requestId: null,
      at: new Date('2026-11-20T09:00:00Z'),
    });
  }, 120_000);
  afterAll(() => b?.close());

  it('shows the log accessibly at both widths and searches it by actor with Enter', async () => {
    const page = await signIn(b, b.operator);
    await page.goto(`${b.baseUrl}/console/audit`);
    await expect(page.locator('h1').textContent()).resolves.toBe('Audit log');
    expect(await page.locator('main').innerHTML()).not.toContain('<script>');
    await checkPage(page, 'audit');

    await page.focus('#a-actor');
    await page.keyboard.type('Amina Otieno');
    await page.keyboard.press('Enter');
    await page.waitForURL(/actor=Amina\+Otieno/);
    const rows = page.locator('tbody tr');
    expect(await rows.count()).toBe(1);
    await expect(rows.first().textContent()).resolves.toContain('/console/payments/:id/settle');
    await page.getByText('Show').click();
    await expect(page.locator('details pre').nth(1).textContent()).resolves.toContain('"state": "OPERATOR"');
    await expect(page.locator('details pre').nth(2).isVisible()).resolves.toBe(true);
    expect(b.outside).toEqual([]);
  }, 120_000);
});
