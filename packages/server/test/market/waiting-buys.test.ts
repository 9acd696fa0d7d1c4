import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { createPartner } from '@partner-api/testkit/partner.ts';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { one, rows } from '../../src/db/query.ts';
import { checkLedger } from '../../src/services/market/ledger-check.ts';
import { recordPrice } from '../../src/services/market/prices.ts';
import { executeWaitingBuys } from '../../src/services/orders/life.ts';
import { applyProviderResult } from '../../src/services/payments/apply-callback.ts';
import { upsertStocks } from '../../src/services/stocks/upsert.ts';
import {
  insertCustomer,
  orderRow,
  refOf,
  transactionsOf,
  type UssdData,
  ussdClient,
} from '../ussd/support.ts';

const eat = (local: string) => new Date(`${local}+03:00`);

/**
 * A buy confirmed in the session whose payment lands after the close (or at a stale price): the
 * money is kept for the order, which waits PAID and executes at the first fresh price of the next
 * session; or the customer cancels it and the money goes back (docs/ussd-and-payments.md,
 * "Orders and market hours").
 */
describeStores('a paid buy waits for the session and a fresh price on %s', (store) => {
  let t: TestApp;
  const SYMBOL = `ZZWB${Math.random().toString(36).slice(2, 6).toUpperCase()}`;
  beforeAll(async () => {
    t = await buildTestApp(store, { MARKET_HOURS: 'enforced', PRICE_MAX_AGE_SECONDS: '900' });
    await upsertStocks(t.ctx.database.db, [
      { symbol: SYMBOL, name: 'Waiting Buy Test Ltd', price: '25.0000', currency: 'KES' },
    ]);
  });
  afterAll(() => t?.close());

  const priceAt = (price: string, asOf: Date) =>
    t.ctx.database.db.transaction((tx) => recordPrice(tx, { symbol: SYMBOL, price, asOf, source: 'EDIT' }));
  /** The payment's result, as the pipeline or a callback hands it over. */
  const settle = (transactionId: string, status: 'SUCCESS' | 'FAILED') =>
    t.ctx.database.db.transaction((tx) =>
      applyProviderResult(tx, { transactionId, status, providerReference: `REF${transactionId}` }, t.ctx),
    );
  const moneyOf = (orderId: string) =>
    rows<{ kind: string; amount: string }>(
      t.ctx.database.db,
      sql`select kind, amount::text as amount from money_entries where order_id = ${orderId} order by created_at, kind`,
    );

  /** A customer confirms a KES 1,000 buy at 14:58 on a Wednesday; the payment lands at 15:05. */
  async function paidAfterTheClose() {
    const partner = await createPartner(t);
    const customerId = await insertCustomer(t, partner);
    await priceAt('25.0000', eat('2026-12-02T14:50'));
    t.ctx.clock = () => eat('2026-12-02T14:58');
    const client = ussdClient(t, partner);
    const submitted = await client.walk(customerId, ['1', '8', SYMBOL, '1', '1', '1000', '1']);
    expect(submitted.currentState).toBe('BUY_SUBMITTED');
    const orderId = refOf(submitted);
    const [collection] = await transactionsOf(t, orderId);
    t.ctx.clock = () => eat('2026-12-02T15:05');
    await settle(collection!.id, 'SUCCESS');
    return { partner, customerId, client, orderId };
  }

  it('paid after the close: PAID with the money entered, executed at the next session’s first fresh price', async () => {
    const { partner, orderId } = await paidAfterTheClose();
    expect(await orderRow(t, orderId)).toMatchObject({ status: 'PAID', quantity: null });
    expect(await moneyOf(orderId)).toEqual([{ kind: 'COLLECTION', amount: '1000.00' }]);
    expect(await checkLedger(t.ctx.database.db, partner.organizationId)).toEqual([]);

    // Still closed; then the next morning in the session, but at yesterday's (stale) price.
    t.ctx.clock = () => eat('2026-12-02T15:10');
    await executeWaitingBuys(t.ctx.database.db, t.ctx);
    t.ctx.clock = () => eat('2026-12-03T09:35');
    await executeWaitingBuys(t.ctx.database.db, t.ctx);
    expect(await orderRow(t, orderId)).toMatchObject({ status: 'PAID' });

    // The feed's first price of the morning: the order executes at it.
    await priceAt('26.0000', eat('2026-12-03T09:32'));
    expect(await executeWaitingBuys(t.ctx.database.db, t.ctx)).toBeGreaterThanOrEqual(1);
    expect(await orderRow(t, orderId)).toMatchObject({
      status: 'EXECUTED',
      price: '26.0000',
      quantity: '38.4615',
    });
    const execution = await one<{ price: string; asOf: string; status: string }>(
      t.ctx.database.db,
      sql`select price::text as price, price_as_of as "asOf", status from executions where order_id = ${orderId}`,
    );
    expect(execution).toMatchObject({ price: '26.0000', status: 'FILLED' });
    expect(new Date(execution!.asOf).toISOString()).toBe(eat('2026-12-03T09:32').toISOString());
    expect(await checkLedger(t.ctx.database.db, partner.organizationId)).toEqual([]);
    // Executed once: another sweep finds nothing of it to do.
    await executeWaitingBuys(t.ctx.database.db, t.ctx);
    expect(
      await one<{ n: number }>(
        t.ctx.database.db,
        sql`select count(*)::int as n from ledger_entries where order_id = ${orderId}`,
      ),
    ).toEqual({ n: 1 });
  });

  it('a waiting order cancelled by the customer is refunded and never executes', async () => {
    const { partner, customerId, client, orderId } = await paidAfterTheClose();
    const portfolio = await client.walk(customerId, ['2']);
    expect(portfolio.menu.text).toContain('Open requests: 1');
    const requests = (await client.press(portfolio.sessionId, '1')).json().data as UssdData;
    const details = (await client.press(requests.sessionId, '1')).json().data as UssdData;
    const confirm = (await client.press(details.sessionId, '1')).json().data as UssdData;
    expect(confirm.currentState).toBe('CANCEL_REQUEST_CONFIRMATION');
    await client.press(confirm.sessionId, '1');
    expect(await orderRow(t, orderId)).toMatchObject({ status: 'CANCELLED' });

    // The morning's fresh price does not execute it; the refund goes out and is paid.
    t.ctx.clock = () => eat('2026-12-03T09:40');
    await priceAt('26.0000', eat('2026-12-03T09:33'));
    await executeWaitingBuys(t.ctx.database.db, t.ctx);
    expect(await orderRow(t, orderId)).toMatchObject({ status: 'CANCELLED', quantity: null });
    const refund = (await transactionsOf(t, orderId)).find((x) => x.type === 'OUTGOING');
    expect(refund).toMatchObject({ status: 'PENDING', amount: '1000.00' });
    // While the refund is on its way, the money held for the order is not a difference.
    expect(await checkLedger(t.ctx.database.db, partner.organizationId)).toEqual([]);
    await settle(refund!.id, 'SUCCESS');
    expect(await moneyOf(orderId)).toEqual([
      { kind: 'COLLECTION', amount: '1000.00' },
      { kind: 'REFUND', amount: '-1000.00' },
    ]);
    expect(await checkLedger(t.ctx.database.db, partner.organizationId)).toEqual([]);
  });

  it('a refund that fails is listed by the ledger check until the money goes back', async () => {
    const { partner, customerId, client, orderId } = await paidAfterTheClose();
    const portfolio = await client.walk(customerId, ['2']);
    const requests = (await client.press(portfolio.sessionId, '1')).json().data as UssdData;
    const details = (await client.press(requests.sessionId, '1')).json().data as UssdData;
    const confirm = (await client.press(details.sessionId, '1')).json().data as UssdData;
    await client.press(confirm.sessionId, '1');
    const refund = (await transactionsOf(t, orderId)).find((x) => x.type === 'OUTGOING');
    await settle(refund!.id, 'FAILED');
    expect(await checkLedger(t.ctx.database.db, partner.organizationId)).toEqual([
      { kind: 'MONEY_HELD', orderId, status: 'CANCELLED', held: '1000.00', expected: '0' },
    ]);
  });
});
