import { randomBytes } from 'node:crypto';
import { createId } from '@partner-api/contract';
import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { createPartner } from '@partner-api/testkit/partner.ts';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildAdminApp } from '../../src/admin/app.ts';
import { stocks } from '../../src/db/schema.ts';
import { seedSandbox } from '../../src/services/sandbox/seed.ts';
import { NSE_STOCKS } from '../../src/services/stocks/nse-catalog.ts';
import { upsertStocks } from '../../src/services/stocks/upsert.ts';
import { ensureCatalog, insertCustomer, orderRow } from '../ussd/support.ts';
import { adminCaller, placePendingBuy } from './support.ts';

const uniqueSymbol = () => `T${randomBytes(4).toString('hex').toUpperCase()}`;

describeStores('admin API for stocks, orders and settlement on %s', (store) => {
  let t: TestApp;
  let stockIds: Awaited<ReturnType<typeof ensureCatalog>>;
  beforeAll(async () => {
    t = await buildTestApp(store);
    stockIds = await ensureCatalog(t);
  });
  afterAll(() => t.close());

  const admin = adminCaller(() => t);

  it('POST /admin/stocks upserts by symbol', async () => {
    const symbol = uniqueSymbol();
    const created = await admin('POST', '/admin/stocks', [
      { symbol: symbol.toLowerCase(), name: 'Test Co', price: 12.5, currency: 'kes' },
    ]);
    expect(created.statusCode, created.body).toBe(200);
    expect(created.json()).toEqual([
      expect.objectContaining({ symbol, name: 'Test Co', price: '12.5000', currency: 'KES', isActive: true }),
    ]);
    const updated = await admin('POST', '/admin/stocks', [{ symbol, name: 'Test Company', price: '13.25' }]);
    expect(updated.json()[0]).toMatchObject({
      id: created.json()[0].id,
      name: 'Test Company',
      price: '13.2500',
    });
    const rows = await t.ctx.database.db.select().from(stocks).where(eq(stocks.symbol, symbol));
    expect(rows).toHaveLength(1);

    // The sandbox seed only adds missing symbols: an imported price survives a restart.
    await upsertStocks(t.ctx.database.db, [{ symbol, name: 'Seed', price: '1', currency: 'KES' }], 'keep');
    const [kept] = await t.ctx.database.db.select().from(stocks).where(eq(stocks.symbol, symbol));
    expect(kept).toMatchObject({ name: 'Test Company', price: '13.2500' });
    await admin('POST', '/admin/stocks', [{ symbol, name: 'Test Company', price: '13.25', isActive: false }]);
  });

  it('POST /admin/stocks validates every row', async () => {
    const res = await admin('POST', '/admin/stocks', [{ symbol: 'bad symbol!', name: '', price: '0' }]);
    expect(res.statusCode).toBe(400);
    expect(
      res
        .json()
        .details.map((d: { field: string }) => d.field)
        .sort(),
    ).toEqual(['0.name', '0.price', '0.symbol']);
    expect((await admin('POST', '/admin/stocks', [])).statusCode).toBe(400);
  });

  it('POST /admin/stocks takes a JSON number price only while a float holds it exactly (15 digits)', async () => {
    const symbol = uniqueSymbol();
    const row = (price: unknown) => [{ symbol, name: 'Float Co', price }];
    const long = await admin('POST', '/admin/stocks', row(1234567890.123456));
    expect(long.statusCode).toBe(400);
    expect(long.json().details).toEqual([
      expect.objectContaining({
        field: '0.price',
        message: 'must be sent as a string when it has more than 15 digits',
      }),
    ]);
    const asText = await admin('POST', '/admin/stocks', row('1234567890.1234'));
    expect(asText.statusCode).toBe(200);
    expect(asText.json()).toEqual([expect.objectContaining({ price: '1234567890.1234' })]);
    const malformed = await admin('POST', '/admin/stocks', row('1\u00002'));
    expect(malformed.statusCode).toBe(400);
  });

  it('the sandbox seed lists the NSE catalog, idempotently', async () => {
    await seedSandbox({ db: t.ctx.database.db, dataDir: t.dataDir, baseUrl: 'http://localhost:8080' });
    await seedSandbox({ db: t.ctx.database.db, dataDir: t.dataDir, baseUrl: 'http://localhost:8080' });
    const listed = await t.ctx.database.db.select().from(stocks);
    for (const { symbol } of NSE_STOCKS) {
      expect(
        listed.filter((s) => s.symbol === symbol),
        symbol,
      ).toHaveLength(1);
    }
    expect(NSE_STOCKS.length).toBeGreaterThanOrEqual(20);
  });

  it('GET /admin/orders lists an organization’s orders with their transactions', async () => {
    const partner = await createPartner(t);
    const customerId = await insertCustomer(t, partner);
    const { orderId, transactionId } = await placePendingBuy(t, partner, {
      customerId,
      stockId: stockIds.buy,
      amount: '500.00',
    });
    const other = await createPartner(t);
    const otherCustomer = await insertCustomer(t, other);
    await placePendingBuy(t, other, { customerId: otherCustomer, stockId: stockIds.buy, amount: '600.00' });
    const res = await admin('GET', `/admin/orders?organizationId=${partner.organizationId}`);
    expect(res.statusCode).toBe(200);
    const list = res.json();
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({
      id: orderId,
      organizationId: partner.organizationId,
      symbol: 'ZZBUY',
      side: 'BUY',
      status: 'PENDING_PAYMENT',
      amount: '500.00',
      transactions: [{ id: transactionId, type: 'INCOMING', status: 'PENDING', amount: '500.00' }],
    });
    expect((await admin('GET', '/admin/orders?limit=0')).statusCode).toBe(400);
  });

  it('POST /admin/transactions/{id}/settle settles by hand through the apply-once path', async () => {
    const partner = await createPartner(t);
    const customerId = await insertCustomer(t, partner);
    const paid = await placePendingBuy(t, partner, { customerId, stockId: stockIds.buy, amount: '250.00' });
    const ok = await admin('POST', `/admin/transactions/${paid.transactionId}/settle`, { status: 'SUCCESS' });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json()).toMatchObject({ id: paid.transactionId, status: 'SUCCESS' });
    expect(ok.json().providerReference).toMatch(/^MANUAL-/);
    expect(await orderRow(t, paid.orderId)).toMatchObject({ status: 'EXECUTED', quantity: '10.0000' });

    const again = await admin('POST', `/admin/transactions/${paid.transactionId}/settle`, {
      status: 'FAILED',
    });
    expect(again.statusCode).toBe(409);
    expect(again.json()).toEqual({ error: 'Conflict', message: 'Transaction is already settled (SUCCESS)' });

    const failing = await placePendingBuy(t, partner, {
      customerId,
      stockId: stockIds.buy,
      amount: '300.00',
    });
    const failed = await admin('POST', `/admin/transactions/${failing.transactionId}/settle`, {
      status: 'FAILED',
      reason: 'customer cancelled the prompt',
    });
    expect(failed.json()).toMatchObject({ status: 'FAILED', failureReason: 'customer cancelled the prompt' });
    expect(await orderRow(t, failing.orderId)).toMatchObject({ status: 'FAILED' });

    const unknown = await admin('POST', `/admin/transactions/${createId()}/settle`, { status: 'SUCCESS' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ error: 'Not found', message: 'Transaction not found' });
    const invalid = await admin('POST', `/admin/transactions/${createId()}/settle`, { status: 'DONE' });
    expect(invalid.statusCode).toBe(400);
  });

  it('production has no hand settlement', async () => {
    const production = await buildAdminApp(
      { ...t.ctx, config: { ...t.ctx.config, APP_ENV: 'production' } },
      { logger: false },
    );
    const res = await production.inject({
      method: 'POST',
      url: `/admin/transactions/${createId()}/settle`,
      payload: { status: 'SUCCESS' },
      headers: { authorization: `Bearer ${t.ctx.secrets.adminToken}` },
    });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: 'Not Found' });
    await production.close();
  });
});
