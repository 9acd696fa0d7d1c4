import { createId } from '@partner-api/contract';
import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { adminInject } from '@partner-api/testkit/helpers.ts';
import { createPartner } from '@partner-api/testkit/partner.ts';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { one, run } from '../../src/db/query.ts';
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
    const client = ussdClient(t, partner);
    const bought = await client.walk(customerId, ['1', '8', 'ZZBUY', '1', '1', '100', '1']);
    const buyId = refOf(bought);
    await waitFor(async () => ((await orderRow(t, buyId))?.status === 'EXECUTED' ? true : undefined));
    const sold = await client.walk(customerId, ['1', '8', 'ZZBUY', '1', '2', '3', '1']);
    expect(sold.currentState, sold.menu.text).toBe('SELL_SUBMITTED');

    const entries = await one<{ kinds: string; units: string }>(
      t.ctx.database.db,
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
    // A holding written around the ledger, and an executed buy no collection paid for.
    await run(
      t.ctx.database.db,
      sql`insert into holdings (organization_id, customer_id, stock_id, units)
    values (${partner.organizationId}, ${customerId}, ${ids.sell}, 2)`,
    );
    const orderId = createId();
    await run(
      t.ctx.database.db,
      sql`insert into orders (id, organization_id, customer_id, stock_id, side, status, amount, currency, quantity, price)
    values (${orderId}, ${partner.organizationId}, ${customerId}, ${ids.sell}, 'BUY', 'EXECUTED', 80, 'KES', 2, 40)`,
    );
    const checked = await check(partner.organizationId);
    expect(checked.balanced).toBe(false);
    expect(checked.differences).toEqual([
      { kind: 'HOLDING', customerId, symbol: 'ZZSELL', holding: '2.0000', ledger: '0' },
      { kind: 'BUY_WITHOUT_COLLECTION', orderId, collections: 0 },
      { kind: 'EXECUTION_MISSING', orderId },
    ]);
    // Another organization's differences are not its: its check still balances.
    expect(await check(balancedOrg)).toEqual({ balanced: true, differences: [] });
  });
});
