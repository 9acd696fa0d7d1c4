import { describe, expect, it } from 'vitest';
import {
  completeSubmission,
  errorMenu,
  errorScreen,
  isEndState,
  move,
  startSession,
} from '../../src/services/ussd/machine.ts';
import { MAX_USSD_TEXT } from '../../src/services/ussd/menus.ts';
import type { UssdData, UssdScreen, UssdStock } from '../../src/services/ussd/types.ts';

const stock = (id: string, symbol: string, name: string, price: string): UssdStock => ({
  id,
  symbol,
  name,
  price,
  currency: 'KES',
});

// Deliberately unsorted: the machine lists by symbol.
const CATALOG = [
  stock('s-scom', 'SCOM', 'Safaricom PLC', '28.50'),
  stock('s-absa', 'ABSA', 'Absa Bank Kenya', '14.20'),
  stock('s-kcb', 'KCB', 'KCB Group', '38.05'),
  stock('s-bat', 'BAT', 'BAT Kenya', '380.00'),
  stock('s-coop', 'COOP', 'Co-operative Bank', '15.10'),
  stock('s-eabl', 'EABL', 'East African Breweries', '160.25'),
  stock('s-eqty', 'EQTY', 'Equity Group Holdings', '45.00'),
];

const base = (over: Partial<UssdData> = {}): UssdData => ({
  organizationName: 'Acme Invest',
  customer: {
    id: 'cust-1',
    hasMsisdn: true,
    paymentsAvailable: true,
    network: 'M-Pesa',
    paymentCurrency: 'KES',
  },
  stocks: CATALOG,
  holdings: [{ stockId: 's-scom', symbol: 'SCOM', units: '10.5000', value: '299.25', currency: 'KES' }],
  openOrders: [
    {
      id: 'ord-1',
      side: 'BUY',
      symbol: 'KCB',
      amount: '1000.00',
      currency: 'KES',
      status: 'PENDING_PAYMENT',
    },
    { id: 'ord-2', side: 'SELL', symbol: 'SCOM', amount: '57.00', currency: 'KES', status: 'PAID' },
  ],
  ...over,
});

/** Applies choices in turn from a screen, returning the last move's result. */
function walk(data: UssdData, from: UssdScreen, ...choices: string[]) {
  let cur = { ...from, effects: [] as ReturnType<typeof move>['effects'] };
  for (const choice of choices) cur = move({ state: cur.state, context: cur.context, choice, data });
  return cur;
}
const keys = (s: UssdScreen) => s.menu.options.map((o) => o.key);

