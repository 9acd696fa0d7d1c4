/**
 * USSD menus as data, and their one rendering function. Pure: no I/O.
 *
 * `renderMenu(state, context, data, extra?)` builds the menu of a state from the session context and
 * the data snapshot. Every menu goes through `finish`, which guarantees `ussdText(menu).length <= 182`:
 * long lists paginate (5 per page), long labels are shortened (longest first), and as a last resort
 * the text is cut. Amounts, prices and units are formatted by the money module (exact decimals).
 */
import {
  Big,
  type Decimal,
  formatEstimatedUnits,
  formatMoney,
  formatPrice,
  formatUnits,
  type Money,
  money,
  parseDecimal,
  plain,
  proceeds,
  unitsToBuy,
  wholeUnits,
} from '../../lib/money.ts';
import {
  isEndState,
  type UssdContext,
  type UssdData,
  type UssdHolding,
  type UssdMenu,
  type UssdOpenOrder,
  type UssdOption,
  type UssdState,
  type UssdStock,
} from './types.ts';

export const MAX_USSD_TEXT = 182;
export const PAGE_SIZE = 5;
/** Open requests carry their amount with its currency: four fit whole on one screen. */
export const REQUESTS_PAGE_SIZE = 4;
const MIN_LABEL = 4;

/** Spec: the menu text, a blank line, then one line per option as `<key>. <label>`. */
export function ussdText(menu: Pick<UssdMenu, 'text' | 'options'>): string {
  if (menu.options.length === 0) return menu.text;
  return `${menu.text}\n\n${menu.options.map((o) => `${o.key}. ${o.label}`).join('\n')}`;
}

function finish(state: UssdState, body: string, options: UssdOption[], notice?: string): UssdMenu {
  const opts = options.map((o) => ({ ...o }));
  let text = notice ? `${notice}\n${body}` : body;
  const over = () => ussdText({ text, options: opts }).length - MAX_USSD_TEXT;
  while (over() > 0) {
    let longest: UssdOption | undefined;
    for (const o of opts) if (!longest || o.label.length > longest.label.length) longest = o;
    if (!longest || longest.label.length <= MIN_LABEL) break;
    longest.label = longest.label.slice(0, -1).trimEnd();
  }
  if (over() > 0) text = text.slice(0, Math.max(0, text.length - over()));
  return { state, text, options: opts, isEndState: isEndState(state) };
}

const HOME_OPTION: UssdOption = { key: '0', label: 'Home', nextState: 'HOME' };

export function errorMenu(): UssdMenu {
  return finish('ERROR', 'Something went wrong.', [HOME_OPTION]);
}

// ---- lookups shared with the machine ----

export function paginate<T>(items: readonly T[], page: number | undefined, size = PAGE_SIZE) {
  const totalPages = Math.max(1, Math.ceil(items.length / size));
  const p = page !== undefined && Number.isInteger(page) && page >= 1 && page <= totalPages ? page : 1;
  return { page: p, totalPages, items: items.slice((p - 1) * size, p * size) };
}

export function matchStocks(stocks: readonly UssdStock[], term: string): UssdStock[] {
  const t = term.trim().toLowerCase();
  return stocks.filter((s) => s.symbol.toLowerCase().includes(t) || s.name.toLowerCase().includes(t));
}

/** STOCKS list: the catalog sorted by symbol, limited to the search term's matches when set. */
export function stockList(context: UssdContext, data: UssdData): UssdStock[] {
  const sorted = [...data.stocks].sort((a, b) => (a.symbol < b.symbol ? -1 : a.symbol > b.symbol ? 1 : 0));
  return context.searchTerm === undefined ? sorted : matchStocks(sorted, context.searchTerm);
}

export const findStock = (context: UssdContext, data: UssdData): UssdStock | undefined =>
  data.stocks.find((s) => s.id === context.stockId);

/** Units of a stock the customer holds (0 when none). */
export function heldUnits(stockId: string | undefined, holdings: readonly UssdHolding[]): Decimal {
  const units = holdings.find((h) => h.stockId === stockId)?.units;
  return units === undefined ? new Big('0') : parseDecimal(units, 'units');
}

