import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { createPartner } from '@partner-api/testkit/partner.ts';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { upsertStocks } from '../../src/services/stocks/upsert.ts';
import {
  ensureCatalog,
  FIXTURES,
  insertCustomer,
  insertHolding,
  keyOf,
  refOf,
  type UssdData,
  ussdClient,
} from './support.ts';

/** A stock priced in Uganda shillings beside the Kenyan fixtures (symbols starting ZZ list last). */
const UGX_STOCK = { symbol: 'ZZUGX', name: 'Zulu Uganda Test Holdings', price: '50.0000', currency: 'UGX' };

// Every amount on every screen carries the currency of its own stock, holding or order: a UGX
// holding was shown as "KES 500.00" on the portfolio, and a UGX order as KES on its details.
describeStores('USSD screens show each amount in its own currency on %s', (store) => {
  let t: TestApp;
  let ids: { ugx: string; kes: string };
  beforeAll(async () => {
    t = await buildTestApp(store);
    const fixtures = await ensureCatalog(t);
    const [ugx] = await upsertStocks(t.ctx.database.db, [UGX_STOCK], 'replace');
    ids = { ugx: ugx!.id, kes: fixtures.sell };
  });
  afterAll(() => t.close());

  async function customerWithBoth() {
    const partner = await createPartner(t);
    const customerId = await insertCustomer(t, partner, { msisdn: '254711000555' });
    await insertHolding(t, partner, customerId, ids.ugx, '10');
    await insertHolding(t, partner, customerId, ids.kes, '2.5');
    return { customerId, client: ussdClient(t, partner) };
  }

  it('the portfolio values a UGX holding in UGX and a KES holding in KES', async () => {
    const { customerId, client } = await customerWithBoth();
    const portfolio = await client.walk(customerId, ['2']);
    expect(portfolio.menu.text).toBe(
      'My Portfolio\nZZSELL 2.5 units, KES 100.00\nZZUGX 10 units, UGX 500.00\nOpen requests: 0',
    );
  });

  it('the stock, buy and sell screens of a UGX stock say UGX; of a KES stock, KES', async () => {
    const { customerId, client } = await customerWithBoth();
    const select = async (symbol: string, stockId: string) => {
      const found = await client.walk(customerId, ['1', '8', symbol]);
      return (await client.press(found.sessionId, keyOf(found, stockId))).json().data as UssdData;
    };
    const ugx = await select('ZZUGX', ids.ugx);
    expect(ugx.menu.text).toBe('ZZUGX Zulu Uganda Test Holdings\nPrice: UGX 50.00\nYou hold 10 units');
    const amount = (await client.press(ugx.sessionId, '1')).json().data as UssdData;
    expect(amount.menu.text).toBe('Buy ZZUGX\nEnter amount (UGX), min 100');
    const buy = (await client.press(ugx.sessionId, '1000')).json().data as UssdData;
    expect(buy.menu.text).toBe('Buy ZZUGX for UGX 1,000.00\nPrice: UGX 50.00\nEst. units: 20.00');

    const ugxSell = await select('ZZUGX', ids.ugx);
    await client.press(ugxSell.sessionId, '2');
    const sell = (await client.press(ugxSell.sessionId, '3')).json().data as UssdData;
    expect(sell.menu.text).toBe('Sell 3 ZZUGX units\nPrice: UGX 50.00\nEst. proceeds: UGX 150.00');

    const kesSell = await select(FIXTURES.sell.symbol, ids.kes);
    await client.press(kesSell.sessionId, '2');
    const kes = (await client.press(kesSell.sessionId, '2')).json().data as UssdData;
    expect(kes.menu.text).toBe('Sell 2 ZZSELL units\nPrice: KES 40.00\nEst. proceeds: KES 80.00');
  });

  it('open requests show each order in its own currency: list, details and cancel confirmation', async () => {
    const { customerId, client } = await customerWithBoth();
    const buy = async (symbol: string, amount: string) =>
      refOf(await client.walk(customerId, ['1', '8', symbol, '1', '1', amount, '1']));
    const ugxOrder = await buy('ZZUGX', '1500');
    const kesOrder = await buy(FIXTURES.sell.symbol, '700');

    const portfolio = await client.walk(customerId, ['2']);
    expect(portfolio.menu.text.split('\n').at(-1)).toBe('Open requests: 2');
    const requests = (await client.press(portfolio.sessionId, '1')).json().data as UssdData;
    // Newest first.
    expect(requests.menu.options.map((o) => o.label)).toEqual([
      'BUY ZZSELL KES 700',
      'BUY ZZUGX UGX 1,500',
      'Home',
    ]);

    const details = (await client.press(requests.sessionId, '2')).json().data as UssdData;
    expect(details.menu.text).toBe(`BUY ZZUGX UGX 1,500.00\nStatus: PENDING_PAYMENT\nRef ${ugxOrder}`);
    const confirm = (await client.press(details.sessionId, '1')).json().data as UssdData;
    expect(confirm.menu.text).toBe('Cancel this request?\nBUY ZZUGX UGX 1,500.00');

    const kesDetails = await client.walk(customerId, ['2', '1', '1']);
    expect(kesDetails.menu.text).toBe(`BUY ZZSELL KES 700.00\nStatus: PENDING_PAYMENT\nRef ${kesOrder}`);
  });
});
