import { adminInject } from '@partner-api/testkit/helpers.ts';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { one } from '../../src/db/query.ts';
import { type SeededPartner, seedPartner } from '../console/partners-seed.ts';
import { HAS_CHROMIUM, SKIP_REASON } from './chromium.ts';
import { type ConsoleBrowser, checkPage, consoleBrowser, signIn } from './console-kit.ts';

if (!HAS_CHROMIUM) console.warn(SKIP_REASON);

/**
 * The Partners page in headless Chromium (docs/console.md, "Partners"): the list, an organization
 * and a delivery's attempts, each accessible and compared with its baseline at 1280 and 390 px;
 * then an operator sets a credential's trusted IPs by keyboard.
 */
describe.skipIf(!HAS_CHROMIUM)('in headless Chromium: the console’s Partners page', () => {
  let b: ConsoleBrowser;
  let acme: SeededPartner;
  /** A fixed name: the header's layout (its wrapping at 1280 px) depends on the name's width. */
  const desk = { name: 'Partners desk', credential: '' };

  beforeAll(async () => {
    b = await consoleBrowser();
    const added = await adminInject(b.t, 'POST', '/admin/operators', { name: desk.name, role: 'operator' });
    desk.credential = (added.json() as { credential: string }).credential;
    acme = await seedPartner(b.t, 'Acme Savings');
    await seedPartner(b.t, 'Beta Brokers');
  }, 120_000);
  afterAll(() => b?.close());

  it('shows partners, an organization and a delivery, and sets trusted IPs by keyboard', async () => {
    const page = await signIn(b, desk);
    await page.getByRole('link', { name: 'Partners' }).click();
    await page.waitForURL(`${b.baseUrl}/console/partners`);
    await expect(page.locator('h1').textContent()).resolves.toBe('Partners');
    await checkPage(page, 'partners');

    await page.getByRole('link', { name: 'Acme Savings' }).click();
    await page.waitForURL(`${b.baseUrl}/console/partners/${acme.organizationId}`);
    await checkPage(page, 'partner');

    await page.locator(`a[href$="/deliveries/${acme.deliveries[0]!.id}"]`).click();
    await expect(page.locator('h1').textContent()).resolves.toBe('Delivery of WEBHOOK.CREATED');
    await checkPage(page, 'partner-delivery');

    await page.getByRole('link', { name: 'Back to Acme Savings' }).click();
    await page.waitForURL(`${b.baseUrl}/console/partners/${acme.organizationId}`);
    // Open the credential's changes and save its trusted IPs with the keyboard only.
    await page.locator('summary', { hasText: 'Change “Settlement server”' }).focus();
    await page.keyboard.press('Enter');
    const ips = page.getByLabel('Trusted IPs, one IP address or CIDR range a line (none: any address)');
    await ips.focus();
    await page.keyboard.press('ControlOrMeta+a');
    await page.keyboard.type('10.20.0.0/16\n192.0.2.44');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Save trusted IPs');
    await page.keyboard.press('Enter');
    await page.waitForURL(`${b.baseUrl}/console/partners/${acme.organizationId}?done=ips`);
    await expect(page.getByRole('status').textContent()).resolves.toBe('Trusted IPs saved.');
    const saved = await one<{ trustedIps: string[] }>(
      b.t.ctx.database.db,
      sql`select trusted_ips as "trustedIps" from credentials where id = ${acme.credentialId}`,
    );
    expect(saved?.trustedIps).toEqual(['10.20.0.0/16', '192.0.2.44']);
    expect(b.outside).toEqual([]);
  }, 120_000);
});