describe('USSD machine: buying', () => {
  const data = base();
  const home = startSession(data);

  it('starts at HOME with the organization name and the two options', () => {
    expect(home.state).toBe('HOME');
    expect(home.menu.text).toContain('Acme Invest');
    expect(home.menu.options).toEqual([
      { key: '1', label: 'Stocks', nextState: 'STOCKS' },
      { key: '2', label: 'My Portfolio', nextState: 'PORTFOLIO' },
    ]);
    expect(home.ussdText).toBe(`${home.menu.text}\n\n1. Stocks\n2. My Portfolio`);
  });

  it('walks HOME -> STOCKS -> Next -> SELECT_STOCK -> BUY_AMOUNT -> BUY_CONFIRM -> BUY_SUBMITTED', () => {
    const stocks = walk(data, home, '1');
    expect(stocks.state).toBe('STOCKS');
    expect(stocks.menu.text).toBe('Select a stock (page 1/2)');
    expect(stocks.menu.options.slice(0, 5).map((o) => o.data?.symbol)).toEqual([
      'ABSA',
      'BAT',
      'COOP',
      'EABL',
      'EQTY',
    ]);
    expect(stocks.menu.options[5]).toEqual({ key: '7', label: 'Next' });
    expect(stocks.menu.options.slice(6)).toEqual([
      { key: '8', label: 'Search', nextState: 'SEARCH_STOCK' },
      { key: '0', label: 'Home', nextState: 'HOME' },
    ]);
    const page2 = walk(data, stocks, '7');
    expect(page2.menu.text).toBe('Select a stock (page 2/2)');
    expect(page2.menu.options[1]).toEqual({
      key: '2',
      label: 'SCOM Safaricom PLC',
      nextState: 'SELECT_STOCK',
      data: { stockId: 's-scom', symbol: 'SCOM', name: 'Safaricom PLC' },
    });
    const select = walk(data, page2, '2');
    expect(select.state).toBe('SELECT_STOCK');
    expect(select.menu.text).toContain('SCOM Safaricom PLC\nPrice: KES 28.50');
    const amount = walk(data, select, '1');
    expect(amount.state).toBe('BUY_AMOUNT');
    expect(amount.menu.text).toContain('Enter amount (KES), min 100');
    const confirm = walk(data, amount, '1000');
    expect(confirm.state).toBe('BUY_CONFIRM');
    expect(confirm.context.amount).toBe('1000');
    expect(confirm.menu.text).toBe('Buy SCOM for KES 1,000.00\nPrice: KES 28.50\nEst. units: 35.08');
    expect(keys(confirm)).toEqual(['1', '2']);
    const submitted = walk(data, confirm, '1');
    expect(submitted.state).toBe('BUY_SUBMITTED');
    expect(submitted.menu.isEndState).toBe(true);
    expect(submitted.effects).toEqual([{ type: 'CREATE_BUY_ORDER', stockId: 's-scom', amount: '1000' }]);
    const done = completeSubmission(submitted.state, submitted.context, 'ckorder123');
    expect(done.ussdText).toBe('Request received. Approve the payment prompt on your phone. Ref ckorder123');
    expect(done.context.orderId).toBe('ckorder123');
    expect(() => move({ state: done.state, context: done.context, choice: '0', data })).toThrow();
    expect(walk(data, confirm, '2').state).toBe('HOME');
  });

  it('wraps pagination back to the first page', () => {
    const wrapped = walk(data, home, '1', '7', '7');
    expect(wrapped.menu.text).toBe('Select a stock (page 1/2)');
    expect(wrapped.context.stocksPage).toBe(1);
  });

  it('rejects choices that are not keys, and amounts out of range', () => {
    const bad = walk(data, home, '9');
    expect(bad.state).toBe('HOME');
    expect(bad.menu.text.split('\n')).toEqual(['Invalid choice.', 'Welcome to Acme Invest']);
    expect(walk(data, home, '1', '6').menu.text.split('\n')[0]).toBe('Invalid choice.');
    const amount = walk(data, home, '1', '7', '2', '1');
    for (const choice of ['99', '1000001', '12.5', 'abc', '']) {
      const r = walk(data, amount, choice);
      expect(r.state).toBe('BUY_AMOUNT');
      expect(r.menu.text.split('\n')[0]).toBe('Invalid amount.');
    }
    expect(walk(data, amount, '100').state).toBe('BUY_CONFIRM');
    expect(walk(data, amount, '1000000').state).toBe('BUY_CONFIRM');
    expect(walk(data, amount, '0').state).toBe('HOME');
  });

  it('does not let a customer without an msisdn confirm', () => {
    const noPhone = base({
      customer: {
        id: 'cust-2',
        hasMsisdn: false,
        paymentsAvailable: false,
        network: null,
        paymentCurrency: null,
      },
    });
    const confirm = walk(noPhone, startSession(noPhone), '1', '7', '2', '1', '500');
    expect(confirm.state).toBe('BUY_CONFIRM');
    expect(confirm.menu.text).toContain('Cannot proceed');
    expect(confirm.menu.options).toEqual([{ key: '0', label: 'Home', nextState: 'HOME' }]);
    const tried = walk(noPhone, confirm, '1');
    expect(tried.state).toBe('BUY_CONFIRM');
    expect(tried.effects).toEqual([]);
    expect(walk(noPhone, confirm, '0').state).toBe('HOME');
  });

  it('does not let a customer confirm in a currency their provider does not move', () => {
    const ugx = base({
      customer: {
        id: 'cust-4',
        hasMsisdn: true,
        paymentsAvailable: true,
        network: 'MTN MoMo',
        paymentCurrency: 'UGX',
      },
    });
    const home = startSession(ugx);
    for (const [choices, side] of [
      [['1', '7', '2', '1', '500'], 'Buy SCOM for KES 500.00'],
      [['1', '7', '2', '2', '4'], 'Sell 4 SCOM units'],
    ] as const) {
      const confirm = walk(ugx, home, ...choices);
      expect(confirm.state).toMatch(/_CONFIRM$/);
      expect(confirm.menu.text).toBe(`${side}\nMTN MoMo pays in UGX only, not KES.`);
      const tried = walk(ugx, confirm, '1');
      expect(tried.effects).toEqual([]);
    }
  });

  it('does not let a customer whose network has no provider confirm a buy or a sell', () => {
    const none = base({
      customer: {
        id: 'cust-3',
        hasMsisdn: true,
        paymentsAvailable: false,
        network: 'Airtel Money',
        paymentCurrency: null,
      },
    });
    const home = startSession(none);
    for (const [choices, side] of [
      [['1', '7', '2', '1', '500'], 'Buy SCOM for KES 500.00'],
      [['1', '7', '2', '2', '4'], 'Sell 4 SCOM units'],
    ] as const) {
      const confirm = walk(none, home, ...choices);
      expect(confirm.state).toMatch(/_CONFIRM$/);
      expect(confirm.menu.text).toBe(`${side}\nPayments from Airtel Money are not available yet.`);
      expect(confirm.ussdText.length).toBeLessThanOrEqual(182);
      expect(confirm.menu.options).toEqual([{ key: '0', label: 'Home', nextState: 'HOME' }]);
      const tried = walk(none, confirm, '1');
      expect(tried.state).toBe(confirm.state);
      expect(tried.effects).toEqual([]);
      expect(walk(none, confirm, '0').state).toBe('HOME');
    }
  });
});

