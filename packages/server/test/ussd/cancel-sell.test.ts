import { createId } from '@partner-api/contract';
import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { createPartner, type Partner, signedInject } from '@partner-api/testkit/partner.ts';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { holdings, orders, transactions } from '../../src/db/schema.ts';
import { startPayments } from '../../src/services/payments/pipeline/start.ts';
import type { PaymentWorker } from '../../src/services/payments/pipeline/worker.ts';
import {
  ensureCatalog,
  insertCustomer,
  insertHolding,
  orderRow,
  refOf,
  transactionsOf,
  type UssdData,
  ussdClient,
  waitFor,
} from './support.ts';

describeStores('cancelling and selling through USSD on %s', (store) => {
  let t: TestApp;
  let simulator: PaymentWorker;
  let stockIds: Awaited<ReturnType<typeof ensureCatalog>>;
  beforeAll(async () => {
    t = await buildTestApp(store, { SANDBOX_SETTLE_MS: '50' });
    stockIds = await ensureCatalog(t);
    simulator = startPayments(t.ctx, t.app.log);
  });
  afterAll(async () => {
    await simulator.stop();
    await t.close();
  });

  const status = async (partner: Partner, orderId: string) =>
    (await signedInject(t.app, partner, { method: 'GET', url: `/v1/payment/status/${orderId}` })).json().data;

  /** PORTFOLIO → REQUESTS → REQUEST_DETAILS → CANCEL_REQUEST_CONFIRMATION of the newest open order. */
  async function toCancelConfirmation(partner: Partner, customerId: string) {
    const client = ussdClient(t, partner);
    const portfolio = await client.walk(customerId, ['2']);
    expect(portfolio.menu.text).toContain('Open requests: 1');
    const requests = (await client.press(portfolio.sessionId, '1')).json().data as UssdData;
    expect(requests.currentState).toBe('REQUESTS');
    const details = (await client.press(requests.sessionId, '1')).json().data as UssdData;
    expect(details.currentState).toBe('REQUEST_DETAILS');
    const confirm = (await client.press(details.sessionId, '1')).json().data as UssdData;
    expect(confirm.currentState).toBe('CANCEL_REQUEST_CONFIRMATION');
    return { requests, details, confirm };
  }

  it('cancels a pending buy through CANCEL_REQUEST_CONFIRMATION with the CANCEL_ORDER action', async () => {
    const partner = await createPartner(t);
    const customerId = await insertCustomer(t, partner);
    const client = ussdClient(t, partner);
    // 1002: the simulator never settles it, so it stays cancellable.
    const submitted = await client.walk(customerId, ['1', '8', 'ZZCANCEL', '1', '1', '1002', '1']);
    const orderId = refOf(submitted);

    const { requests, details, confirm } = await toCancelConfirmation(partner, customerId);
    expect(requests.menu.options[0]).toEqual({
      key: '1',
      label: 'BUY ZZCANCEL KES 1,002',
      nextState: 'REQUEST_DETAILS',
    });
    expect(details.menu.text).toBe(`BUY ZZCANCEL KES 1,002.00\nStatus: PENDING_PAYMENT\nRef ${orderId}`);
    expect(confirm.menu.text).toBe('Cancel this request?\nBUY ZZCANCEL KES 1,002.00');
    expect(confirm.menu.options).toEqual([
      { key: '1', label: 'Yes, cancel', action: 'CANCEL_ORDER' },
      { key: '2', label: 'No', nextState: 'HOME' },
    ]);

    const cancelled = await client.press(confirm.sessionId, '1');
    expect(cancelled.statusCode).toBe(200);
    const data = cancelled.json().data as UssdData;
    expect(data.currentState).toBe('REQUEST_CANCELLED');
    expect(data.menu).toEqual({
      state: 'REQUEST_CANCELLED',
      text: `Request cancelled. Ref ${orderId}`,
      options: [],
      isEndState: true,
    });
    expect(data.ussdText).toBe(`Request cancelled. Ref ${orderId}`);
    expect(await orderRow(t, orderId)).toMatchObject({ status: 'CANCELLED' });
    expect((await status(partner, orderId)).payment).toMatchObject({ type: 'INCOMING', status: 'CANCELLED' });
    expect((await transactionsOf(t, orderId)).map((tx) => tx.type)).toEqual(['INCOMING']);
    const again = await client.press(confirm.sessionId, '1');
    expect(again.json()).toEqual({ error: 'Bad Request', message: 'USSD session is no longer active' });
  });

  it('"No" on the confirmation goes HOME and keeps the order', async () => {
    const partner = await createPartner(t);
    const customerId = await insertCustomer(t, partner);
    const submitted = await ussdClient(t, partner).walk(customerId, [
      '1',
      '8',
      'ZZCANCEL',
      '1',
      '1',
      '2002',
      '1',
    ]);
    const { confirm } = await toCancelConfirmation(partner, customerId);
    const home = (await ussdClient(t, partner).press(confirm.sessionId, '2')).json().data as UssdData;
    expect(home.currentState).toBe('HOME');
    expect(await orderRow(t, refOf(submitted))).toMatchObject({ status: 'PENDING_PAYMENT' });
  });

  it('cancelling a PAID order refunds it with an OUTGOING disbursement', async () => {
    const partner = await createPartner(t);
    const customerId = await insertCustomer(t, partner, { msisdn: '254722000333' });
    const orderId = createId();
    const db = t.ctx.database.db;
    // A paid order not executed yet (its stock was delisted at payment time, say).
    await db.insert(orders).values({
      id: orderId,
      organizationId: partner.organizationId,
      customerId,
      stockId: stockIds.cancel,
      side: 'BUY',
      status: 'PAID',
      amount: '500.00',
      price: '10.0000',
    });
    await db.insert(transactions).values({
      id: createId(),
      organizationId: partner.organizationId,
      orderId,
      type: 'INCOMING',
      amount: '500.00',
      status: 'SUCCESS',
      provider: 'MPESA',
      msisdn: '254722000333',
      settledAt: new Date(),
    });
    const { confirm } = await toCancelConfirmation(partner, customerId);
    const done = (await ussdClient(t, partner).press(confirm.sessionId, '1')).json().data as UssdData;
    expect(done.currentState).toBe('REQUEST_CANCELLED');
    expect(await orderRow(t, orderId)).toMatchObject({ status: 'CANCELLED' });
    const refunded = await waitFor(async () => {
      const s = await status(partner, orderId);
      return s.disbursement?.status === 'SUCCESS' ? s : undefined;
    });
    expect(refunded.payment).toMatchObject({ type: 'INCOMING', status: 'SUCCESS', amount: '500.00' });
    expect(refunded.disbursement).toMatchObject({ type: 'OUTGOING', amount: '500.00', provider: 'MPESA' });
  });

  it('a sell executes at the current price and pays the proceeds out by disbursement', async () => {
    const partner = await createPartner(t);
    const customerId = await insertCustomer(t, partner, { msisdn: '254711000444' });
    await insertHolding(t, partner, customerId, stockIds.sell, '10.5000');
    const client = ussdClient(t, partner);
    const selected = await client.walk(customerId, ['1', '8', 'ZZSELL', '1']);
    expect(selected.menu.text).toBe('ZZSELL Zulu Sell Test Holdings\nPrice: KES 40.00\nYou hold 10.5 units');
    expect(selected.menu.options.map((o) => `${o.key} ${o.label}`)).toEqual(['1 Buy', '2 Sell', '0 Home']);
    const quantity = (await client.press(selected.sessionId, '2')).json().data as UssdData;
    expect(quantity.menu.text).toBe('Sell ZZSELL\nEnter units to sell (max 10)');
    const tooMany = (await client.press(quantity.sessionId, '11')).json().data as UssdData;
    expect(tooMany.menu.text.split('\n')[0]).toBe('Invalid quantity.');
    const confirm = (await client.press(quantity.sessionId, '3')).json().data as UssdData;
    expect(confirm.menu.text).toBe('Sell 3 ZZSELL units\nPrice: KES 40.00\nEst. proceeds: KES 120.00');
    const submitted = (await client.press(confirm.sessionId, '1')).json().data as UssdData;
    expect(submitted.currentState).toBe('SELL_SUBMITTED');
    expect(submitted.menu.isEndState).toBe(true);
    const orderId = refOf(submitted);

    expect(await orderRow(t, orderId)).toMatchObject({
      side: 'SELL',
      status: 'EXECUTED',
      amount: '120.00',
      quantity: '3.0000',
      price: '40.0000',
    });
    const [holding] = await t.ctx.database.db
      .select()
      .from(holdings)
      .where(and(eq(holdings.customerId, customerId), eq(holdings.stockId, stockIds.sell)));
    expect(holding?.units).toBe('7.5000');
    const paid = await waitFor(async () => {
      const s = await status(partner, orderId);
      return s.disbursement?.status === 'SUCCESS' ? s : undefined;
    });
    expect(paid.payment).toBeUndefined();
    expect(paid.disbursement).toMatchObject({ type: 'OUTGOING', amount: '120.00', provider: 'MPESA' });
  });

  it('two sessions selling the same units at once: one sells, the other gets a clean refusal, never ERROR', async () => {
    const partner = await createPartner(t);
    const customerId = await insertCustomer(t, partner, { msisdn: '254711000555' });
    await insertHolding(t, partner, customerId, stockIds.sell, '10.0000');
    const client = ussdClient(t, partner);
    const confirms = await Promise.all(
      [0, 1].map(() => client.walk(customerId, ['1', '8', 'ZZSELL', '1', '2', '10'])),
    );
    for (const c of confirms) expect(c.currentState).toBe('SELL_CONFIRM');
    const answers = await Promise.all(confirms.map((c) => client.press(c.sessionId, '1')));
    const moved = answers.map((r) => {
      expect(r.statusCode, r.body).toBe(200);
      return r.json() as { message: string; data: UssdData };
    });
    const states = moved.map((m) => m.data.currentState);
    expect(states.filter((s) => s === 'SELL_SUBMITTED')).toHaveLength(1);
    expect(states).not.toContain('ERROR');
    const loser = moved.find((m) => m.data.currentState !== 'SELL_SUBMITTED')!;
    expect(loser.message).not.toMatch(/error/i);
    expect(loser.data.menu.text).not.toContain('Something went wrong');
    const [holding] = await t.ctx.database.db
      .select()
      .from(holdings)
      .where(and(eq(holdings.customerId, customerId), eq(holdings.stockId, stockIds.sell)));
    expect(holding?.units).toBe('0.0000');
  });

  it('two sessions cancelling the same order at once: one cancels, the other gets a clean refusal, never ERROR', async () => {
    const partner = await createPartner(t);
    const customerId = await insertCustomer(t, partner, { msisdn: '254711000556' });
    const client = ussdClient(t, partner);
    const submitted = await client.walk(customerId, ['1', '8', 'ZZCANCEL', '1', '1', '1002', '1']);
    const orderId = refOf(submitted);
    const both = await Promise.all([0, 1].map(() => toCancelConfirmation(partner, customerId)));
    const answers = await Promise.all(both.map(({ confirm }) => client.press(confirm.sessionId, '1')));
    const moved = answers.map((r) => {
      expect(r.statusCode, r.body).toBe(200);
      return r.json() as { message: string; data: UssdData };
    });
    const states = moved.map((m) => m.data.currentState);
    expect(states.filter((s) => s === 'REQUEST_CANCELLED')).toHaveLength(1);
    expect(states).not.toContain('ERROR');
    for (const m of moved) expect(m.message).not.toMatch(/error/i);
    expect(await orderRow(t, orderId)).toMatchObject({ status: 'CANCELLED' });
  });
});
