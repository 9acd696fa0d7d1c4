import type { Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrowserSandbox, HAS_CHROMIUM, SKIP_REASON, startBrowserSandbox } from './chromium.ts';
import { openReference, tryOperation } from './swagger.ts';

if (!HAS_CHROMIUM) console.warn(SKIP_REASON);

describe.skipIf(!HAS_CHROMIUM)('"Try it out" on /docs in the sandbox: the page signs', () => {
  let sandbox: BrowserSandbox;
  beforeAll(async () => {
    sandbox = await startBrowserSandbox();
  }, 120_000);
  afterAll(() => sandbox?.close());

  it('creates a customer with the demo credential (201), then reads it back (200)', async () => {
    const { server, context, outside } = sandbox;
    const page: Page = await context.newPage();
    const sent: Request[] = [];
    page.on('request', (request) => sent.push(request));
    await openReference(page, server.baseUrl);
    await page.waitForSelector('#try-it-out[data-credential="demo"]');
    expect(await page.locator('#try-status').textContent()).toMatch(
      /sandbox demo credential: client id org_/,
    );

    const body = {
      firstName: 'Wanjiku',
      lastName: 'Kamau',
      msisdn: '254711000222',
      referenceId: 'try-it-out',
    };
    const created = await tryOperation(page, 'Customers', 'createCustomer', { body: JSON.stringify(body) });
    expect([created.status, created.shown]).toEqual([201, '201']);
    expect(created.body).toMatchObject({ data: { ...body, isActive: true } });

    const headers = created.request.headers();
    expect(headers['content-digest']).toMatch(/^sha-512=:[A-Za-z0-9+/]+={0,2}:$/);
    expect(headers['x-idempotency-key']).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    expect(headers['signature-input']).toMatch(
      /^sig1=\("@method" "@target-uri" "authorization" "x-client-id" "content-digest" "x-idempotency-key"\);created=\d+;expires=\d+;keyid="staging-service-ed25519"$/,
    );
    expect(headers.signature).toMatch(/^sig1=:[A-Za-z0-9+/]{86}==:$/);

    const id = (created.body as { data: { id: string } }).data.id;
    const read = await tryOperation(page, 'Customers', 'getCustomer', { params: { id } });
    expect([read.status, read.shown]).toEqual([200, '200']);
    expect(read.body).toMatchObject({ data: { id, ...body } });
    expect(read.request.headers()['signature-input']).toMatch(
      /^sig1=\("@method" "@target-uri" "authorization" "x-client-id"\);/,
    );

    // One token served both calls; nothing went anywhere but this server.
    expect(sent.filter((r) => r.url().endsWith('/v1/oauth/token'))).toHaveLength(1);
    expect(outside).toEqual([]);
    await page.close();
  }, 90_000);
});