describe('USSD machine: search', () => {
  const data = base();
  const search = walk(data, startSession(data), '1', '8');

  it('lists the matches by name or symbol, case-insensitive', () => {
    expect(search.state).toBe('SEARCH_STOCK');
    expect(search.menu.text).toBe('Enter stock name or symbol');
    const banks = walk(data, search, 'BaNk');
    expect(banks.state).toBe('STOCKS');
    expect(banks.context.searchTerm).toBe('BaNk');
    expect(banks.menu.options.filter((o) => o.data).map((o) => o.data?.symbol)).toEqual(['ABSA', 'COOP']);
    expect(walk(data, search, 'scom').menu.options[0]?.data?.stockId).toBe('s-scom');
    expect(walk(data, banks, '0').context).toEqual({ stocksPage: 1 });
  });

  it('keeps SEARCH_STOCK when nothing matches', () => {
    const none = walk(data, search, 'zzz');
    expect(none.state).toBe('SEARCH_STOCK');
    expect(none.menu.text.split('\n')[0]).toBe('No stocks match zzz.');
    expect(walk(data, search, '0').state).toBe('HOME');
  });

  it('pages through the matches', () => {
    const many = base({
      stocks: Array.from({ length: 12 }, (_, i) => stock(`x${i}`, `X${i}`, `Company ${i}`, '1.00')),
    });
    const results = walk(many, startSession(many), '1', '8', 'company');
    expect(results.menu.text).toContain('(page 1/3)');
    expect(walk(many, results, '7', '7').menu.text).toContain('(page 3/3)');
    expect(walk(many, results, '7', '7', '7').menu.text).toContain('(page 1/3)');
  });
});