/** Units of a stock bought by executions not yet settled: held, but not available to sell. */
function pendingUnits(stockId: string | undefined, holdings: readonly UssdHolding[]): Decimal {
  const pending = holdings.find((h) => h.stockId === stockId)?.pending;
  return pending === undefined ? new Big('0') : parseDecimal(pending, 'units');
}

/** Whole units of a stock the customer may sell: those held and available (not pending settlement). */
export const sellableUnits = (stockId: string | undefined, holdings: readonly UssdHolding[]): Decimal =>
  wholeUnits(heldUnits(stockId, holdings).minus(pendingUnits(stockId, holdings)));

/** Held, but all or part of it waits for settlement (docs/ussd-and-payments.md, "Positions"). */
const pendingSettlement = (symbol: string, pending: Decimal) =>
  `${formatUnits(pending)} ${symbol} units are pending settlement and can be sold once settled (3 trading days after the buy).`;

const ZERO = new Big('0');
const ONE = new Big('1');
/** An amount with its own currency, as every screen shows one: `UGX 500.00`, `KES 1,000.00`. */
const shown = (amount: string, currency: string) => `${currency} ${formatMoney(money(amount, currency))}`;
const priceOf = (s: UssdStock) => parseDecimal(s.price, 'price');
const priceLine = (s: UssdStock) => `Price: ${s.currency} ${formatPrice(priceOf(s))}`;

/** The smallest buy of an instrument that names none (`min_order_amount` unset). */
export const DEFAULT_MIN_BUY_AMOUNT = new Big('100');
/** The smallest buy of `s` in its currency: its own minimum, else the default. */
export const minimumBuy = (s: UssdStock): Decimal =>
  s.minOrderAmount == null ? DEFAULT_MIN_BUY_AMOUNT : parseDecimal(s.minOrderAmount, 'minimum order amount');
/** The minimum as the buy screens name it: `100`, `1,000`, `150.50`. */
const minimumShown = (s: UssdStock) =>
  formatMoney({ amount: minimumBuy(s), currency: s.currency }).replace(/\.00$/, '');

export const findOrder = (context: UssdContext, data: UssdData): UssdOpenOrder | undefined =>
  data.openOrders.find((o) => o.id === context.orderId);

export function clip(value: string, max: number): string {
  return value.length <= max ? value : `${value.slice(0, max - 1).trimEnd()}.`;
}

// ---- the menus ----

const orderLine = (o: UssdOpenOrder) => `${o.side} ${o.symbol} ${shown(o.amount, o.currency)}`;
/** Short list label: `BUY SCOM KES 1,000` (decimals only when not .00; the details screen shows all). */
const requestLabel = (o: UssdOpenOrder) =>
  `${o.side} ${o.symbol} ${shown(o.amount, o.currency).replace(/\.00$/, '')}`;
const stockTitle = (s: UssdStock) => `${s.symbol} ${clip(s.name, 60)}`;
const NO_PHONE = 'Cannot proceed: no phone number is registered for payment.';
/** Orders are refused before any payment prompt outside the session (docs/market.md). */
export const MARKET_CLOSED = 'The market is closed. Orders are taken Mon-Fri 09:31-15:00 EAT.';

/** Why an order of `stock` cannot be taken now, when market hours are enforced; undefined: it can. */
function tradingRefusal(data: UssdData, stock: UssdStock): OrderRefusal | undefined {
  const trading = data.trading;
  if (!trading) return undefined;
  if (!trading.open) return { kind: 'MARKET_CLOSED', message: MARKET_CLOSED };
  const asOf = stock.priceAsOf ? Date.parse(stock.priceAsOf) : Number.NaN;
  if (Number.isNaN(asOf) || trading.nowMs - asOf > trading.maxAgeMs)
    return { kind: 'STALE_PRICE', message: `No current price for ${stock.symbol}. Try again later.` };
  return undefined;
}
/** A buy of an instrument held in whole units only that does not pay for one. */
const wholeUnitsOnly = (s: UssdStock) =>
  `${s.symbol} is sold in whole units only. One unit costs ${s.currency} ${formatPrice(priceOf(s))}.`;
