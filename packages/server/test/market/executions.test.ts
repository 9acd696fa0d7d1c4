import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { createPartner } from '@partner-api/testkit/partner.ts';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { one } from '../../src/db/query.ts';
import { NSE, settlementDate } from '../../src/services/market/calendar.ts';
import { settleDueExecutions } from '../../src/services/orders/life.ts';
import { startPayments } from '../../src/services/payments/pipeline/start.ts';
import type { PaymentWorker } from '../../src/services/payments/pipeline/worker.ts';
import {
  ensureCatalog,
  insertCustomer,
  insertHolding,
  orderRow,
  refOf,
  ussdClient,
  waitFor,
} from '../ussd/support.ts';

type Execution = {
  side: string;
  units: string;
  price: string;
  executedAt: string;
  settlementDate: string;
  status: string;
  settledAt: string | null;
};

describeStores('executions of USSD orders on %s', (store) => {
  let t: TestApp;
  let ids: Awaited<ReturnType<typeof ensureCatalog>>;
  let simulator: PaymentWorker;
  beforeAll(async () => {
    t = await buildTestApp(store, { SANDBOX_SETTLE_MS: '200' });
    ids = await ensureCatalog(t);
    simulator = startPayments(t.ctx, t.app.log);
  });
  afterAll(async () => {
    await simulator.stop();
    await t.close();
  });

  const executionOf = (orderId: string) =>
    one<Execution>(
      t.ctx.database.db,
      sql`select side, units::text as units, price::text as price, executed_at::text as "executedAt",
    settlement_date as "settlementDate", status, settled_at::text as "settledAt"
  from executions where order_id = ${orderId}`,
    );
  /** T+3 trading days of the NSE from the execution's time (no holidays are set in these tests). */
  const tPlus3 = (executedAt: string) => settlementDate(NSE, new Date(executedAt), new Set());

  it('a sell records its execution at once: units, price, FILLED, settling T+3 trading days later', async () => {
    const partner = await createPartner(t);
    const customerId = await insertCustomer(t, partner);
    await insertHolding(t, partner, customerId, ids.sell, '10');
    const screen = await ussdClient(t, partner).walk(customerId, ['1', '8', 'ZZSELL', '1', '2', '3', '1']);
    expect(screen.currentState, screen.menu.text).toBe('SELL_SUBMITTED');
    const execution = await executionOf(refOf(screen));
    expect(execution).toMatchObject({ side: 'SELL', units: '3.0000', price: '40.0000', status: 'FILLED' });
    expect(execution?.settlementDate).toBe(tPlus3(execution!.executedAt));
  });

  it('a buy records its execution once paid, with the units and price of its order', async () => {
    const partner = await createPartner(t);
    const customerId = await insertCustomer(t, partner);
    const screen = await ussdClient(t, partner).walk(customerId, ['1', '8', 'ZZBUY', '1', '1', '100', '1']);
    expect(screen.currentState, screen.menu.text).toBe('BUY_SUBMITTED');
    const orderId = refOf(screen);
    const order = await waitFor(async () => {
      const row = await orderRow(t, orderId);
      return row?.status === 'EXECUTED' ? row : undefined;
    });
    const execution = await executionOf(orderId);
    expect(execution).toMatchObject({
      side: 'BUY',
      units: order.quantity,
      price: order.price,
      status: 'FILLED',
    });
    expect(execution?.settlementDate).toBe(tPlus3(execution!.executedAt));
  });

  it('an execution is SETTLED once its settlement date has come, not before', async () => {
    const partner = await createPartner(t);
    const customerId = await insertCustomer(t, partner);
    await insertHolding(t, partner, customerId, ids.sell, '5');
    const screen = await ussdClient(t, partner).walk(customerId, ['1', '8', 'ZZSELL', '1', '2', '1', '1']);
    const orderId = refOf(screen);
    const { settlementDate: due } = (await executionOf(orderId))!;
    // The evening before the settlement date (Nairobi): nothing yet.
    const eve = new Date(new Date(`${due}T00:00:00+03:00`).getTime() - 60_000);
    await settleDueExecutions(t.ctx.database.db, eve);
    expect((await executionOf(orderId))?.status).toBe('FILLED');
    await settleDueExecutions(t.ctx.database.db, new Date(`${due}T09:00:00+03:00`));
    expect(await executionOf(orderId)).toMatchObject({ status: 'SETTLED', settledAt: expect.any(String) });
  });
});
