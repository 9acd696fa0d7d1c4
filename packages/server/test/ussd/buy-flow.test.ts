import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { createPartner, type Partner, signedInject } from '@partner-api/testkit/partner.ts';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { holdings } from '../../src/db/schema.ts';
import { money, parseDecimal, plain, unitsFor } from '../../src/lib/money.ts';
import { startPayments } from '../../src/services/payments/pipeline/start.ts';
import type { PaymentWorker } from '../../src/services/payments/pipeline/worker.ts';
import {
  ensureCatalog,
  insertCustomer,
  orderRow,
  refOf,
  type UssdData,
  ussdClient,
  waitFor,
} from './support.ts';

type Status = {
  orderId: string;
  payment?: { status: string; type: string; amount: string; provider: string };
};

describeStores('buying through USSD, paid by the sandbox simulator, on %s', (store) => {
  let t: TestApp;
  let simulator: PaymentWorker;
  beforeAll(async () => {
    // Long enough to observe PENDING right after the submission, short enough to keep tests quick.
    t = await buildTestApp(store, { SANDBOX_SETTLE_MS: '1000' });
    await ensureCatalog(t);
    simulator = startPayments(t.ctx, t.app.log);
  });
  afterAll(async () => {
    await simulator.stop();
    await t.close();
  });

  const paymentStatus = async (partner: Partner, orderId: string) => {
    const res = await signedInject(t.app, partner, { method: 'GET', url: `/v1/payment/status/${orderId}` });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().message).toBe('Transaction status retrieved successfully');
    return res.json().data as Status;
  };
  const settled = (partner: Partner, orderId: string) =>
    waitFor(
      async () => {
        const status = await paymentStatus(partner, orderId);
        return status.payment?.status === 'PENDING' ? undefined : status;
      },
      10_000,
      `order ${orderId} to settle`,
    );

  /** HOME → STOCKS → Next → SELECT_STOCK → BUY_AMOUNT → BUY_CONFIRM → BUY_SUBMITTED. */
  async function buyFromPageTwo(partner: Partner, customerId: string, amount: string) {
    const client = ussdClient(t, partner);
    const page2 = await client.walk(customerId, ['1', '7']);
    expect(page2.currentState).toBe('STOCKS');
    expect(page2.menu.text).toMatch(/\(page 2\//);
    const option = page2.menu.options[0];
    expect(option?.nextState).toBe('SELECT_STOCK');
    const steps: [string, string][] = [
      ['1', 'SELECT_STOCK'],
      ['1', 'BUY_AMOUNT'],
      [amount, 'BUY_CONFIRM'],
      ['1', 'BUY_SUBMITTED'],
    ];
    let data: UssdData = page2;
    for (const [choice, state] of steps) {
      const res = await client.press(data.sessionId, choice);
      expect(res.statusCode, res.body).toBe(200);
      data = res.json().data;
      expect(data.currentState, data.ussdText).toBe(state);
    }
    return { submitted: data, stock: option?.data as { stockId: string; symbol: string } };
  }

  it('a buy is collected, then executed: status PENDING → SUCCESS and the portfolio shows the units', async () => {
    const partner = await createPartner(t);
    const customerId = await insertCustomer(t, partner, { msisdn: '254712000001' });
    const { submitted, stock } = await buyFromPageTwo(partner, customerId, '1000');
    expect(submitted.menu).toMatchObject({ isEndState: true, options: [] });
    expect(submitted.menu.text).toMatch(
      /^Request received\. Approve the payment prompt on your phone\. Ref c[a-z0-9]{24}$/,
    );
    const orderId = refOf(submitted);

    const first = await paymentStatus(partner, orderId);
    expect(first).toEqual({
      orderId,
      payment: {
        id: expect.any(String),
        type: 'INCOMING',
        amount: '1000.00',
        currency: 'KES',
        status: 'PENDING',
        provider: 'MPESA',
      },
    });
    const done = await settled(partner, orderId);
    expect(done.payment?.status).toBe('SUCCESS');

    const order = await orderRow(t, orderId);
    expect(order).toMatchObject({ side: 'BUY', status: 'EXECUTED', amount: '1000.00' });
    // The SQL execution buys what the money module's rule gives: amount / price, rounded down.
    const units = unitsFor(money('1000', 'KES'), parseDecimal(order?.price ?? ''));
    expect(order?.quantity).toBe(units.toFixed(4));
    const [holding] = await t.ctx.database.db
      .select()
      .from(holdings)
      .where(and(eq(holdings.customerId, customerId), eq(holdings.stockId, stock.stockId)));
    expect(holding?.units).toBe(units.toFixed(4));

    const portfolio = await ussdClient(t, partner).walk(customerId, ['2']);
    const shown = plain(units);
    expect(portfolio.menu.text).toContain(`${stock.symbol} ${shown} units`);
    expect(portfolio.menu.text).toContain('Open requests: 0');

    // The session ended with the submission.
    const after = await ussdClient(t, partner).press(submitted.sessionId, '0');
    expect(after.statusCode).toBe(400);
    expect(after.json()).toEqual({ error: 'Bad Request', message: 'USSD session is no longer active' });
  });

  it('a magic failing amount (whole part ending in 01) ends FAILED', async () => {
    const partner = await createPartner(t);
    const customerId = await insertCustomer(t, partner, { msisdn: '254733000002' });
    const { submitted } = await buyFromPageTwo(partner, customerId, '1001');
    const orderId = refOf(submitted);
    const done = await settled(partner, orderId);
    expect(done.payment).toMatchObject({ status: 'FAILED', provider: 'AIRTEL_MONEY', amount: '1001.00' });
    expect(await orderRow(t, orderId)).toMatchObject({ status: 'FAILED', quantity: null });
    const positions = await t.ctx.database.db
      .select()
      .from(holdings)
      .where(eq(holdings.customerId, customerId));
    expect(positions).toHaveLength(0);
  });

  it('an amount ending in 02 stays PENDING (the prompt was never answered) and shows as an open request', async () => {
    const partner = await createPartner(t);
    const customerId = await insertCustomer(t, partner);
    const { submitted } = await buyFromPageTwo(partner, customerId, '1002');
    const orderId = refOf(submitted);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await paymentStatus(partner, orderId)).payment?.status).toBe('PENDING');
    expect(await orderRow(t, orderId)).toMatchObject({ status: 'PENDING_PAYMENT' });
    const portfolio = await ussdClient(t, partner).walk(customerId, ['2']);
    expect(portfolio.menu.text).toContain('Open requests: 1');
  });
});
