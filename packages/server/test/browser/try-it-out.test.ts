import { createPrivateKey, randomUUID } from 'node:crypto';
import { createId } from '@partner-api/contract';
import { buildTestApp, type TestApp } from '@partner-api/testkit/app.ts';
import { createPartner, signedFetch } from '@partner-api/testkit/partner.ts';
import { freePort } from '@partner-api/testkit/process.ts';
import type { Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_CREDENTIAL_PATH, type DemoCredential } from '../../src/routes/sandbox-demo-credential.ts';
import {
  type BrowserSandbox,
  HAS_CHROMIUM,
  launchChromium,
  SKIP_REASON,
  startBrowserSandbox,
} from './chromium.ts';
import { fillOperation, openReference, tryOperation } from './swagger.ts';

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
  it('signs every other operation too: list, update, replay, USSD, payment status, revoke', async () => {
    const { server, context, outside } = sandbox;
    const page = await context.newPage();
    await openReference(page, server.baseUrl);
    await page.waitForSelector('#try-it-out[data-credential="demo"]');

    const key = randomUUID();
    const body = JSON.stringify({ firstName: 'Njeri', lastName: 'Mwangi', msisdn: '254733000444' });
    const first = await tryOperation(page, 'Customers', 'createCustomer', {
      body,
      params: { 'X-Idempotency-Key': key },
    });
    expect(first.status).toBe(201);
    const again = await tryOperation(page, 'Customers', 'createCustomer', {
      body,
      params: { 'X-Idempotency-Key': key },
    });
    expect([again.status, again.headers['idempotent-replayed'], again.body]).toEqual([
      201,
      'true',
      first.body,
    ]);
    const id = (first.body as { data: { id: string } }).data.id;

    const listed = await tryOperation(page, 'Customers', 'listCustomers', { params: { search: 'Njeri Mw' } });
    expect(listed.request.url()).toContain('search=Njeri%20Mw');
    expect(listed.status).toBe(200);
    const updated = await tryOperation(page, 'Customers', 'updateCustomer', {
      params: { id },
      body: JSON.stringify({ lastName: 'Mwangi-Kariuki' }),
    });
    expect([updated.request.method(), updated.status]).toEqual(['PATCH', 200]);
    expect(updated.body).toMatchObject({ data: { id, lastName: 'Mwangi-Kariuki' } });

    const session = await tryOperation(page, 'USSD', 'createUssdSession', {
      body: JSON.stringify({ customerId: id }),
    });
    expect(session.status).toBe(201);
    const sessionId = (session.body as { data: { sessionId: string } }).data.sessionId;
    const moved = await tryOperation(page, 'USSD', 'processUssdChoice', {
      body: JSON.stringify({ sessionId, choice: '1' }),
    });
    expect([moved.status, moved.body]).toMatchObject([200, { data: { currentState: 'STOCKS' } }]);

    // Past the signature check, the order is unknown: a 404, not a 401.
    const status = await tryOperation(page, 'Payments', 'getPaymentStatus', {
      params: { orderId: createId() },
    });
    expect(status.status).toBe(404);

    const revoked = await tryOperation(page, 'Authentication', 'revokeToken');
    expect(revoked.status).toBe(200);
    expect(revoked.request.headers()['signature-input']).toMatch(
      /^sig1=\("@method" "@target-uri" "authorization" "x-client-id"\);/,
    );
    // The page fetches a new token after revoking its own.
    const me = await tryOperation(page, 'Authentication', 'getOrganization');
    expect(me.status).toBe(200);
    expect(me.request.headers().authorization).not.toBe(revoked.request.headers().authorization);

    // The page's token revoked elsewhere: one 401, then the page fetches another.
    const demo = (await (await fetch(`${server.baseUrl}${DEMO_CREDENTIAL_PATH}`)).json()) as DemoCredential;
    const pageToken = me.request.headers().authorization!.slice('Bearer '.length);
    const elsewhere = await signedFetch(
      {
        ...demo,
        baseUrl: server.baseUrl,
        organizationId: '',
        credentialId: '',
        privateKey: createPrivateKey(demo.privateKey),
        token: pageToken,
      },
      { method: 'POST', url: '/v1/oauth/revoke' },
    );
    expect(elsewhere.status).toBe(200);
    const stale = await tryOperation(page, 'Authentication', 'getOrganization');
    expect([stale.status, stale.body]).toEqual([
      401,
      { error: 'Unauthorized', message: 'Invalid organization authentication token' },
    ]);
    const renewed = await tryOperation(page, 'Authentication', 'getOrganization');
    expect(renewed.status).toBe(200);
    expect(outside).toEqual([]);
    await page.close();
  }, 120_000);
  it('says at once that signing needs a secure context, on a plain-HTTP host name', async () => {
    const { server } = sandbox;
    // http://insecure.test is not localhost: no secure context, hence no WebCrypto.
    const insecureUrl = `http://insecure.test:${server.port}`;
    const browser = await launchChromium(insecureUrl, ['--host-resolver-rules=MAP insecure.test 127.0.0.1']);
    try {
      const page = await browser.context.newPage();
      await page.goto(`${insecureUrl}/docs`);
      await page.waitForSelector('#try-it-out[data-credential="error"]');
      expect(await page.locator('#try-status').textContent()).toBe(
        'Signing needs WebCrypto: open this page over HTTPS or on localhost.',
      );
      expect(browser.outside).toEqual([]);
    } finally {
      await browser.context.close();
    }
  }, 60_000);
});

