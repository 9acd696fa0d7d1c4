import { createId } from '@partner-api/contract';
import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { adminInject } from '@partner-api/testkit/helpers.ts';
import { createPartner } from '@partner-api/testkit/partner.ts';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { one, rows, run } from '../../src/db/query.ts';
import { settleDueExecutions } from '../../src/services/orders/life.ts';
import { startPayments } from '../../src/services/payments/pipeline/start.ts';
import type { PaymentWorker } from '../../src/services/payments/pipeline/worker.ts';
import { ensureCatalog, insertCustomer, orderRow, refOf, ussdClient, waitFor } from '../ussd/support.ts';

describeStores('the units ledger and its check on %s', (store) => {
  let t: TestApp;
  let ids: Awaited<ReturnType<typeof ensureCatalog>>;
  let simulator: PaymentWorker;
  /** The organization of the first test, whose book balances. */
  let balancedOrg: string;
  beforeAll(async () => {
    t = await buildTestApp(store, { SANDBOX_SETTLE_MS: '200' });
    ids = await ensureCatalog(t);
    simulator = startPayments(t.ctx, t.app.log);
  });
  afterAll(async () => {
    await simulator.stop();
    await t.close();
  });

  const check = async (organizationId: string) => {
    const res = await adminInject(t, 'GET', `/admin/ledger/check?organizationId=${organizationId}`);
    expect(res.statusCode).toBe(200);
    return res.json().data as { balanced: boolean; differences: Record<string, unknown>[] };
  };

  it('a buy then a sell through USSD: the ledger equals the holding, each order has its money', async () => {
    const partner = await createPartner(t);
    const customerId = await insertCustomer(t, partner);
    const db = t.ctx.database.db;
    const client = ussdClient(t, partner);
    const bought = await client.walk(customerId, ['1', '8', 'ZZBUY', '1', '1', '100', '1']);
    const buyId = refOf(bought);
    await waitFor(async () => ((await orderRow(t, buyId))?.status === 'EXECUTED' ? true : undefined));
    const holding = () =>
      one<{ units: string; pending: string }>(
        db,
        sql`select units::text as units, pending_units::text as pending from holdings
      where customer_id = ${customerId} and stock_id = ${ids.buy}`,
      );
    // Bought units wait for settlement: held, not available to sell.
    expect(await holding()).toEqual({ units: '4.0000', pending: '4.0000' });
    const early = await client.walk(customerId, ['1', '8', 'ZZBUY', '1', '2']);
    expect(early.menu.text).toBe(
      '4 ZZBUY units are pending settlement and can be sold once settled (3 trading days after the buy).',
    );
    expect(early.currentState).toBe('SELL_QUANTITY');
    expect(await settleDueExecutions(db, new Date(Date.now() + 8 * 86_400_000))).toBeGreaterThan(0);
    expect(await holding()).toEqual({ units: '4.0000', pending: '0.0000' });

    const sold = await client.walk(customerId, ['1', '8', 'ZZBUY', '1', '2', '3', '1']);
    expect(sold.currentState, sold.menu.text).toBe('SELL_SUBMITTED');
    const sellId = refOf(sold);
    const money = () =>
      rows<{ kind: string; amount: string }>(
        db,
        sql`select kind, amount::text as amount from money_entries where customer_id = ${customerId}
      order by created_at, kind`,
      );
    await waitFor(async () => ((await money()).length === 2 ? true : undefined));
    expect(await money()).toEqual([
      { kind: 'COLLECTION', amount: '100.00' },
      { kind: 'PAYOUT', amount: '-75.00' },
    ]);
    expect(await orderRow(t, sellId)).toMatchObject({ status: 'EXECUTED' });

    const entries = await one<{ kinds: string; units: string }>(
      db,
      sql`select string_agg(kind, ',' order by created_at, kind) as kinds, sum(units)::text as units
    from ledger_entries where customer_id = ${customerId} and stock_id = ${ids.buy}`,
    );
    expect(entries).toEqual({ kinds: 'BUY,SELL', units: '1.0000' });
    expect(await check(partner.organizationId)).toEqual({ balanced: true, differences: [] });
    balancedOrg = partner.organizationId;
  });

  it('lists a holding that differs from its entries and an executed order without its money', async () => {
    const partner = await createPartner(t);
    const customerId = await insertCustomer(t, partner);
    // A holding written around the ledger (one unit marked pending with no execution), and an
    // executed buy with no execution whose collection was paid but never entered in the money ledger.
    await run(
      t.ctx.database.db,
      sql`insert into holdings (organization_id, customer_id, stock_id, units, pending_units)
    values (${partner.organizationId}, ${customerId}, ${ids.sell}, 2, 1)`,
    );
    const orderId = createId();
    const transactionId = createId();
    await run(
      t.ctx.database.db,
      sql`insert into orders (id, organization_id, customer_id, stock_id, side, status, amount, currency, quantity, price)
    values (${orderId}, ${partner.organizationId}, ${customerId}, ${ids.sell}, 'BUY', 'EXECUTED', 80, 'KES', 2, 40)`,
    );
    await run(
      t.ctx.database.db,
      sql`insert into transactions (id, organization_id, order_id, type, amount, currency, status, provider, msisdn)
    values (${transactionId}, ${partner.organizationId}, ${orderId}, 'INCOMING', 80, 'KES', 'SUCCESS', 'MPESA', '254700000001')`,
    );
    const checked = await check(partner.organizationId);
    expect(checked.balanced).toBe(false);
    expect(checked.differences).toEqual([
      { kind: 'HOLDING', customerId, symbol: 'ZZSELL', holding: '2.0000', ledger: '0' },
      { kind: 'PENDING', customerId, symbol: 'ZZSELL', pending: '1.0000', unsettled: '0' },
      { kind: 'MONEY_ENTRY', transactionId, orderId, amount: '80.00', entered: null },
      { kind: 'MONEY_HELD', orderId, status: 'EXECUTED', held: '0', expected: '80.00' },
      { kind: 'EXECUTION_MISSING', orderId },
    ]);
    // Another organization's differences are not its: its check still balances.
    expect(await check(balancedOrg)).toEqual({ balanced: true, differences: [] });
  });
});
