import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { createPartner } from '@partner-api/testkit/partner.ts';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { recordPrice } from '../../src/services/market/prices.ts';
import { startPayments } from '../../src/services/payments/pipeline/start.ts';
import type { PaymentWorker } from '../../src/services/payments/pipeline/worker.ts';
import { MARKET_CLOSED } from '../../src/services/ussd/menus.ts';
import { insertCustomer, insertHolding, waitFor } from '../ussd/support.ts';
import { dataOf } from '../webhooks/api-support.ts';
import { executedAs, ordersOf, ownInstruments, REQUESTS_ENV, requestsClient } from './requests-support.ts';

describeStores('a request executed through the payment pipeline on %s', (store) => {
  let t: TestApp;
  let ids: Awaited<ReturnType<typeof ownInstruments>>;
  let simulator: PaymentWorker;
  beforeAll(async () => {
    t = await buildTestApp(store, { ...REQUESTS_ENV, SANDBOX_SETTLE_MS: '200' });
    ids = await ownInstruments(t, 'ZZX');
    simulator = startPayments(t.ctx, t.app.log);
  });
  afterAll(async () => {
    await simulator.stop();
    await t.close();
  });

  it('a buy by API: the simulator approves the prompt, the request executes, GET shows the execution', async () => {
    const partner = await createPartner(t);
    const customerId = await insertCustomer(t, partner);
    const api = requestsClient(t, partner);
    const created = await api.create({
      customerId,
      instrumentId: ids.fractional.id,
      side: 'BUY',
      amount: '100',
    });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().data.id as string;
    const executed = await waitFor(async () => {
      const data = (await api.get(id)).json().data;
      return data.status === 'EXECUTED' ? data : undefined;
    });
    expect(executed).toMatchObject({
      ...executedAs('4.0000', '25.0000', '100.00'),
      transactions: [{ type: 'INCOMING', status: 'SUCCESS', amount: '100.00' }],
    });
    // REQUEST.CREATED, then PAID and EXECUTED (written in one transaction: same time), in the outbox.
    const updates = await dataOf(t, partner.organizationId, 'REQUEST.UPDATED');
    expect(
      updates
        .filter((d) => d.orderId === id)
        .map((d) => d.status)
        .sort(),
    ).toEqual(['EXECUTED', 'PAID']);
    expect((await dataOf(t, partner.organizationId, 'REQUEST.CREATED')).map((d) => d.orderId)).toEqual([id]);
  });
});

const eat = (local: string) => new Date(`${local}+03:00`);

describeStores('requests only in the session and at a fresh price (MARKET_HOURS=enforced) on %s', (store) => {
  let t: TestApp;
  let ids: Awaited<ReturnType<typeof ownInstruments>>;
  beforeAll(async () => {
    t = await buildTestApp(store, {
      ...REQUESTS_ENV,
      MARKET_HOURS: 'enforced',
      PRICE_MAX_AGE_SECONDS: '900',
    });
    ids = await ownInstruments(t, 'ZZH');
  });
  afterAll(() => t?.close());

  const priceAt = (asOf: Date) =>
    t.ctx.database.db.transaction((tx) =>
      recordPrice(tx, { symbol: ids.fractional.symbol, price: '25.0000', asOf, source: 'EDIT' }),
    );
  const customer = async () => {
    const partner = await createPartner(t);
    const customerId = await insertCustomer(t, partner);
    await insertHolding(t, partner, customerId, ids.fractional.id, '10');
    return { customerId, api: requestsClient(t, partner) };
  };
  const orders = (customerId: string, api: ReturnType<typeof requestsClient>) => [
    api.create({ customerId, instrumentId: ids.fractional.id, side: 'BUY', amount: '1000' }),
    api.create({ customerId, instrumentId: ids.fractional.id, side: 'SELL', units: '3' }),
  ];

  it('outside the session a buy and a sell are refused with 409, no order written', async () => {
    await priceAt(eat('2026-11-27T14:59'));
    t.ctx.clock = () => eat('2026-11-28T10:00'); // a Saturday
    const { customerId, api } = await customer();
    for (const res of await Promise.all(orders(customerId, api)))
      expect([res.statusCode, res.json()]).toEqual([409, { error: 'Conflict', message: MARKET_CLOSED }]);
    expect(await ordersOf(t, customerId)).toBe(0);
  });

  it('in the session at a stale price: refused naming the instrument; at a fresh one: placed', async () => {
    await priceAt(eat('2026-12-02T09:40'));
    t.ctx.clock = () => eat('2026-12-02T10:00'); // Wednesday, 20 minutes after the price
    const { customerId, api } = await customer();
    const stale = {
      error: 'Conflict',
      message: `No current price for ${ids.fractional.symbol}. Try again later.`,
    };
    for (const res of await Promise.all(orders(customerId, api)))
      expect([res.statusCode, res.json()]).toEqual([409, stale]);
    expect(await ordersOf(t, customerId)).toBe(0);

    t.ctx.clock = () => eat('2026-12-02T09:50');
    const [bought, sold] = [await orders(customerId, api)[0]!, await orders(customerId, api)[1]!];
    expect([bought.statusCode, sold.statusCode], bought.body + sold.body).toEqual([201, 201]);
  });
});
