import { createId } from '@partner-api/contract';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrowserSandbox, HAS_CHROMIUM, SKIP_REASON, startBrowserSandbox } from './chromium.ts';
import { openReference, tryOperation } from './swagger.ts';

if (!HAS_CHROMIUM) console.warn(SKIP_REASON);

/**
 * The tag `Investments (preview)` in Swagger UI's element ids: spaces become `_` and the parentheses
 * are CSS-escaped into the id itself (`operations-Investments_\(preview\)-listInstruments`), so the
 * selector escapes that id once more.
 */
const TAG = 'Investments_\\(preview\\)'.replace(/[^\w-]/g, (c) => `\\${c}`);
type Data = { data: Record<string, unknown> & { id: string } };
type List = { data: Array<{ id: string }> };

/**
 * "Try it out" is generic over the OpenAPI document (assets/try-it-out.js learns from it which
 * operations are signed and which take an idempotency key): with the preview on, every investments
 * operation is sent signed from the page, each mutation with its key, and answers as it should.
 */
describe.skipIf(!HAS_CHROMIUM)('"Try it out" on /docs for every investments operation (preview on)', () => {
  let sandbox: BrowserSandbox;
  beforeAll(async () => {
    // Payments stay pending long enough for the cancel below to find the buy PENDING_PAYMENT.
    sandbox = await startBrowserSandbox({ INVESTMENTS_PREVIEW: 'true', SANDBOX_SETTLE_MS: '60000' });
  }, 120_000);
  afterAll(() => sandbox?.close());

  it('runs all 18, signed, with the demo credential', async () => {
    const page: Page = await sandbox.context.newPage();
    await openReference(page, sandbox.server.baseUrl);
    await page.waitForSelector('#try-it-out[data-credential="demo"]');
    const tried: string[] = [];
    const run = async (
      operationId: string,
      status: number,
      input: Parameters<typeof tryOperation>[3] = {},
    ) => {
      const result = await tryOperation(page, TAG, operationId, input);
      expect([operationId, result.status, result.shown], JSON.stringify(result.body)).toEqual([
        operationId,
        status,
        String(status),
      ]);
      expect(result.request.headers().signature, operationId).toMatch(/^sig1=:/);
      if (result.request.method() === 'POST')
        expect(result.request.headers()['x-idempotency-key'], operationId).toMatch(/^[0-9a-f-]{36}$/);
      tried.push(operationId);
      return result.body;
    };

    await run('listInvestmentTypes', 200);
    const instruments = (await run('listInstruments', 200)) as List;
    const instrumentId = instruments.data[0]!.id;
    await run('getInstrument', 200, { params: { instrumentId } });
    await run('getInstrumentPrices', 200, { params: { instrumentId } });

    const customer = (
      await tryOperation(page, 'Customers', 'createCustomer', {
        body: JSON.stringify({ firstName: 'Akinyi', lastName: 'Tries', msisdn: '254711000333' }),
      })
    ).body as Data;
    const customerId = customer.data.id;
    const account = (await run('createAccount', 201, { body: JSON.stringify({ customerId }) })) as Data;
    const accountId = account.data.id;
    await run('listAccounts', 200);
    await run('getAccount', 200, { params: { accountId } });
    const updated = (await run('updateAccount', 200, {
      params: { accountId },
      body: JSON.stringify({ language: 'sw' }),
    })) as Data;
    expect(updated.data.language).toBe('sw');
    await run('listAccountAssets', 200, { params: { accountId } });
    await run('getAccountPortfolio', 200, { params: { accountId } });

    const request = (await run('createRequest', 201, {
      body: JSON.stringify({ customerId, instrumentId, side: 'BUY', amount: '100000' }),
    })) as Data;
    const requestId = request.data.id;
    await run('listRequests', 200);
    await run('getRequest', 200, { params: { requestId } });
    const cancelled = (await run('cancelRequest', 200, { params: { requestId } })) as Data;
    expect(cancelled.data.status).toBe('CANCELLED');

    const transactions = (await run('listTransactions', 200)) as List;
    await run('getTransaction', 200, { params: { transactionId: transactions.data[0]!.id } });
    await run('listReports', 200);
    // No order executed here, so no report: an id the organization has none of is the documented 404.
    await run('getReport', 404, { params: { reportId: createId() } });

    const document = (await (await fetch(`${sandbox.server.baseUrl}/v1/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { tags?: string[]; operationId?: string }>>;
    };
    const listed = Object.values(document.paths)
      .flatMap((item) => Object.values(item))
      .filter((operation) => operation.tags?.includes('Investments (preview)'))
      .map((operation) => operation.operationId);
    expect(tried.sort()).toEqual(listed.sort());
  }, 180_000);
});
