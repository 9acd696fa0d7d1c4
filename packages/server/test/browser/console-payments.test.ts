import { adminInject } from '@partner-api/testkit/helpers.ts';
import { createPartner } from '@partner-api/testkit/partner.ts';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { one } from '../../src/db/query.ts';
import { placeBuy } from '../../src/services/orders/life.ts';
import { recordExchanges } from '../../src/services/payments/pipeline/store.ts';
import { ensureCatalog, insertCustomer } from '../ussd/support.ts';
import { HAS_CHROMIUM, SKIP_REASON } from './chromium.ts';
import { type ConsoleBrowser, checkPage, consoleBrowser, signIn } from './console-kit.ts';

if (!HAS_CHROMIUM) console.warn(SKIP_REASON);

const PHONE = '254712000042';
const SECRET_PASSWORD =
  'MTc0Mzc5YmZiMjc5ZjlhYTliZGJjZjE1OGU5N2RkNzFhNDY3Y2QyZTBjODkzMDU5YjEwZjc4ZTZiNzJhZGExZWQyYzkxOTIwMjYxMTI5';

/**
 * The Payments page in headless Chromium (docs/console.md, "Payments"): search by typing a phone
 * number and Enter, the payment's timeline, settling it by hand with keyboard and clicks; both pages
 * accessible and compared with their baselines at 1280 and 390 px.
 */
describe.skipIf(!HAS_CHROMIUM)('in headless Chromium: the console Payments page', () => {
  let b: ConsoleBrowser;
  let transactionId: string;
  /** An operator of a fixed name: the header's width (and its wrapping) is the same every run. */
  const desk = { name: 'Amina Otieno', credential: '' };

  beforeAll(async () => {
    b = await consoleBrowser();
    const t = b.t;
    desk.credential = (
      (await adminInject(t, 'POST', '/admin/operators', { name: desk.name, role: 'operator' })).json() as {
        credential: string;
      }
    ).credential;
    const stockId = (await ensureCatalog(t)).buy;
    const partner = await createPartner(t, { name: 'Savanna Savings' });
    const customerId = await insertCustomer(t, partner, { msisdn: PHONE });
    const placed = await t.ctx.database.db.transaction((tx) =>
      placeBuy(
        tx,
        { organizationId: partner.organizationId, customerId, msisdn: PHONE, stockId, amount: '1000' },
        t.ctx,
      ),
    );
    transactionId = placed.payments[0]!.id;
    const request = (await one<{ id: string }>(
      t.ctx.database.db,
      sql`select id from provider_requests where transaction_id = ${transactionId}`,
    ))!;
    // What the provider and the pipeline left, fixed so the screenshots compare: an STK push sent,
    // a callback that claimed a payment, and the pipeline handing the payment to a person.
    const at = (seconds: number) => new Date(Date.now() + seconds * 1000);
    const ids = { CheckoutRequestID: 'ws_CO_2911202613050001' };
    await recordExchanges(t.ctx.database.db, { id: request.id, transactionId, providerIds: ids }, 'request', [
      {
        provider: 'mpesa',
        operation: 'stkPush',
        method: 'POST',
        path: '/mpesa/stkpush/v1/processrequest',
        requestBody: {
          BusinessShortCode: '174379',
          Password: SECRET_PASSWORD,
          Amount: 1000,
          PhoneNumber: PHONE,
        },
        status: 200,
        responseBody: {
          ...ids,
          ResponseCode: '0',
          ResponseDescription: 'Success. Request accepted for processing',
        },
        startedAt: at(1),
        latencyMs: 420,
        error: null,
      },
    ]);
    await recordExchanges(
      t.ctx.database.db,
      { id: request.id, transactionId, providerIds: ids },
      'callback',
      [
        {
          provider: 'mpesa',
          operation: 'stkCallback',
          method: 'POST',
          path: '/callbacks/mpesa/[REDACTED]/stk',
          requestBody: { Body: { stkCallback: { ...ids, ResultCode: 0, ResultDesc: 'Processed' } } },
          status: 200,
          responseBody: { ResultCode: 0 },
          startedAt: at(2),
          latencyMs: 3,
          error: null,
          sourceAddress: '196.201.214.200',
        },
      ],
      { status: 'SUCCESS', receipt: 'QK29ABC123' },
    );
    await t.ctx.database.db.execute(
      sql`update provider_requests set state = 'OPERATOR', provider_ids = ${JSON.stringify(ids)}::jsonb,
  last_error = 'the provider did not answer the status query after 8 attempts' where id = ${request.id}`,
    );
  }, 120_000);
  afterAll(async () => {
    await b?.close();
  });

  it('searches by phone, shows the timeline, settles by hand by keyboard and clicks', async () => {
    const page = await signIn(b, desk);
    await page.getByRole('link', { name: 'Payments' }).click();
    await page.waitForURL(`${b.baseUrl}/console/payments`);
    await expect(page.locator('h1').textContent()).resolves.toBe('Payments');
    expect(await page.locator(`form[action="/console/payments/${transactionId}/query"]`).count()).toBe(1);
    await checkPage(page, 'payments');

    await page.getByLabel('Order id, transaction id, phone number or provider reference').click();
    await page.keyboard.type('0712 000042');
    await page.keyboard.press('Enter');
    await page.waitForURL(`${b.baseUrl}/console/payments/${transactionId}`);
    const body = (await page.locator('main').textContent()) ?? '';
    expect(body).toContain('Savanna Savings');
    expect(body).toContain('Callback received');
    expect(body).toContain('Not checked yet');
    expect(body).not.toContain(SECRET_PASSWORD);
    expect(body).toContain('"Password": "[REDACTED]"');
    await checkPage(page, 'payment-timeline');

    await page.getByLabel('What happened').selectOption('paid');
    await page.getByLabel('Reason (at least 3 characters; kept in the audit log)').click();
    await page.keyboard.type('Receipt QK29ABC123 is in the M-Pesa statement');
    await page.keyboard.press('Tab');
    await page.keyboard.type('QK29ABC123');
    await page.getByRole('button', { name: 'Settle by hand' }).click();
    await page.waitForURL(`${b.baseUrl}/console/payments/${transactionId}?done=settled`);
    await expect(page.getByRole('status').textContent()).resolves.toContain('Settled by hand');
    const settled = await one<{ status: string; providerReference: string }>(
      b.t.ctx.database.db,
      sql`select status, provider_reference as "providerReference" from transactions where id = ${transactionId}`,
    );
    expect(settled).toEqual({ status: 'SUCCESS', providerReference: 'QK29ABC123' });
    const audit = await one<{ operatorName: string; before: { status: string }; after: { status: string } }>(
      b.t.ctx.database.db,
      sql`select operator_name as "operatorName", before, after from audit_log
  where route = '/console/payments/:id/settle' and target_id = ${transactionId} and status = 303`,
    );
    expect(audit).toMatchObject({
      operatorName: desk.name,
      before: { status: 'PENDING' },
      after: { status: 'SUCCESS' },
    });
    expect(b.outside).toEqual([]);
  }, 180_000);
});