/** No provider serves the customer's network: no order, never a prompt that will not come. */
const notAvailable = (network: string | null) =>
  `Payments from ${network ?? 'your network'} are not available yet.`;
/** The provider moves one currency only: an order in another is refused before it exists. */
const otherCurrency = (data: UssdData, currency: string): string | undefined => {
  const paid = data.customer.paymentCurrency;
  if (paid === null || paid === currency) return undefined;
  return `${data.customer.network ?? 'Your network'} pays in ${paid} only, not ${currency}.`;
};

/**
 * Why an order cannot be taken, as the confirmation screens say it: `kind` for callers other than
 * the screens (the investments API answers each with its own status).
 */
export type OrderRefusal = {
  kind:
    | 'NO_PHONE'
    | 'NO_PROVIDER'
    | 'OTHER_CURRENCY'
    | 'MARKET_CLOSED'
    | 'STALE_PRICE'
    | 'BELOW_MINIMUM'
    | 'WHOLE_UNITS_ONLY'
    | 'UNITS_NOT_AVAILABLE';
  message: string;
};

/** The refusals a buy and a sell share, in the screens' order: the payment route, then the market. */
function paymentOrMarketRefusal(data: UssdData, stock: UssdStock): OrderRefusal | undefined {
  if (!data.customer.hasMsisdn) return { kind: 'NO_PHONE', message: NO_PHONE };
  if (!data.customer.paymentsAvailable)
    return { kind: 'NO_PROVIDER', message: notAvailable(data.customer.network) };
  const currencyRefusal = otherCurrency(data, stock.currency);
  if (currencyRefusal) return { kind: 'OTHER_CURRENCY', message: currencyRefusal };
  return tradingRefusal(data, stock);
}

/**
 * Why a buy of `paid` of `stock` cannot be placed now (BUY_CONFIRM's refusals, in its order);
 * undefined: it can. Pure: the investments API refuses with the same rules.
 */
export function buyRefusal(data: UssdData, stock: UssdStock, paid: Money): OrderRefusal | undefined {
  const refusal = paymentOrMarketRefusal(data, stock);
  if (refusal) return refusal;
  // The instrument's rules as they are now: its minimum may have been raised since BUY_AMOUNT.
  if (paid.amount.lt(minimumBuy(stock)))
    return {
      kind: 'BELOW_MINIMUM',
      message: `The minimum for ${stock.symbol} is ${stock.currency} ${minimumShown(stock)}.`,
    };
  const fractional = stock.fractional !== false;
  if (!fractional && unitsToBuy(paid, priceOf(stock), fractional).lt(ONE))
    return { kind: 'WHOLE_UNITS_ONLY', message: wholeUnitsOnly(stock) };
  return undefined;
}

/**
 * Why a sell of `quantity` whole units of `stock` cannot be placed now (SELL_CONFIRM's refusals, in
 * its order: the units available first); undefined: it can.
 */
export function sellRefusal(
  data: UssdData,
  stock: UssdStock,
  quantity: Decimal,
): (OrderRefusal & { available?: Decimal; pending?: Decimal }) | undefined {
  const available = sellableUnits(stock.id, data.holdings);
  if (quantity.gt(available)) {
    const pending = pendingUnits(stock.id, data.holdings);
    const message = pending.gt(ZERO)
      ? pendingSettlement(stock.symbol, pending)
      : `You no longer hold ${plain(quantity)} units of ${stock.symbol}.`;
    return { kind: 'UNITS_NOT_AVAILABLE', message, available, pending };
  }
  return paymentOrMarketRefusal(data, stock);
}

