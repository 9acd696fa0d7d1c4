import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { createPartner } from '@partner-api/testkit/partner.ts';
import { count, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { orders, transactions } from '../../src/db/schema.ts';
import { createAdapterRegistry } from '../../src/services/payments/registry.ts';
import { ensureCatalog, insertCustomer, insertHolding, type UssdData, ussdClient } from './support.ts';

/**
 * Production with no provider for the customer's network (docs/payments.md): the confirm screen
 * says so, offers only `0 Home`, and no order or transaction is ever created.
 */
describeStores('USSD when no provider serves the network, on %s', (store) => {
  let t: TestApp;
  let stockIds: Awaited<ReturnType<typeof ensureCatalog>>;
  beforeAll(async () => {
    t = await buildTestApp(store);
    stockIds = await ensureCatalog(t);
    // The production registry without any M-Pesa configuration: no network has a provider.
    t.ctx.registry = createAdapterRegistry({ config: { APP_ENV: 'production', SANDBOX_SETTLE_MS: 3000 } });
  });
  afterAll(() => t.close());

  const ordersOf = async (customerId: string) =>
    (await t.ctx.database.db.select({ n: count() }).from(orders).where(eq(orders.customerId, customerId)))[0]
      ?.n;
  /** Each test's number is its own, so a transaction to or from it would be this test's. */
  const transactionsTo = async (msisdn: string) =>
    (
      await t.ctx.database.db.select({ n: count() }).from(transactions).where(eq(transactions.msisdn, msisdn))
    )[0]?.n;

  it.each([
    ['an M-Pesa number', '254712000901', 'M-Pesa'],
    ['an Airtel number', '254733000902', 'Airtel Money'],
  ])('buy and sell confirm screens refuse for %s; nothing is created', async (_, msisdn, network) => {
    const partner = await createPartner(t);
    const customerId = await insertCustomer(t, partner, { msisdn });
    await insertHolding(t, partner, customerId, stockIds.sell, '10.5000');
    const client = ussdClient(t, partner);
    const notAvailable = `Payments from ${network} are not available yet.`;

    const buy = await client.walk(customerId, ['1', '8', 'ZZBUY', '1', '1', '500']);
    expect(buy.currentState).toBe('BUY_CONFIRM');
    expect(buy.menu.text).toBe(`Buy ZZBUY for KES 500.00\n${notAvailable}`);
    expect(buy.ussdText.length).toBeLessThanOrEqual(182);
    expect(buy.menu.options.map((o) => `${o.key} ${o.label}`)).toEqual(['0 Home']);
    const pressed = (await client.press(buy.sessionId, '1')).json().data as UssdData;
    expect(pressed.currentState).toBe('BUY_CONFIRM');
    const home = (await client.press(buy.sessionId, '0')).json().data as UssdData;
    expect(home.currentState).toBe('HOME');

    const sell = await client.walk(customerId, ['1', '8', 'ZZSELL', '1', '2', '3']);
    expect(sell.currentState).toBe('SELL_CONFIRM');
    expect(sell.menu.text).toBe(`Sell 3 ZZSELL units\n${notAvailable}`);
    const sold = (await client.press(sell.sessionId, '1')).json().data as UssdData;
    expect(sold.currentState).toBe('SELL_CONFIRM');

    expect(await ordersOf(customerId)).toBe(0);
    expect(await transactionsTo(msisdn)).toBe(0);
  });

  it('the sandbox registry serves every network', () => {
    const sandbox = createAdapterRegistry({ config: { APP_ENV: 'sandbox', SANDBOX_SETTLE_MS: 3000 } });
    for (const n of ['MPESA', 'AIRTEL_MONEY', 'MTN_MOMO'] as const) expect(sandbox(n)?.name).toBe('sandbox');
  });
});

describe('the production registry', () => {
  it('serves M-Pesa by Daraja when it is configured, and no other network', () => {
    const config = loadConfig({
      MPESA_CONSUMER_KEY: 'k',
      MPESA_CONSUMER_SECRET: 's',
      MPESA_SHORTCODE: '174379',
      MPESA_PASSKEY: 'p',
      MPESA_B2C_SHORTCODE: '600000',
      MPESA_INITIATOR_NAME: 'apiop',
      MPESA_SECURITY_CREDENTIAL: 'c',
      MPESA_CALLBACK_TOKEN: 'a'.repeat(32),
      MPESA_RECONCILE_AFTER_SECONDS: '45',
    });
    const registry = createAdapterRegistry({
      config: { APP_ENV: 'production', SANDBOX_SETTLE_MS: 3000, mpesa: config.mpesa },
    });
    expect(registry('MPESA')).toMatchObject({ name: 'mpesa', reconcileAfterMs: 45_000 });
    expect(registry('AIRTEL_MONEY')).toBeUndefined();
    expect(registry('MTN_MOMO')).toBeUndefined();
  });
});
