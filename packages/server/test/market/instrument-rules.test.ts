import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { createPartner } from '@partner-api/testkit/partner.ts';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reader, run } from '../../src/db/query.ts';
import { Big, money, parseDecimal, unitsFor, unitsToBuy, unspent } from '../../src/lib/money.ts';
import { checkLedger } from '../../src/services/market/ledger-check.ts';
import { applyProviderResult } from '../../src/services/payments/apply-callback.ts';
import { upsertStocks } from '../../src/services/stocks/upsert.ts';
import { loadUssdData } from '../../src/services/ussd/load-data.ts';
import { move, screen } from '../../src/services/ussd/machine.ts';
import { MAX_USSD_TEXT } from '../../src/services/ussd/menus.ts';
import type { UssdData, UssdStock } from '../../src/services/ussd/types.ts';
import {
  insertCustomer,
  keyOf,
  orderRow,
  refOf,
  transactionsOf,
  type UssdData as UssdAnswer,
  ussdClient,
} from '../ussd/support.ts';

const d = (text: string) => parseDecimal(text);
const kes = (amount: string) => money(amount, 'KES');

describe('units a buy gets: unitsToBuy and unspent', () => {
  it('a fractional instrument gets unitsFor: down to 4 decimals', () => {
    expect(unitsToBuy(kes('1000'), d('28.5'), true).toString()).toBe('35.0877');
    expect(unitsToBuy(kes('1000'), d('28.5'), true).eq(unitsFor(kes('1000'), d('28.5')))).toBe(true);
    expect(unitsToBuy(kes('100'), d('380'), true).toString()).toBe('0.2631');
  });

  it('a whole-units instrument gets whole units only, rounded down; none when one unit costs more', () => {
    expect(unitsToBuy(kes('1000'), d('28.5'), false).toString()).toBe('35');
    expect(unitsToBuy(kes('1140'), d('380'), false).toString()).toBe('3');
    expect(unitsToBuy(kes('1139.99'), d('380'), false).toString()).toBe('2');
    expect(unitsToBuy(kes('379.99'), d('380'), false).toString()).toBe('0');
    expect(() => unitsToBuy(kes('100'), d('0'), false)).toThrow('greater than 0');
  });

  it('what whole units leave of the amount: their cost rounded up to the cent, never below 0', () => {
    expect(unspent(kes('1000'), new Big('35'), d('28.5'))).toEqual(kes('2.50'));
    expect(unspent(kes('1140'), new Big('3'), d('380'))).toEqual(kes('0'));
    // 3 × 33.3333 = 99.9999: the cost is 100.00, so 0.00 is left, not 0.0001.
    expect(unspent(kes('100'), new Big('3'), d('33.3333'))).toEqual(kes('0'));
    expect(unspent(kes('100.01'), new Big('3'), d('33.3333'))).toEqual(kes('0.01'));
    expect(unspent(kes('500'), new Big('0'), d('380'))).toEqual(kes('500'));
  });
});

const instrument = (over: Partial<UssdStock> = {}): UssdStock => ({
  id: 's-1',
  symbol: 'SCOM',
  name: 'Safaricom PLC',
  price: '28.50',
  currency: 'KES',
  ...over,
});
const dataWith = (stock: UssdStock): UssdData => ({
  organizationName: 'Acme Invest',
  customer: { id: 'c-1', hasMsisdn: true, paymentsAvailable: true, network: 'M-Pesa', paymentCurrency: null },
  stocks: [stock],
  holdings: [],
  openOrders: [],
});
const buyAmount = (data: UssdData) => screen('BUY_AMOUNT', { stocksPage: 1, stockId: 's-1' }, data);
const enter = (data: UssdData, choice: string) =>
  move({ state: 'BUY_AMOUNT', context: { stocksPage: 1, stockId: 's-1' }, choice, data });
const confirm = (data: UssdData, amount: string) =>
  screen('BUY_CONFIRM', { stocksPage: 1, stockId: 's-1', amount }, data);