/** Text built from lines, dropping list lines (with a "+n more" line) until the screen fits. */
function fitList(head: string[], list: string[], tail: string[], options: UssdOption[]) {
  for (let n = list.length; ; n--) {
    const more = n < list.length ? [`+${list.length - n} more`] : [];
    const text = [...head, ...list.slice(0, n), ...more, ...tail].join('\n');
    if (n === 0 || ussdText({ text, options }).length <= MAX_USSD_TEXT) return text;
  }
}

export function renderMenu(
  state: UssdState,
  context: UssdContext,
  data: UssdData,
  extra: { notice?: string; orderId?: string } = {},
): UssdMenu {
  const m = (text: string, options: UssdOption[]) => finish(state, text, options, extra.notice);
  const gone = (text: string) => m(text, [HOME_OPTION]);
  const stock = findStock(context, data);
  const order = findOrder(context, data);
  const orderId = extra.orderId ?? context.orderId;
  const ref = orderId ? ` Ref ${orderId}` : '';
  switch (state) {
    case 'HOME':
      return m(`Welcome to ${clip(data.organizationName, 80)}`, [
        { key: '1', label: 'Stocks', nextState: 'STOCKS' },
        { key: '2', label: 'My Portfolio', nextState: 'PORTFOLIO' },
      ]);
    case 'STOCKS': {
      const all = stockList(context, data);
      const { page, totalPages, items } = paginate(all, context.stocksPage);
      const term = context.searchTerm === undefined ? '' : ` matching ${clip(context.searchTerm, 20)}`;
      const text =
        all.length === 0
          ? `No stocks${term || ' listed'}.`
          : `Select a stock${term} (page ${page}/${totalPages})`;
      const listed: UssdOption[] = items.map((s, i) => ({
        key: String(i + 1),
        label: `${s.symbol} ${s.name}`,
        nextState: 'SELECT_STOCK',
        data: { stockId: s.id, symbol: s.symbol, name: s.name },
      }));
      return m(text, [
        ...listed,
        { key: '7', label: 'Next' },
        { key: '8', label: 'Search', nextState: 'SEARCH_STOCK' },
        HOME_OPTION,
      ]);
    }
    case 'SEARCH_STOCK':
      return m('Enter stock name or symbol', [HOME_OPTION]);
    case 'SELECT_STOCK': {
      if (!stock) return gone('This stock is no longer available.');
      const held = heldUnits(stock.id, data.holdings);
      const sellable = wholeUnits(held).gte(ONE);
      const lines = [stockTitle(stock), priceLine(stock)];
      if (held.gt(ZERO)) lines.push(`You hold ${formatUnits(held)} units`);
      const options: UssdOption[] = [{ key: '1', label: 'Buy', nextState: 'BUY_AMOUNT' }];
      if (sellable) options.push({ key: '2', label: 'Sell', nextState: 'SELL_QUANTITY' });
      return m(lines.join('\n'), [...options, HOME_OPTION]);
    }
    case 'BUY_AMOUNT':
      if (!stock) return gone('This stock is no longer available.');
      return m(`Buy ${stock.symbol}\nEnter amount (${stock.currency}), min ${minimumShown(stock)}`, [
        HOME_OPTION,
      ]);
    case 'BUY_CONFIRM': {
      if (!stock || context.amount === undefined) return gone('This stock is no longer available.');
      const paid = money(context.amount, stock.currency);
      const head = `Buy ${stock.symbol} for ${stock.currency} ${formatMoney(paid)}`;
      const refusal = buyRefusal(data, stock, paid);
      if (refusal) return gone(`${head}\n${refusal.message}`);
      const fractional = stock.fractional !== false;
      const units = unitsToBuy(paid, priceOf(stock), fractional);
      const estimate = fractional ? formatEstimatedUnits(units) : formatUnits(units);
      return m(`${head}\n${priceLine(stock)}\nEst. units: ${estimate}`, [
        { key: '1', label: 'Confirm', nextState: 'BUY_SUBMITTED' },
        { key: '2', label: 'Cancel', nextState: 'HOME' },
      ]);
    }
    case 'BUY_SUBMITTED':
      return m(`Request received. Approve the payment prompt on your phone.${ref}`, []);
    case 'SELL_QUANTITY': {
      if (!stock) return gone('This stock is no longer available.');
      const max = sellableUnits(stock.id, data.holdings);
      const pending = pendingUnits(stock.id, data.holdings);
      if (max.lt(ONE) && pending.gt(ZERO)) return gone(pendingSettlement(stock.symbol, pending));
      if (max.lt(ONE)) return gone(`You hold no whole units of ${stock.symbol}.`);
      return m(`Sell ${stock.symbol}\nEnter units to sell (max ${plain(max)})`, [HOME_OPTION]);
    }
    case 'SELL_CONFIRM': {
      const q = context.quantity;
      if (!stock || q === undefined) return gone('This stock is no longer available.');
      const head = `Sell ${q} ${stock.symbol} units`;
      const refusal = sellRefusal(data, stock, parseDecimal(q, 'quantity', 0));
      if (refusal?.kind === 'UNITS_NOT_AVAILABLE') return gone(refusal.message);
      if (refusal) return gone(`${head}\n${refusal.message}`);
      const value = formatMoney(proceeds(parseDecimal(q, 'quantity', 0), priceOf(stock), stock.currency));
      return m(`${head}\n${priceLine(stock)}\nEst. proceeds: ${stock.currency} ${value}`, [
        { key: '1', label: 'Confirm', nextState: 'SELL_SUBMITTED' },
        { key: '2', label: 'Cancel', nextState: 'HOME' },
      ]);
    }
    case 'SELL_SUBMITTED':
      return m(`Request received. The proceeds will be paid to your phone.${ref}`, []);
    case 'PORTFOLIO': {
      const options: UssdOption[] = [
        { key: '1', label: 'Open requests', nextState: 'REQUESTS' },
        HOME_OPTION,
      ];
      const held = data.holdings.filter((h) => parseDecimal(h.units, 'units').gt(ZERO));
      const list = held.map(
        (h) =>
          `${h.symbol} ${formatUnits(parseDecimal(h.units, 'units'))} units, ${shown(h.value, h.currency)}`,
      );
      const head = [extra.notice, 'My Portfolio'].filter((l) => l !== undefined);
      const tail = [
        ...(held.length === 0 ? ['No holdings.'] : []),
        `Open requests: ${data.openOrders.length}`,
      ];
      return finish(state, fitList(head, list, tail, options), options);
    }
    case 'REQUESTS': {
      const { page, totalPages, items } = paginate(data.openOrders, context.requestsPage, REQUESTS_PAGE_SIZE);
      if (items.length === 0) return gone('No open requests.');
      const listed: UssdOption[] = items.map((o, i) => ({
        key: String(i + 1),
        label: requestLabel(o),
        nextState: 'REQUEST_DETAILS',
      }));
      const next: UssdOption[] = totalPages > 1 ? [{ key: '7', label: 'Next' }] : [];
      return m(`Open requests (${page}/${totalPages})`, [...listed, ...next, HOME_OPTION]);
    }
    case 'REQUEST_DETAILS':
      if (!order) return gone('This request is no longer open.');
      return m(`${orderLine(order)}\nStatus: ${order.status}\nRef ${order.id}`, [
        { key: '1', label: 'Cancel request', nextState: 'CANCEL_REQUEST_CONFIRMATION' },
        HOME_OPTION,
      ]);
    case 'CANCEL_REQUEST_CONFIRMATION':
      if (!order) return gone('This request is no longer open.');
      return m(`Cancel this request?\n${orderLine(order)}`, [
        { key: '1', label: 'Yes, cancel', action: 'CANCEL_ORDER' },
        { key: '2', label: 'No', nextState: 'HOME' },
      ]);
    case 'REQUEST_CANCELLED':
      return m(`Request cancelled.${ref}`, []);
    case 'ERROR':
      return m('Something went wrong.', [HOME_OPTION]);
  }
  const _exhaustive: never = state;
  throw new Error(`Unknown USSD state: ${String(_exhaustive)}`);
}
