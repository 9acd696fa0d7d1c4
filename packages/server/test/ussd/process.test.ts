import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { createPartner, type Partner } from '@partner-api/testkit/partner.ts';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ensureCatalog, FIXTURES, insertCustomer, type UssdData, ussdClient } from './support.ts';

describeStores('POST /v1/ussd/process: menus on %s', (store) => {
  let t: TestApp;
  let stockIds: Awaited<ReturnType<typeof ensureCatalog>>;
  beforeAll(async () => {
    t = await buildTestApp(store);
    stockIds = await ensureCatalog(t);
  });
  afterAll(() => t.close());

  async function setup(msisdn?: string | null) {
    const partner = await createPartner(t);
    const customerId = await insertCustomer(t, partner, { msisdn });
    return { partner, customerId, client: ussdClient(t, partner) };
  }
  const searchFor = async (partner: Partner, customerId: string, term: string) =>
    ussdClient(t, partner).walk(customerId, ['1', '8', term]);

  it('HOME → STOCKS lists 5 stocks by symbol with Next (no nextState), Search and Home', async () => {
    const { customerId, client } = await setup();
    const data = await client.walk(customerId, ['1']);
    expect(data.currentState).toBe('STOCKS');
    expect(data.menu.text).toMatch(/^Select a stock \(page 1\/\d+\)$/);
    const listed = data.menu.options.slice(0, 5);
    expect(listed.map((o) => o.key)).toEqual(['1', '2', '3', '4', '5']);
    for (const option of listed) {
      expect(option.nextState).toBe('SELECT_STOCK');
      expect(option.data).toEqual({
        stockId: expect.any(String),
        symbol: expect.any(String),
        name: expect.any(String),
      });
    }
    const symbols = listed.map((o) => o.data?.symbol ?? '');
    expect([...symbols].sort()).toEqual(symbols);
    expect(data.menu.options.slice(5)).toEqual([
      { key: '7', label: 'Next' },
      { key: '8', label: 'Search', nextState: 'SEARCH_STOCK' },
      { key: '0', label: 'Home', nextState: 'HOME' },
    ]);
    expect(data.ussdText.length).toBeLessThanOrEqual(182);
  });

  it('Next pages on (and wraps to the first page); 0 goes HOME', async () => {
    const { customerId, client } = await setup();
    const page2 = await client.walk(customerId, ['1', '7']);
    expect(page2.menu.text).toMatch(/\(page 2\/\d+\)/);
    const pages = Number(/page 2\/(\d+)/.exec(page2.menu.text)?.[1]);
    let data = page2;
    for (let p = 3; p <= pages + 1; p++) {
      data = (await client.press(data.sessionId, '7')).json().data;
    }
    expect(data.menu.text).toMatch(/\(page 1\//);
    const home = (await client.press(data.sessionId, '0')).json();
    expect(home).toMatchObject({
      message: 'USSD request processed successfully',
      data: { currentState: 'HOME' },
    });
  });

  it('an unknown key keeps the state with "Invalid choice." first', async () => {
    const { customerId, client } = await setup();
    const home = await client.walk(customerId, ['9']);
    expect(home.currentState).toBe('HOME');
    expect(home.menu.text.split('\n')[0]).toBe('Invalid choice.');
    const stocksScreen = await client.walk(customerId, ['1', '6']);
    expect(stocksScreen.currentState).toBe('STOCKS');
    expect(stocksScreen.menu.text).toMatch(/^Invalid choice\.\nSelect a stock/);
  });

  it('search by symbol or name, case-insensitive; no match stays in SEARCH_STOCK', async () => {
    const { partner, customerId, client } = await setup();
    const prompt = await client.walk(customerId, ['1', '8']);
    expect(prompt.currentState).toBe('SEARCH_STOCK');
    expect(prompt.menu.text).toBe('Enter stock name or symbol');
    expect(prompt.menu.options).toEqual([{ key: '0', label: 'Home', nextState: 'HOME' }]);

    const bySymbol = await searchFor(partner, customerId, 'zzbuy');
    expect(bySymbol.currentState).toBe('STOCKS');
    expect(bySymbol.menu.text).toBe('Select a stock matching zzbuy (page 1/1)');
    expect(bySymbol.menu.options[0]).toMatchObject({
      key: '1',
      data: { symbol: 'ZZBUY', stockId: stockIds.buy },
    });
    const selected = (await client.press(bySymbol.sessionId, '1')).json().data as UssdData;
    expect(selected.currentState).toBe('SELECT_STOCK');
    expect(selected.menu.text).toBe('ZZBUY Zulu Buy Test Holdings\nPrice: KES 25.00');

    const byName = await searchFor(partner, customerId, 'ZULU');
    // The PostgreSQL test database is shared with suites that import stocks of their own, so only
    // this suite's three fixtures are asserted, in their symbol order.
    const ours: unknown[] = [stockIds.buy, stockIds.cancel, stockIds.sell];
    const found = byName.menu.options.map((o) => o.data?.stockId).filter((id) => ours.includes(id));
    expect(found).toEqual(ours);

    const none = await searchFor(partner, customerId, 'NOMATCHXYZ');
    expect(none.currentState).toBe('SEARCH_STOCK');
    expect(none.menu.text).toBe('No stocks match NOMATCHXYZ.\nEnter stock name or symbol');
    const home = (await client.press(none.sessionId, '0')).json().data as UssdData;
    expect(home.currentState).toBe('HOME');
  });

  it('PORTFOLIO without holdings; a customer without a number cannot confirm a buy', async () => {
    const { partner, customerId, client } = await setup(null);
    const portfolio = await client.walk(customerId, ['2']);
    expect(portfolio.currentState).toBe('PORTFOLIO');
    expect(portfolio.menu.text).toBe('My Portfolio\nNo holdings.\nOpen requests: 0');
    expect(portfolio.menu.options).toEqual([
      { key: '1', label: 'Open requests', nextState: 'REQUESTS' },
      { key: '0', label: 'Home', nextState: 'HOME' },
    ]);
    const confirm = await searchAndConfirm(partner, customerId, '500');
    expect(confirm.currentState).toBe('BUY_CONFIRM');
    expect(confirm.menu.text).toContain('no phone number');
    expect(confirm.menu.options).toEqual([{ key: '0', label: 'Home', nextState: 'HOME' }]);
    const refused = (await client.press(confirm.sessionId, '1')).json().data as UssdData;
    expect(refused.currentState).toBe('BUY_CONFIRM');
    expect(refused.menu.text.startsWith('Invalid choice.')).toBe(true);
  });

  it('BUY_AMOUNT takes whole amounts 100..1,000,000 only', async () => {
    const { customerId, client } = await setup();
    const amountScreen = await client.walk(customerId, ['1', '8', 'ZZBUY', '1', '1']);
    expect(amountScreen.currentState).toBe('BUY_AMOUNT');
    expect(amountScreen.menu.text).toBe('Buy ZZBUY\nEnter amount (KES), min 100');
    for (const bad of ['99', '1000001', 'abc']) {
      const res = (await client.press(amountScreen.sessionId, bad)).json().data as UssdData;
      expect(res.currentState).toBe('BUY_AMOUNT');
      expect(res.menu.text.split('\n')[0]).toBe('Invalid amount.');
    }
    const ok = (await client.press(amountScreen.sessionId, '1000')).json().data as UssdData;
    expect(ok.currentState).toBe('BUY_CONFIRM');
    expect(ok.menu.text).toBe('Buy ZZBUY for KES 1,000.00\nPrice: KES 25.00\nEst. units: 40.00');
  });

  /** HOME → STOCKS → Search ZZBUY → select → Buy → amount: the BUY_CONFIRM screen. */
  async function searchAndConfirm(partner: Partner, customerId: string, amount: string) {
    expect(FIXTURES.buy.symbol).toBe('ZZBUY');
    return ussdClient(t, partner).walk(customerId, ['1', '8', 'ZZBUY', '1', '1', amount]);
  }
});
