/**
 * Every USSD screen at its longest values, for the language tests (languages.test.ts): a breadth-
 * first walk of the machine from HOME and ERROR over data sets that reach every state and every
 * refusal, with the longest values the admin API allows (symbol 12, instrument name 120,
 * organization name 200 characters; prices of 14 digits and 4 decimals; buys up to 1,000,000).
 */
import { createHash } from 'node:crypto';
import type { Language } from '../../src/i18n/index.ts';
import { completeSubmission, errorScreen, move, startSession } from '../../src/services/ussd/machine.ts';
import type { UssdData, UssdScreen, UssdStock } from '../../src/services/ussd/types.ts';

const LONG_SYMBOL = 'ABCDEFGHIJKL';
const LONG_NAME = 'Very Long Company Name Holdings Limited Kenya PLC '.repeat(3).slice(0, 120);
const LONG_ORG = 'Organization With A Very Long Registered Name '.repeat(5).slice(0, 200);
const ORDER_ID = 'ck'.padEnd(25, 'z');
const NOW = Date.parse('2026-11-26T09:00:00Z');

const stock = (i: number, over: Partial<UssdStock> = {}): UssdStock => ({
  id: `s${i}`,
  symbol: i === 0 ? LONG_SYMBOL : `${LONG_SYMBOL.slice(0, 10)}${String(i).padStart(2, '0')}`,
  name: LONG_NAME,
  price: '99999999999999.9999',
  currency: 'KES',
  priceAsOf: new Date(NOW - 60_000).toISOString(),
  ...over,
});

function dataSet(name: string, over: Partial<UssdData> = {}, stocks = 7): [string, UssdData] {
  const catalog = Array.from({ length: stocks }, (_, i) => stock(i));
  return [
    name,
    {
      organizationName: LONG_ORG,
      customer: {
        id: 'c1',
        hasMsisdn: true,
        paymentsAvailable: true,
        network: 'Airtel Money',
        paymentCurrency: 'KES',
      },
      stocks: catalog,
      holdings: catalog.map((s) => ({
        stockId: s.id,
        symbol: s.symbol,
        units: '9999999999999999.9999',
        value: '9999999999999999.99',
        currency: 'KES',
      })),
      openOrders: Array.from({ length: 9 }, (_, i) => ({
        id: `ck${String(i).padStart(23, 'z')}`,
        side: i % 2 ? ('SELL' as const) : ('BUY' as const),
        symbol: stock(i).symbol,
        amount: '1000000.00',
        currency: 'KES',
        status: i % 2 ? 'PAID' : 'PENDING_PAYMENT',
      })),
      trading: { open: true, nowMs: NOW, maxAgeMs: 15 * 60_000 },
      ...over,
    },
  ];
}

/** Data sets that together reach every screen and every refusal. */
export const DATA_SETS: [string, UssdData][] = [
  dataSet('longest'),
  dataSet('short', {
    organizationName: 'Acme',
    stocks: [stock(0, { symbol: 'SCOM', name: 'Safaricom PLC', price: '28.50' })],
    holdings: [{ stockId: 's0', symbol: 'SCOM', units: '1.0000', value: '28.50', currency: 'KES' }],
    openOrders: [],
  }),
  dataSet('empty', { stocks: [], holdings: [], openOrders: [] }),
  dataSet('no phone', {
    customer: { id: 'c1', hasMsisdn: false, paymentsAvailable: false, network: null, paymentCurrency: null },
  }),
  dataSet('no provider', {
    customer: {
      id: 'c1',
      hasMsisdn: true,
      paymentsAvailable: false,
      network: 'Airtel Money',
      paymentCurrency: null,
    },
  }),
  dataSet('unknown network', {
    customer: { id: 'c1', hasMsisdn: true, paymentsAvailable: false, network: null, paymentCurrency: null },
  }),
  dataSet('other currency', {
    customer: {
      id: 'c1',
      hasMsisdn: true,
      paymentsAvailable: true,
      network: 'Airtel Money',
      paymentCurrency: 'UGX',
    },
  }),
  dataSet('market closed', { trading: { open: false, nowMs: NOW, maxAgeMs: 15 * 60_000 } }),
  dataSet('stale price', { trading: { open: true, nowMs: NOW + 3_600_000, maxAgeMs: 15 * 60_000 } }),
  dataSet('whole units, high minimum', {
    stocks: [stock(0, { fractional: false, minOrderAmount: '99999999999999.99' })],
  }),
  dataSet('whole units', { stocks: [stock(0, { fractional: false })] }),
  dataSet('pending settlement', {
    holdings: [0, 1].map((i) => ({
      stockId: `s${i}`,
      symbol: stock(i).symbol,
      units: i === 0 ? '9999999999999999.9999' : '0.5000',
      pending: i === 0 ? '9999999999999990.9999' : '0.5000',
      value: '9999999999999999.99',
      currency: 'KES',
    })),
  }),
  dataSet('fraction held', {
    holdings: [{ stockId: 's0', symbol: LONG_SYMBOL, units: '0.5000', value: '1.00', currency: 'KES' }],
  }),
];

/** Free text tried on every screen besides its keys: searches, amounts, quantities, nonsense. */
const INPUTS = [
  'zz',
  'abcdefghijkl',
  'very long company',
  'x'.repeat(40),
  '100',
  '1000000',
  '9',
  '99999999999990',
  '99',
  '',
];

/** Every screen the walk reaches from HOME and ERROR, with the path that reached it. */
export function walkScreens(data: UssdData): { path: string; screen: UssdScreen }[] {
  const out: { path: string; screen: UssdScreen }[] = [];
  const seen = new Set<string>();
  const queue: { path: string; screen: UssdScreen }[] = [
    { path: 'start', screen: startSession(data) },
    { path: 'error', screen: errorScreen(data.language) },
  ];
  while (queue.length > 0) {
    const cur = queue.shift()!;
    const id = `${cur.screen.state}|${JSON.stringify(cur.screen.context)}|${cur.screen.ussdText}`;
    if (seen.has(id)) continue;
    seen.add(id);
    out.push(cur);
    const { screen } = cur;
    if (screen.menu.isEndState) {
      if (screen.state !== 'REQUEST_CANCELLED' && screen.context.orderId === undefined)
        queue.push({
          path: `${cur.path}>ref`,
          screen: completeSubmission(screen.state, screen.context, ORDER_ID, data.language),
        });
      continue;
    }
    const choices = new Set([...screen.menu.options.map((o) => o.key), ...INPUTS]);
    for (const choice of choices) {
      const next = move({ state: screen.state, context: screen.context, choice, data });
      queue.push({ path: `${cur.path}>${choice}`, screen: next });
    }
  }
  return out;
}

/** The walk of every data set in `language`: name and path to the screen. */
export function allScreens(language: Language): Map<string, UssdScreen> {
  const all = new Map<string, UssdScreen>();
  for (const [name, data] of DATA_SETS)
    for (const { path, screen } of walkScreens({ ...data, language })) all.set(`${name}: ${path}`, screen);
  return all;
}

/** One digest of every path and the text it showed: the English walk's must not change. */
export function digestOf(all: Map<string, UssdScreen>): string {
  const hash = createHash('sha256');
  for (const [path, screen] of all) hash.update(`${path}\u0000${screen.state}\u0000${screen.ussdText}\u0000`);
  return hash.digest('hex');
}