describe('USSD machine: selling, portfolio and requests', () => {
  const data = base();
  const home = startSession(data);

  it('offers Sell only while the customer holds units', () => {
    const absa = walk(data, home, '1', '1');
    expect(absa.context.stockId).toBe('s-absa');
    expect(keys(absa)).toEqual(['1', '0']);
    expect(walk(data, absa, '2').menu.text.split('\n')[0]).toBe('Invalid choice.');
    const scom = walk(data, home, '1', '7', '2');
    expect(keys(scom)).toEqual(['1', '2', '0']);
    const qty = walk(data, scom, '2');
    expect(qty.state).toBe('SELL_QUANTITY');
    expect(qty.menu.text).toContain('max 10');
    expect(walk(data, qty, '11').menu.text.split('\n')[0]).toBe('Invalid quantity.');
    expect(walk(data, qty, '0').state).toBe('HOME');
    const confirm = walk(data, qty, '4');
    expect(confirm.state).toBe('SELL_CONFIRM');
    expect(confirm.menu.text).toContain('Est. proceeds: KES 114.00');
    const sold = walk(data, confirm, '1');
    expect(sold.state).toBe('SELL_SUBMITTED');
    expect(sold.effects).toEqual([{ type: 'CREATE_SELL_ORDER', stockId: 's-scom', quantity: '4' }]);
    expect(completeSubmission(sold.state, sold.context, 'ck9').ussdText).toMatch(/Ref ck9$/);
  });

  it('shows every amount with its own currency: a UGX holding and order are never shown as KES', () => {
    const mixed = base({
      holdings: [
        { stockId: 's-mtnu', symbol: 'MTNU', units: '25.0000', value: '500.00', currency: 'UGX' },
        { stockId: 's-scom', symbol: 'SCOM', units: '10.5000', value: '299.25', currency: 'KES' },
      ],
      openOrders: [
        {
          id: 'ord-u',
          side: 'BUY',
          symbol: 'MTNU',
          amount: '5000.00',
          currency: 'UGX',
          status: 'PENDING_PAYMENT',
        },
      ],
    });
    const portfolio = walk(mixed, startSession(mixed), '2');
    expect(portfolio.menu.text).toContain('MTNU 25 units, UGX 500.00');
    expect(portfolio.menu.text).toContain('SCOM 10.5 units, KES 299.25');
    expect(portfolio.menu.text).not.toContain('KES 500.00');
    const requests = walk(mixed, portfolio, '1');
    expect(requests.menu.options[0]?.label).toBe('BUY MTNU UGX 5,000');
    const details = walk(mixed, requests, '1');
    expect(details.menu.text).toContain('UGX 5,000.00');
    expect(details.menu.text).not.toContain('KES');
  });

  it('walks PORTFOLIO -> REQUESTS -> REQUEST_DETAILS -> CANCEL_REQUEST_CONFIRMATION -> REQUEST_CANCELLED', () => {
    const portfolio = walk(data, home, '2');
    expect(portfolio.menu.text).toBe('My Portfolio\nSCOM 10.5 units, KES 299.25\nOpen requests: 2');
    expect(portfolio.menu.options).toEqual([
      { key: '1', label: 'Open requests', nextState: 'REQUESTS' },
      { key: '0', label: 'Home', nextState: 'HOME' },
    ]);
    const requests = walk(data, portfolio, '1');
    expect(requests.menu.options.map((o) => o.label)).toEqual([
      'BUY KCB KES 1,000',
      'SELL SCOM KES 57',
      'Home',
    ]);
    const details = walk(data, requests, '2');
    expect(details.state).toBe('REQUEST_DETAILS');
    expect(details.context.orderId).toBe('ord-2');
    expect(details.menu.text).toContain('SELL SCOM KES 57.00\nStatus: PAID');
    const ask = walk(data, details, '1');
    expect(ask.state).toBe('CANCEL_REQUEST_CONFIRMATION');
    expect(ask.menu.text.split('\n')[0]).toBe('Cancel this request?');
    const yes = ask.menu.options[0];
    expect(yes).toEqual({ key: '1', label: 'Yes, cancel', action: 'CANCEL_ORDER' });
    expect(yes && 'nextState' in yes).toBe(false);
    expect(ask.menu.options[1]).toEqual({ key: '2', label: 'No', nextState: 'HOME' });
    const cancelled = walk(data, ask, '1');
    expect(cancelled.state).toBe('REQUEST_CANCELLED');
    expect(cancelled.menu.isEndState).toBe(true);
    expect(cancelled.effects).toEqual([{ type: 'CANCEL_ORDER', orderId: 'ord-2' }]);
    expect(walk(data, ask, '2').state).toBe('HOME');
  });

  it('paginates requests and keeps realistic labels whole, even after an invalid choice', () => {
    const orders = Array.from({ length: 7 }, (_, i) => ({
      id: `o${i}`,
      side: 'SELL' as const,
      symbol: 'EABL',
      amount: '1000000.50',
      currency: 'KES',
      status: 'PENDING',
    }));
    const many = base({ openOrders: orders });
    const requests = walk(many, startSession(many), '2', '1', '9');
    expect(requests.menu.text).toBe('Invalid choice.\nOpen requests (1/2)');
    // Each label whole, with its currency; as many as fit in one USSD screen.
    const first = requests.menu.options.filter((o) => o.nextState === 'REQUEST_DETAILS');
    expect(first.length).toBeGreaterThanOrEqual(3);
    expect(first.map((o) => o.label)).toEqual(first.map(() => 'SELL EABL KES 1,000,000.50'));
    expect(requests.ussdText.length).toBeLessThanOrEqual(MAX_USSD_TEXT);
    const page2 = walk(many, requests, '7');
    const second = page2.menu.options.filter((o) => o.nextState === 'REQUEST_DETAILS');
    expect(first.length + second.length).toBe(7);
    expect(page2.ussdText.length).toBeLessThanOrEqual(MAX_USSD_TEXT);
    expect(walk(many, page2, String(second.length)).context.orderId).toBe('o6');
    expect(walk(many, page2, '7').menu.text).toBe('Open requests (1/2)');
  });

  it('shortens long stock labels but keeps the symbol', () => {
    const long = base({ stocks: CATALOG.map((s) => ({ ...s, name: `${s.name} `.padEnd(60, 'x') })) });
    const stocks = walk(long, startSession(long), '1', '9');
    expect(stocks.ussdText.length).toBeLessThanOrEqual(MAX_USSD_TEXT);
    expect(stocks.menu.options[0]?.label).toMatch(/^ABSA Absa Bank/);
    expect(stocks.menu.options[0]?.data?.name).toHaveLength(60);
  });

  it('ERROR offers Home only and goes HOME', () => {
    expect(errorMenu()).toEqual({
      state: 'ERROR',
      text: 'Something went wrong.',
      options: [{ key: '0', label: 'Home', nextState: 'HOME' }],
      isEndState: false,
    });
    const err = errorScreen();
    expect(err.ussdText).toBe('Something went wrong.\n\n0. Home');
    expect(walk(data, err, '5').state).toBe('ERROR');
    expect(walk(data, err, '0').state).toBe('HOME');
    expect(isEndState('ERROR')).toBe(false);
  });
});

