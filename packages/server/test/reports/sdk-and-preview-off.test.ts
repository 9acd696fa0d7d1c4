import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import {
  type ListeningApp,
  listeningPartner,
  listeningTestApp,
  sdkClient,
} from '@partner-api/testkit/listening.ts';
import { createPartner } from '@partner-api/testkit/partner.ts';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createId } from '../../../contract/src/index.ts';
import { NotFoundError } from '../../../sdk/src/index.ts';
import { rows } from '../../src/db/query.ts';
import { placeSell } from '../../src/services/orders/life.ts';
import { ownInstruments } from '../investments/requests-support.ts';
import { insertCustomer, insertHolding } from '../ussd/support.ts';
import { pdfText } from './support.ts';

describeStores("the SDK's report PDF over HTTP on %s", (store) => {
  let t: ListeningApp;
  let ids: Awaited<ReturnType<typeof ownInstruments>>;
  beforeAll(async () => {
    t = await listeningTestApp(store, { INVESTMENTS_PREVIEW: 'true' });
    ids = await ownInstruments(t, 'RPS');
  });
  afterAll(() => t?.close());

  it('reports.getPdf answers the PDF of a confirmation; an unknown report is a NotFoundError', async () => {
    const partner = await listeningPartner(t);
    const client = sdkClient(partner);
    const customerId = await insertCustomer(t, partner);
    await insertHolding(t, partner, customerId, ids.whole.id, '4');
    const sold = await client.requests.create({
      customerId,
      instrumentId: ids.whole.id,
      side: 'SELL',
      units: '2',
    });
    const [report] = (await client.reports.list({ customerId })).data;
    expect(report).toMatchObject({ type: 'TRADE_CONFIRMATION', data: { orderId: sold.data.id } });
    const bytes = await client.reports.getPdf(report!.id);
    const text = await pdfText(Buffer.from(bytes));
    for (const figure of [report!.id, sold.data.id, '2.0000', '250.0000', '500.00'])
      expect(text).toContain(figure);
    await expect(client.reports.getPdf(createId())).rejects.toBeInstanceOf(NotFoundError);
  });
});

describeStores('a confirmation with the investments preview off on %s', (store) => {
  let t: TestApp;
  let ids: Awaited<ReturnType<typeof ownInstruments>>;
  beforeAll(async () => {
    t = await buildTestApp(store, { WEBHOOKS_PREVIEW: 'true' });
    ids = await ownInstruments(t, 'RPO');
  });
  afterAll(() => t?.close());

  it('is written (the investor’s record) and announces nothing', async () => {
    const partner = await createPartner(t);
    const customerId = await insertCustomer(t, partner);
    await insertHolding(t, partner, customerId, ids.whole.id, '3');
    const db = t.ctx.database.db;
    const { orderId } = await db.transaction((tx) =>
      placeSell(
        tx,
        {
          organizationId: partner.organizationId,
          customerId,
          msisdn: '254712345678',
          stockId: ids.whole.id,
          quantity: '1',
        },
        t.ctx,
      ),
    );
    const written = await rows<{ type: string; orderId: string }>(
      db,
      sql`select type, data->>'orderId' as "orderId" from reports where customer_id = ${customerId}`,
    );
    expect(written).toEqual([{ type: 'TRADE_CONFIRMATION', orderId }]);
    const events = await rows<{ event: string }>(
      db,
      sql`select event from webhook_events where organization_id = ${partner.organizationId}`,
    );
    expect(events.map((e) => e.event).sort()).toEqual([
      'AUTH.CREATED',
      'REQUEST.CREATED',
      'TRANSACTION.CREATED',
    ]);
  });
});