/**
 * Production, in this process on a real port (a production process needs DATABASE_URL; the page does
 * not): no demo credential is offered, and a pasted one signs.
 */
describe.skipIf(!HAS_CHROMIUM)('"Try it out" on /docs in production: a pasted credential only', () => {
  let production: TestApp;
  let baseUrl: string;
  let browser: Awaited<ReturnType<typeof launchChromium>>;

  beforeAll(async () => {
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    production = await buildTestApp('pglite', { PUBLIC_BASE_URL: baseUrl }, { production: true });
    await production.app.listen({ port, host: '127.0.0.1' });
    browser = await launchChromium(baseUrl);
  }, 120_000);

  afterAll(async () => {
    await browser?.context.close();
    await production?.close();
  });

  it('offers no demo credential: the endpoint is 404 and the page names none', async () => {
    const res = await fetch(`${baseUrl}${DEMO_CREDENTIAL_PATH}`);
    expect([res.status, await res.json()]).toEqual([404, { error: 'Not Found' }]);
    const html = await (await fetch(`${baseUrl}/docs`)).text();
    expect(html).toContain('id="try-form"');
    expect(html).not.toContain('try-use-demo');
    expect(html).not.toContain(DEMO_CREDENTIAL_PATH);
  });

  it('signs with a pasted credential kept in page memory only, the key sent nowhere', async () => {
    const partner = await createPartner(production, { name: 'Pasted Partner Ltd' });
    const privateKeyPem = partner.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    const keyBody = privateKeyPem.split('\n')[1]!;
    const page = await browser.context.newPage();
    const sent: Request[] = [];
    page.on('request', (request) => sent.push(request));
    await openReference(page, baseUrl);
    expect(await page.locator('#try-use-demo').count()).toBe(0);
    expect(await page.getAttribute('#try-it-out', 'data-credential')).toBe('none');

    // Without a credential the page says what is missing, and sends nothing.
    const unsigned = await fillOperation(page, 'Authentication', 'getOrganization');
    await unsigned.locator('button.execute').click();
    await expect
      .poll(() => unsigned.textContent(), { timeout: 15_000 })
      .toContain('Not sent: no credential to sign with');
    expect(sent.filter((r) => r.url().includes('/v1/oauth/'))).toEqual([]);

    await page.click('#try-own summary');
    await page.fill('#try-form [name="clientId"]', partner.clientId);
    await page.fill('#try-form [name="clientSecret"]', partner.clientSecret);
    await page.fill('#try-form [name="keyId"]', partner.keyId);
    await page.fill('#try-form [name="privateKey"]', privateKeyPem);
    await page.click('#try-form button[type="submit"]');
    await page.waitForSelector('#try-it-out[data-credential="pasted"]');
    // The form is cleared: the page keeps the credential in its script's memory only.
    for (const name of ['clientId', 'clientSecret', 'keyId', 'privateKey']) {
      expect(await page.inputValue(`#try-form [name="${name}"]`)).toBe('');
    }

    const me = await tryOperation(page, 'Authentication', 'getOrganization');
    expect([me.status, me.shown]).toEqual([200, '200']);
    expect(me.body).toMatchObject({ data: { id: partner.organizationId, name: 'Pasted Partner Ltd' } });
    const body = JSON.stringify({ firstName: 'Achieng', lastName: 'Odhiambo' });
    const created = await tryOperation(page, 'Customers', 'createCustomer', { body });
    expect([created.status, created.shown]).toEqual([201, '201']);

    // Never stored, never sent but to the token endpoint; the key never leaves the page.
    const stored = await page.evaluate(async () => ({
      local: localStorage.length,
      session: sessionStorage.length,
      databases: (await indexedDB.databases()).length,
    }));
    expect(stored).toEqual({ local: 0, session: 0, databases: 0 });
    expect(await browser.context.cookies()).toEqual([]);
    const carrying = (text: string) =>
      sent.filter((r) => `${r.url()} ${JSON.stringify(r.headers())} ${r.postData() ?? ''}`.includes(text));
    expect(carrying(keyBody)).toEqual([]);
    const withSecret = carrying(partner.clientSecret);
    expect(withSecret.map((r) => `${r.method()} ${new URL(r.url()).pathname}`)).toEqual([
      'POST /v1/oauth/token',
    ]);
    expect(browser.outside).toEqual([]);
    await page.close();
  }, 90_000);
});