describe('USSD machine: every reachable screen fits a handset', () => {
  const longName = (i: number) =>
    `Very Long Company Name Number ${i} Holdings Limited Kenya PLC`.padEnd(60, 'x');
  const catalog = (n: number, long: boolean) =>
    Array.from({ length: n }, (_, i) =>
      stock(`id${i}`, `S${String(i).padStart(4, '0')}X`, long ? longName(i) : `Co ${i}`, '123456.7891'),
    );
  const inputs = ['zzz', 'co', 'very', 's00', '100', '999999', '1000000', '1', '3', '99', 'abc', ''];

  for (const n of [0, 1, 5, 6, 23]) {
    for (const long of [false, true]) {
      it(`${n} stocks, ${long ? 'long' : 'short'} names`, () => {
        const stocks = catalog(n, long);
        const data: UssdData = {
          organizationName: long ? 'O'.repeat(120) : 'Acme',
          customer: {
            id: 'c',
            hasMsisdn: long,
            paymentsAvailable: true,
            network: 'M-Pesa',
            paymentCurrency: 'KES',
          },
          stocks,
          holdings: stocks.map((s) => ({
            stockId: s.id,
            symbol: s.symbol,
            units: '123456.7890',
            value: '98765432.10',
            currency: 'KES',
          })),
          openOrders: Array.from({ length: long ? 12 : 3 }, (_, i) => ({
            id: `ckorder${String(i).padStart(18, '0')}`,
            side: i % 2 ? ('SELL' as const) : ('BUY' as const),
            symbol: `S${i}LONGSYMBOL`,
            amount: '999999999.99',
            currency: 'KES',
            status: 'PENDING_PAYMENT_CONFIRMATION',
          })),
        };
        const seen = new Set<string>();
        const queue: UssdScreen[] = [startSession(data), errorScreen()];
        let checked = 0;
        while (queue.length > 0) {
          const cur = queue.shift()!;
          checked++;
          expect(cur.ussdText.length, `${cur.state}: ${cur.ussdText}`).toBeLessThanOrEqual(MAX_USSD_TEXT);
          expect(cur.menu.state).toBe(cur.state);
          expect(cur.menu.isEndState).toBe(isEndState(cur.state));
          const id = `${cur.state}|${JSON.stringify(cur.context)}|${cur.menu.text}`;
          if (seen.has(id) || seen.size > 3000) continue;
          seen.add(id);
          if (cur.menu.isEndState) {
            if (cur.state !== 'REQUEST_CANCELLED') {
              queue.push(completeSubmission(cur.state, cur.context, 'ck'.padEnd(25, 'z')));
            }
            continue;
          }
          for (const choice of new Set([...keys(cur), ...inputs])) {
            queue.push(move({ state: cur.state, context: cur.context, choice, data }));
          }
        }
        expect(checked).toBeGreaterThan(n === 0 ? 10 : 50);
      });
    }
  }
});