/** Pressing 1 (Confirm) on BUY_CONFIRM: the state it leads to and the effects. */
const pressConfirm = (data: UssdData, amount: string) => {
  const pressed = move({
    state: 'BUY_CONFIRM',
    context: { stocksPage: 1, stockId: 's-1', amount },
    choice: '1',
    data,
  });
  return [pressed.state, pressed.effects];
};

describe('the buy screens under an instrument’s minimum and fractional flag', () => {
  it('no minimum of its own, or a minimum of 100: the screens are as they always were', () => {
    for (const minOrderAmount of [undefined, null, '100.00']) {
      const data = dataWith(instrument({ minOrderAmount, fractional: true }));
      expect(buyAmount(data).ussdText).toBe('Buy SCOM\nEnter amount (KES), min 100\n\n0. Home');
      expect(enter(data, '99').ussdText).toBe(
        'Invalid amount.\nBuy SCOM\nEnter amount (KES), min 100\n\n0. Home',
      );
      expect(enter(data, '100').state).toBe('BUY_CONFIRM');
      expect(confirm(data, '1000').ussdText).toBe(
        'Buy SCOM for KES 1,000.00\nPrice: KES 28.50\nEst. units: 35.08\n\n1. Confirm\n2. Cancel',
      );
    }
  });

  it('an instrument’s own minimum is asked for, and a smaller amount refused naming it', () => {
    const data = dataWith(instrument({ minOrderAmount: '1500.00' }));
    expect(buyAmount(data).menu.text).toBe('Buy SCOM\nEnter amount (KES), min 1,500');
    const refused = enter(data, '1499');
    expect([refused.state, refused.menu.text, refused.effects]).toEqual([
      'BUY_AMOUNT',
      'Invalid amount.\nBuy SCOM\nEnter amount (KES), min 1,500',
      [],
    ]);
    expect(enter(data, '1500')).toMatchObject({ state: 'BUY_CONFIRM', context: { amount: '1500' } });
    // A minimum with cents: the smallest whole amount at or above it.
    const cents = dataWith(instrument({ minOrderAmount: '150.50' }));
    expect(buyAmount(cents).menu.text).toBe('Buy SCOM\nEnter amount (KES), min 150.50');
    expect(enter(cents, '150').state).toBe('BUY_AMOUNT');
    expect(enter(cents, '151').state).toBe('BUY_CONFIRM');
    // A minimum below the default is the instrument's to set.
    expect(enter(dataWith(instrument({ minOrderAmount: '50.00' })), '50').state).toBe('BUY_CONFIRM');
  });

  it('a minimum raised after the amount was entered refuses the confirmation: no order', () => {
    const data = dataWith(instrument({ minOrderAmount: '5000.00' }));
    expect(confirm(data, '1000').ussdText).toBe(
      'Buy SCOM for KES 1,000.00\nThe minimum for SCOM is KES 5,000.\n\n0. Home',
    );
    expect(pressConfirm(data, '1000')).toEqual(['BUY_CONFIRM', []]);
  });

  it('a whole-units instrument estimates whole units, and refuses an amount that buys none', () => {
    const data = dataWith(instrument({ symbol: 'BAT', price: '380.00', fractional: false }));
    expect(confirm(data, '1000').menu.text).toBe(
      'Buy BAT for KES 1,000.00\nPrice: KES 380.00\nEst. units: 2',
    );
    expect(confirm(data, '1000').menu.options.map((o) => o.key)).toEqual(['1', '2']);
    const none = confirm(data, '379');
    expect(none.ussdText).toBe(
      'Buy BAT for KES 379.00\nBAT is sold in whole units only. One unit costs KES 380.00.\n\n0. Home',
    );
    expect(pressConfirm(data, '379')).toEqual(['BUY_CONFIRM', []]);
    // The same amount of a fractional instrument is a buy of a fraction.
    const fractional = dataWith(instrument({ symbol: 'BAT', price: '380.00', fractional: true }));
    expect(confirm(fractional, '379').menu.text).toBe(
      'Buy BAT for KES 379.00\nPrice: KES 380.00\nEst. units: 0.99',
    );
  });

  it('the refusals fit the screen at the longest symbol, amount and price', () => {
    const data = dataWith(
      instrument({
        symbol: 'ABCDEFGHIJKL',
        price: '99999999999999.9999',
        fractional: false,
        minOrderAmount: '99999999999999.99',
      }),
    );
    for (const amount of ['999999999', '1000000']) {
      const shown = confirm(data, amount);
      expect(shown.ussdText.length).toBeLessThanOrEqual(MAX_USSD_TEXT);
      expect(shown.menu.options.map((o) => o.key)).toEqual(['0']);
    }
    const whole = dataWith(
      instrument({ symbol: 'ABCDEFGHIJKL', price: '99999999999999.9999', fractional: false }),
    );
    const text = confirm(whole, '1000000').ussdText;
    expect(text).toContain(
      'ABCDEFGHIJKL is sold in whole units only. One unit costs KES 99,999,999,999,999.9999.',
    );
    expect(text.length).toBeLessThanOrEqual(MAX_USSD_TEXT);
  });
});

