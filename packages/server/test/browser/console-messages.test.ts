import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedSms } from '../console/session-kit.ts';
import { HAS_CHROMIUM, SKIP_REASON } from './chromium.ts';
import { type ConsoleBrowser, checkPage, consoleBrowser, signIn } from './console-kit.ts';

if (!HAS_CHROMIUM) console.warn(SKIP_REASON);

/**
 * The Investor messages page in Chromium (docs/console.md): accessible at 1280 and 390 px, its
 * screenshots against the baselines, no full number on it, filtered by state with the keyboard.
 */
describe.skipIf(!HAS_CHROMIUM)('in headless Chromium: the console, investor messages', () => {
  let b: ConsoleBrowser;
  const at = (minutes: number) => new Date(Date.UTC(2026, 10, 20, 9, minutes));

  beforeAll(async () => {
    b = await consoleBrowser();
    await seedSms(b.t, 'Amani Securities', [
      {
        msisdn: '254711000101',
        state: 'DELIVERED',
        statusCode: 101,
        gatewayStatus: 'Success',
        createdAt: at(1),
        deliveredAt: at(2),
      },
      {
        msisdn: '254711000202',
        kind: 'PAYOUT',
        language: 'sw',
        state: 'SENT',
        statusCode: 101,
        gatewayStatus: 'Success',
        createdAt: at(3),
      },
      {
        msisdn: '254711000303',
        state: 'REFUSED',
        statusCode: 403,
        gatewayStatus: 'InvalidPhoneNumber',
        createdAt: at(4),
      },
      {
        msisdn: '254711000404',
        kind: 'REFUND',
        state: 'FAILED',
        attempts: 5,
        failureReason: 'DeliveryFailure',
        createdAt: at(5),
      },
      { msisdn: '254711000505', kind: 'TRADE_SELL', state: 'QUEUED', attempts: 0, createdAt: at(6) },
    ]);
    await seedSms(b.t, 'Baraka Invest', [
      {
        msisdn: '255722000606',
        kind: 'PAYMENT_FAILED',
        state: 'UNDELIVERED',
        statusCode: 101,
        gatewayStatus: 'Success',
        failureReason: 'AbsentSubscriber',
        createdAt: at(7),
      },
    ]);
  }, 120_000);
  afterAll(() => b?.close());

  it('shows the outbox accessibly at both widths and filters it by keyboard', async () => {
    const page = await signIn(b, b.viewer);
    await page.getByRole('link', { name: 'Investor messages' }).click();
    await page.waitForURL(`${b.baseUrl}/console/messages`);
    await expect(page.locator('h1').textContent()).resolves.toBe('Investor messages');
    const text = await page.locator('main').textContent();
    expect(text).toContain('…0303');
    expect(text).not.toContain('254711000303');
    expect(await page.locator('table').nth(1).locator('tbody tr').count()).toBe(6);
    expect(await page.locator('table').nth(1).locator('tbody tr.attention').count()).toBe(3);
    await checkPage(page, 'messages');

    // Pick "Refused" in the state select by keyboard and submit with Enter.
    await page.focus('#m-state');
    await page.selectOption('#m-state', 'REFUSED');
    await page.focus('#m-phone');
    await page.keyboard.type('0303');
    await page.keyboard.press('Enter');
    await page.waitForURL(/state=REFUSED/);
    const rows = page.locator('table').nth(1).locator('tbody tr');
    expect(await rows.count()).toBe(1);
    await expect(rows.first().textContent()).resolves.toContain('InvalidPhoneNumber');
    // The state's link in the counts filters as well.
    await page.getByRole('link', { name: 'Undelivered' }).click();
    await page.waitForURL(/state=UNDELIVERED/);
    expect(await page.locator('main').textContent()).toContain('No investor SMS match this filter.');
    expect(b.outside).toEqual([]);
  }, 120_000);
});
