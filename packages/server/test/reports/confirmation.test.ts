import { createId, NO_FEES_NOTE, type Report, tradeConfirmationDataSchema } from '@partner-api/contract';
import { describeStores } from '@partner-api/testkit/app.ts';
import { adminInject } from '@partner-api/testkit/helpers.ts';
import { createPartner } from '@partner-api/testkit/partner.ts';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { one, rows, run } from '../../src/db/query.ts';
import { startPayments } from '../../src/services/payments/pipeline/start.ts';
import type { PaymentWorker } from '../../src/services/payments/pipeline/worker.ts';
import { correctReport, ReportNotCorrectableError } from '../../src/services/reports/write.ts';
import { ISO, ownInstruments, requestsClient } from '../investments/requests-support.ts';
import { insertCustomer, insertHolding, waitFor } from '../ussd/support.ts';
import {
  createWebhook,
  type DeliveryApp,
  type Receiver,
  startDeliveryApp,
} from '../webhooks/delivery-support.ts';
import { missingFrom, PLATFORM_ENV, pdfText, reportsClient } from './support.ts';

const REPORT_NOT_FOUND = { error: 'Not found', message: 'Report not found' };

describeStores('trade confirmations: JSON, PDF and REPORT.CREATED on %s', (store) => {
  let d: DeliveryApp;
  let simulator: PaymentWorker;
  let ids: Awaited<ReturnType<typeof ownInstruments>>;
  let receiver: Receiver;
  beforeAll(async () => {
    d = await startDeliveryApp(store, 'reports', {
      INVESTMENTS_PREVIEW: 'true',
      WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true',
      SANDBOX_SETTLE_MS: '100',
      ...PLATFORM_ENV,
    });
    ids = await ownInstruments(d.t, 'RPC');
    simulator = startPayments(d.t.ctx, d.t.app.log);
    receiver = await d.receiver();
  });
  afterAll(async () => {
    await simulator.stop();
    await d.close();
  });

  it('an executed buy and sell each have one confirmation, served as JSON and as a PDF with every figure, announced to the receiver', async () => {
    const { t } = d;
    const db = t.ctx.database.db;
    const partner = await createPartner(t);
    await createWebhook(db, receiver.url, ['REPORT'], partner.organizationId);
    const customerId = await insertCustomer(t, partner);
    await insertHolding(t, partner, customerId, ids.whole.id, '10');
    const api = requestsClient(t, partner);
    const reports = reportsClient(t, partner);
    const place = async (body: Record<string, string>) => {
      const res = await api.create({ customerId, ...body });
      expect(res.statusCode, res.body).toBe(201);
      const id = res.json().data.id as string;
      await waitFor(async () => ((await api.get(id)).json().data.status === 'EXECUTED' ? true : undefined));
      return id;
    };
    // A fractional buy spends it all; a whole-units buy of 600 at 250 buys 2 and refunds 100.
    const fractionalBuy = await place({ instrumentId: ids.fractional.id, side: 'BUY', amount: '100' });
    const wholeBuy = await place({ instrumentId: ids.whole.id, side: 'BUY', amount: '600' });
    const sell = await place({ instrumentId: ids.whole.id, side: 'SELL', units: '3' });

    const listed = await reports.list(`?customerId=${customerId}&type=TRADE_CONFIRMATION`);
    expect(listed.statusCode, listed.body).toBe(200);
    const all = listed.json().data as Report[];
    expect(all).toHaveLength(3);
    const executions = await rows<{
      id: string;
      orderId: string;
      settlementDate: string;
      executedAt: string;
    }>(
      db,
      sql`select id, order_id as "orderId", settlement_date as "settlementDate", executed_at::text as "executedAt"
    from executions where order_id in (${fractionalBuy}, ${wholeBuy}, ${sell})`,
    );
    const expected = {
      [fractionalBuy]: {
        side: 'BUY',
        units: '4.0000',
        price: '25.0000',
        amount: '100.00',
        instrument: ids.fractional,
      },
      [wholeBuy]: {
        side: 'BUY',
        units: '2.0000',
        price: '250.0000',
        amount: '500.00',
        instrument: ids.whole,
      },
      [sell]: { side: 'SELL', units: '3.0000', price: '250.0000', amount: '750.00', instrument: ids.whole },
    };
    for (const report of all) {
      const data = tradeConfirmationDataSchema.parse(report.data);
      const execution = executions.find((e) => e.orderId === data.orderId)!;
      const want = expected[data.orderId]!;
      expect(report).toMatchObject({ customerId, type: 'TRADE_CONFIRMATION', replaces: null });
      expect(data).toEqual({
        executionId: execution.id,
        orderId: execution.orderId,
        customer: { id: customerId, firstName: 'Wanjiku', lastName: 'Test' },
        instrument: {
          id: want.instrument.id,
          symbol: want.instrument.symbol,
          name: want.instrument.name,
          currency: 'KES',
        },
        side: want.side,
        units: want.units,
        price: want.price,
        priceAsOf: expect.stringMatching(ISO),
        amount: want.amount,
        currency: 'KES',
        fees: [],
        feesTotal: '0.00',
        feesNote: NO_FEES_NOTE,
        executedAt: new Date(execution.executedAt).toISOString(),
        settlementDate: execution.settlementDate,
        platform: { name: PLATFORM_ENV.PLATFORM_NAME, licence: PLATFORM_ENV.PLATFORM_LICENCE },
      });
      expect(report.createdAt).toBe(data.executedAt);
      expect((await reports.get(report.id)).json()).toEqual({ data: report });

      const pdf = await reports.pdf(report.id);
      expect(pdf.statusCode, pdf.body).toBe(200);
      expect(pdf.headers['content-type']).toBe('application/pdf');
      expect(pdf.rawPayload.subarray(0, 5).toString()).toBe('%PDF-');
      expect(missingFrom(await pdfText(pdf.rawPayload), report)).toEqual([]);
    }

    // Each reached the receiver as REPORT.CREATED carrying the report as GET answers it.
    const announced = await waitFor(async () => {
      const got = receiver.envelopes().filter((e) => e.event === 'REPORT.CREATED');
      return got.length >= 3 ? got : undefined;
    }, 20_000);
    expect(announced.map((e) => e.data).sort((a, b) => String(a.id).localeCompare(String(b.id)))).toEqual(
      [...all].sort((a, b) => a.id.localeCompare(b.id)),
    );
  });

  it('JSON stays the default; another organization’s report is not found as JSON or as a PDF', async () => {
    const { t } = d;
    const partner = await createPartner(t);
    const other = await createPartner(t);
    const customerId = await insertCustomer(t, partner);
    await insertHolding(t, partner, customerId, ids.whole.id, '5');
    const res = await requestsClient(t, partner).create({
      customerId,
      instrumentId: ids.whole.id,
      side: 'SELL',
      units: '1',
    });
    expect(res.statusCode, res.body).toBe(201);
    const [report] = (await reportsClient(t, partner).list()).json().data as Report[];
    const mine = reportsClient(t, partner);
    for (const accept of [
      'application/json',
      '*/*',
      'application/pdf;q=0.5, application/json',
      'text/html',
    ]) {
      const got = await mine.pdf(report!.id, accept);
      expect([accept, got.statusCode, got.json()]).toEqual([accept, 200, { data: report }]);
    }
    expect(
      (await mine.pdf(report!.id, 'application/json;q=0.5, application/pdf')).headers['content-type'],
    ).toBe('application/pdf');
    // A report of no known shape (written by hand before the producers) prints every field as stored.
    const legacy = createId();
    await run(
      t.ctx.database.db,
      sql`insert into reports (id, organization_id, customer_id, type, data)
    values (${legacy}, ${partner.organizationId}, ${customerId}, 'TRADE_CONFIRMATION',
      ${JSON.stringify({ summary: 'Legacy note', lines: [{ amount: '12.34' }] })}::jsonb)`,
    );
    const legacyPdf = await mine.pdf(legacy);
    expect(legacyPdf.statusCode).toBe(200);
    expect(await pdfText(legacyPdf.rawPayload)).toContain('lines[0].amount: 12.34');
    // The document names both representations of GET /reports/{reportId}.
    const document = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
    expect(Object.keys(document.paths['/reports/{reportId}'].get.responses['200'].content)).toEqual([
      'application/json',
      'application/pdf',
    ]);
    const theirs = reportsClient(t, other);
    for (const res of [await theirs.get(report!.id), await theirs.pdf(report!.id)])
      expect([res.statusCode, res.json()]).toEqual([404, REPORT_NOT_FOUND]);
    expect((await theirs.list()).json().data).toEqual([]);
  });

  it('a report is never updated: a correction is a new report naming it, once per report', async () => {
    const { t } = d;
    const db = t.ctx.database.db;
    const partner = await createPartner(t);
    const customerId = await insertCustomer(t, partner);
    await insertHolding(t, partner, customerId, ids.whole.id, '5');
    await requestsClient(t, partner).create({
      customerId,
      instrumentId: ids.whole.id,
      side: 'SELL',
      units: '1',
    });
    const [original] = (await reportsClient(t, partner).list()).json().data as Report[];
    await expect(
      db.execute(sql`update reports set data = '{}'::jsonb where id = ${original!.id}`),
    ).rejects.toThrow();
    const correct = (replaces: string) =>
      db.transaction((tx) =>
        correctReport(tx, t.ctx, {
          organizationId: partner.organizationId,
          replaces,
          data: { ...original!.data, feesNote: 'Corrected note' },
          createdAt: t.ctx.clock(),
        }),
      );
    const correction = await correct(original!.id);
    expect(correction).toMatchObject({ customerId, type: 'TRADE_CONFIRMATION', replaces: original!.id });
    await expect(correct(original!.id)).rejects.toThrow(ReportNotCorrectableError);
    const latest = await correct(correction.id);
    expect(latest.replaces).toBe(correction.id);
    const kept = await one<{ data: unknown }>(db, sql`select data from reports where id = ${original!.id}`);
    expect(kept!.data).toEqual(original!.data);
    // The operator's route: the data of the report's type, whole; a corrected report refused.
    const route = (id: string, data: unknown) =>
      adminInject(t, 'POST', `/admin/reports/${id}/corrections`, { data });
    const bad = await route(original!.id, { ...original!.data, units: 'four' });
    expect([bad.statusCode, bad.json().details[0].field]).toEqual([400, 'data.units']);
    expect((await route(original!.id, original!.data)).statusCode).toBe(409);
    const viaRoute = await route(latest.id, { ...original!.data, feesNote: 'Second correction' });
    expect([viaRoute.statusCode, viaRoute.json().data.replaces]).toEqual([201, latest.id]);
    const pdf = await reportsClient(t, partner).pdf(correction.id);
    expect(missingFrom(await pdfText(pdf.rawPayload), correction)).toEqual([]);
  });
});