describeStores('an instrument’s minimum and fractional flag through the USSD API on %s', (store) => {
  let t: TestApp;
  const suffix = Math.random().toString(36).slice(2, 7).toUpperCase();
  const symbols = { min: `ZM${suffix}`, whole: `ZW${suffix}`, plain: `ZP${suffix}` };
  const ids: Record<keyof typeof symbols, string> = { min: '', whole: '', plain: '' };

  beforeAll(async () => {
    t = await buildTestApp(store);
    const db = t.ctx.database.db;
    const created = await upsertStocks(db, [
      { symbol: symbols.min, name: 'Minimum Rules Test Ltd', price: '20.0000', currency: 'KES' },
      { symbol: symbols.whole, name: 'Whole Units Test Ltd', price: '380.0000', currency: 'KES' },
      { symbol: symbols.plain, name: 'Default Rules Test Ltd', price: '25.0000', currency: 'KES' },
    ]);
    for (const row of created) {
      const key = (Object.keys(symbols) as (keyof typeof symbols)[]).find((k) => symbols[k] === row.symbol)!;
      ids[key] = row.id;
    }
    await run(db, sql`update stocks set min_order_amount = 500 where symbol = ${symbols.min}`);
    await run(db, sql`update stocks set fractional = false where symbol = ${symbols.whole}`);
  });
  afterAll(() => t?.close());

  it('the snapshot carries each instrument’s minimum (null: none) and fractional flag', async () => {
    const partner = await createPartner(t);
    const customerId = await insertCustomer(t, partner);
    const { data } = await loadUssdData(
      reader(t.ctx.database.db),
      { organizationId: partner.organizationId, customerId },
      t.ctx.registry,
    );
    const mine = data.stocks.filter((s) => Object.values(symbols).includes(s.symbol));
    expect(mine.map((s) => [s.symbol, s.minOrderAmount, s.fractional])).toEqual(
      [
        [symbols.min, '500.00', true],
        [symbols.plain, null, true],
        [symbols.whole, null, false],
      ].sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
    );
  });

  async function buyScreen(stock: keyof typeof symbols) {
    const partner = await createPartner(t);
    const customerId = await insertCustomer(t, partner);
    const client = ussdClient(t, partner);
    const found = await client.walk(customerId, ['1', '8', symbols[stock]]);
    const selected = (await client.press(found.sessionId, keyOf(found, ids[stock]))).json()
      .data as UssdAnswer;
    const amount = (await client.press(selected.sessionId, '1')).json().data as UssdAnswer;
    return { client, amount };
  }

  it('asks for the instrument’s minimum and refuses less; the default instrument’s screen is unchanged', async () => {
    const { client, amount } = await buyScreen('min');
    expect(amount.ussdText).toBe(`Buy ${symbols.min}\nEnter amount (KES), min 500\n\n0. Home`);
    const refused = (await client.press(amount.sessionId, '499')).json().data as UssdAnswer;
    expect(refused.menu.text).toBe(`Invalid amount.\nBuy ${symbols.min}\nEnter amount (KES), min 500`);
    const accepted = (await client.press(amount.sessionId, '500')).json().data as UssdAnswer;
    expect(accepted.menu.text).toBe(`Buy ${symbols.min} for KES 500.00\nPrice: KES 20.00\nEst. units: 25.00`);

    const plain = await buyScreen('plain');
    expect(plain.amount.ussdText).toBe(`Buy ${symbols.plain}\nEnter amount (KES), min 100\n\n0. Home`);
  });

  it('a whole-units instrument: whole units estimated, an amount short of one unit refused', async () => {
    const { client, amount } = await buyScreen('whole');
    const short = (await client.press(amount.sessionId, '300')).json().data as UssdAnswer;
    expect(short.ussdText).toBe(
      `Buy ${symbols.whole} for KES 300.00\n${symbols.whole} is sold in whole units only. One unit costs KES 380.00.\n\n0. Home`,
    );
    const pressed = (await client.press(short.sessionId, '1')).json().data as UssdAnswer;
    expect(pressed.currentState).toBe('BUY_CONFIRM');
    expect(pressed.menu.text.startsWith('Invalid choice.\n')).toBe(true);

    const again = await buyScreen('whole');
    const enough = (await again.client.press(again.amount.sessionId, '1000')).json().data as UssdAnswer;
    expect(enough.menu.text).toBe(`Buy ${symbols.whole} for KES 1,000.00\nPrice: KES 380.00\nEst. units: 2`);
  });

  /** A whole-units buy of `amount`, confirmed; its collection then paid (the provider's result). */
  async function paidWholeBuy(amount: string, beforePayment?: () => Promise<void>) {
    const { client, amount: screen } = await buyScreen('whole');
    const entered = (await client.press(screen.sessionId, amount)).json().data as UssdAnswer;
    const submitted = (await client.press(entered.sessionId, '1')).json().data as UssdAnswer;
    expect(submitted.currentState).toBe('BUY_SUBMITTED');
    const orderId = refOf(submitted);
    const [collection] = await transactionsOf(t, orderId);
    await beforePayment?.();
    await t.ctx.database.db.transaction((tx) =>
      applyProviderResult(
        tx,
        { transactionId: collection!.id, status: 'SUCCESS', providerReference: 'R1' },
        t.ctx,
      ),
    );
    return orderId;
  }
  const settle = (transactionId: string) =>
    t.ctx.database.db.transaction((tx) =>
      applyProviderResult(
        tx,
        { transactionId, status: 'SUCCESS', providerReference: `R${transactionId}` },
        t.ctx,
      ),
    );

  it('a whole-units buy executes whole units and refunds what they did not cost', async () => {
    const orderId = await paidWholeBuy('1000');
    expect(await orderRow(t, orderId)).toMatchObject({ status: 'EXECUTED', quantity: '2.0000' });
    const refund = (await transactionsOf(t, orderId)).find((x) => x.type === 'OUTGOING');
    expect(refund).toMatchObject({ status: 'PENDING', amount: '240.00' });
    await settle(refund!.id);
    const order = (await orderRow(t, orderId))!;
    expect(await checkLedger(t.ctx.database.db, order.organizationId)).toEqual([]);
  });

  it('a whole-units buy whose price rose past its amount fails, and the whole amount goes back', async () => {
    const orderId = await paidWholeBuy('500', () =>
      run(t.ctx.database.db, sql`update stocks set price = 600 where symbol = ${symbols.whole}`).then(
        () => {},
      ),
    );
    await run(t.ctx.database.db, sql`update stocks set price = 380 where symbol = ${symbols.whole}`);
    expect(await orderRow(t, orderId)).toMatchObject({ status: 'FAILED', quantity: null });
    const refund = (await transactionsOf(t, orderId)).find((x) => x.type === 'OUTGOING');
    expect(refund).toMatchObject({ status: 'PENDING', amount: '500.00' });
    await settle(refund!.id);
    const order = (await orderRow(t, orderId))!;
    expect(await checkLedger(t.ctx.database.db, order.organizationId)).toEqual([]);
  });
});
