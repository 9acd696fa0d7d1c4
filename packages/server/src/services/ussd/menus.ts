/**
 * USSD menus as data, and their one rendering function. Pure: no I/O.
 *
 * `renderMenu(state, context, data, extra?)` builds the menu of a state from the session context and
 * the data snapshot. Every menu goes through `finish`, which guarantees `ussdText(menu).length <= 182`:
 * long lists paginate (5 per page), long labels are shortened (longest first), and as a last resort
 * the text is cut. Amounts, prices and units are formatted by the money module (exact decimals).
 * Every text is a message of the catalogues (`ussd.*`, src/i18n), in the language of `data.language`
 * (absent: English); docs/languages.md.
 */
import { DEFAULT_LANGUAGE, type Language, type MessageValues, message } from '../../i18n/index.ts';
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

/** A USSD text of the catalogues: `ussd.<id>` in `language`. */
export const ussdMessage = (language: Language, id: string, values?: MessageValues): string =>
  message(language, `ussd.${id}`, values);

const homeOption = (language: Language): UssdOption => ({
  key: '0',
  label: ussdMessage(language, 'option.home'),
  nextState: 'HOME',
});

export function errorMenu(language: Language = DEFAULT_LANGUAGE): UssdMenu {
  return finish('ERROR', ussdMessage(language, 'error'), [homeOption(language)]);
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
const pendingSettlement = (language: Language, symbol: string, pending: Decimal) =>
  ussdMessage(language, 'refusal.pendingSettlement', { units: formatUnits(pending), symbol });

const ZERO = new Big('0');
const ONE = new Big('1');
/** An amount as every screen shows one after its currency: `500.00`, `1,000.00`. */
const shown = (amount: string, currency: string) => formatMoney(money(amount, currency));
const priceOf = (s: UssdStock) => parseDecimal(s.price, 'price');
const priceLine = (language: Language, s: UssdStock) =>
  ussdMessage(language, 'stock.price', { currency: s.currency, price: formatPrice(priceOf(s)) });

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

/** `BUY SCOM KES 1,000.00`; `short`: decimals only when not .00 (list labels; details show all). */
const orderLine = (language: Language, o: UssdOpenOrder, short = false) => {
  const amount = shown(o.amount, o.currency);
  return ussdMessage(language, 'order.line', {
    side: o.side,
    symbol: o.symbol,
    currency: o.currency,
    amount: short ? amount.replace(/\.00$/, '') : amount,
  });
};
const stockTitle = (s: UssdStock) => `${s.symbol} ${clip(s.name, 60)}`;
/** The value of an optional select argument that is absent (never an order id or a network). */
const NONE = 'none';
/** Orders are refused before any payment prompt outside the session (docs/market.md). */
export const MARKET_CLOSED = ussdMessage('en', 'refusal.marketClosed');

/** Why an order of `stock` cannot be taken now, when market hours are enforced; undefined: it can. */
function tradingRefusal(language: Language, data: UssdData, stock: UssdStock): OrderRefusal | undefined {
  const trading = data.trading;
  if (!trading) return undefined;
  if (!trading.open) return { kind: 'MARKET_CLOSED', message: ussdMessage(language, 'refusal.marketClosed') };
  const asOf = stock.priceAsOf ? Date.parse(stock.priceAsOf) : Number.NaN;
  if (Number.isNaN(asOf) || trading.nowMs - asOf > trading.maxAgeMs)
    return {
      kind: 'STALE_PRICE',
      message: ussdMessage(language, 'refusal.stalePrice', { symbol: stock.symbol }),
    };
  return undefined;
}
/** A buy of an instrument held in whole units only that does not pay for one. */
const wholeUnitsOnly = (language: Language, s: UssdStock) =>
  ussdMessage(language, 'refusal.wholeUnitsOnly', {
    symbol: s.symbol,
    currency: s.currency,
    price: formatPrice(priceOf(s)),
  });
/** The provider moves one currency only: an order in another is refused before it exists. */
const otherCurrency = (language: Language, data: UssdData, currency: string): string | undefined => {
  const paid = data.customer.paymentCurrency;
  if (paid === null || paid === currency) return undefined;
  const network = data.customer.network ?? NONE;
  return ussdMessage(language, 'refusal.otherCurrency', { network, paid, currency });
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
function paymentOrMarketRefusal(
  language: Language,
  data: UssdData,
  stock: UssdStock,
): OrderRefusal | undefined {
  if (!data.customer.hasMsisdn)
    return { kind: 'NO_PHONE', message: ussdMessage(language, 'refusal.noPhone') };
  // No provider serves the customer's network: no order, never a prompt that will not come.
  if (!data.customer.paymentsAvailable) {
    const network = data.customer.network ?? NONE;
    return { kind: 'NO_PROVIDER', message: ussdMessage(language, 'refusal.noProvider', { network }) };
  }
  const currencyRefusal = otherCurrency(language, data, stock.currency);
  if (currencyRefusal) return { kind: 'OTHER_CURRENCY', message: currencyRefusal };
  return tradingRefusal(language, data, stock);
}

/**
 * Why a buy of `paid` of `stock` cannot be placed now (BUY_CONFIRM's refusals, in its order);
 * undefined: it can. Pure: the investments API refuses with the same rules, its messages in English.
 */
export function buyRefusal(
  data: UssdData,
  stock: UssdStock,
  paid: Money,
  language: Language = DEFAULT_LANGUAGE,
): OrderRefusal | undefined {
  const refusal = paymentOrMarketRefusal(language, data, stock);
  if (refusal) return refusal;
  // The instrument's rules as they are now: its minimum may have been raised since BUY_AMOUNT.
  if (paid.amount.lt(minimumBuy(stock)))
    return {
      kind: 'BELOW_MINIMUM',
      message: ussdMessage(language, 'refusal.belowMinimum', {
        symbol: stock.symbol,
        currency: stock.currency,
        minimum: minimumShown(stock),
      }),
    };
  const fractional = stock.fractional !== false;
  if (!fractional && unitsToBuy(paid, priceOf(stock), fractional).lt(ONE))
    return { kind: 'WHOLE_UNITS_ONLY', message: wholeUnitsOnly(language, stock) };
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
  language: Language = DEFAULT_LANGUAGE,
): (OrderRefusal & { available?: Decimal; pending?: Decimal }) | undefined {
  const available = sellableUnits(stock.id, data.holdings);
  if (quantity.gt(available)) {
    const pending = pendingUnits(stock.id, data.holdings);
    const message = pending.gt(ZERO)
      ? pendingSettlement(language, stock.symbol, pending)
      : ussdMessage(language, 'refusal.notHeld', { quantity: plain(quantity), symbol: stock.symbol });
    return { kind: 'UNITS_NOT_AVAILABLE', message, available, pending };
  }
  return paymentOrMarketRefusal(language, data, stock);
}

/** Text built from lines, dropping list lines (with a "+n more" line) until the screen fits. */
function fitList(language: Language, head: string[], list: string[], tail: string[], options: UssdOption[]) {
  for (let n = list.length; ; n--) {
    const more = n < list.length ? [ussdMessage(language, 'list.more', { count: list.length - n })] : [];
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
  const language = data.language ?? DEFAULT_LANGUAGE;
  const t = (id: string, values?: MessageValues) => ussdMessage(language, id, values);
  const home = homeOption(language);
  const m = (text: string, options: UssdOption[]) => finish(state, text, options, extra.notice);
  const gone = (text: string) => m(text, [home]);
  const stock = findStock(context, data);
  const order = findOrder(context, data);
  const ref = extra.orderId ?? context.orderId ?? NONE;
  const stockGone = () => gone(t('stock.gone'));
  switch (state) {
    case 'HOME':
      return m(t('home.welcome', { organization: clip(data.organizationName, 80) }), [
        { key: '1', label: t('option.stocks'), nextState: 'STOCKS' },
        { key: '2', label: t('option.portfolio'), nextState: 'PORTFOLIO' },
      ]);
    case 'STOCKS': {
      const all = stockList(context, data);
      const { page, totalPages: pages, items } = paginate(all, context.stocksPage);
      const term = context.searchTerm === undefined ? undefined : clip(context.searchTerm, 20);
      const text =
        all.length === 0
          ? term === undefined
            ? t('stocks.empty')
            : t('stocks.noMatch', { term })
          : term === undefined
            ? t('stocks.select', { page, pages })
            : t('stocks.selectMatching', { term, page, pages });
      const listed: UssdOption[] = items.map((s, i) => ({
        key: String(i + 1),
        label: `${s.symbol} ${s.name}`,
        nextState: 'SELECT_STOCK',
        data: { stockId: s.id, symbol: s.symbol, name: s.name },
      }));
      return m(text, [
        ...listed,
        { key: '7', label: t('option.next') },
        { key: '8', label: t('option.search'), nextState: 'SEARCH_STOCK' },
        home,
      ]);
    }
    case 'SEARCH_STOCK':
      return m(t('search.prompt'), [home]);
    case 'SELECT_STOCK': {
      if (!stock) return stockGone();
      const held = heldUnits(stock.id, data.holdings);
      const sellable = wholeUnits(held).gte(ONE);
      const lines = [stockTitle(stock), priceLine(language, stock)];
      if (held.gt(ZERO)) lines.push(t('stock.held', { units: formatUnits(held) }));
      const options: UssdOption[] = [{ key: '1', label: t('option.buy'), nextState: 'BUY_AMOUNT' }];
      if (sellable) options.push({ key: '2', label: t('option.sell'), nextState: 'SELL_QUANTITY' });
      return m(lines.join('\n'), [...options, home]);
    }
    case 'BUY_AMOUNT':
      if (!stock) return stockGone();
      return m(
        t('buy.amount', { symbol: stock.symbol, currency: stock.currency, minimum: minimumShown(stock) }),
        [home],
      );
    case 'BUY_CONFIRM': {
      if (!stock || context.amount === undefined) return stockGone();
      const paid = money(context.amount, stock.currency);
      const head = t('buy.head', {
        symbol: stock.symbol,
        currency: stock.currency,
        amount: formatMoney(paid),
      });
      const refusal = buyRefusal(data, stock, paid, language);
      if (refusal) return gone(`${head}\n${refusal.message}`);
      const fractional = stock.fractional !== false;
      const units = unitsToBuy(paid, priceOf(stock), fractional);
      const estimate = fractional ? formatEstimatedUnits(units) : formatUnits(units);
      return m(`${head}\n${priceLine(language, stock)}\n${t('buy.estimate', { units: estimate })}`, [
        { key: '1', label: t('option.confirm'), nextState: 'BUY_SUBMITTED' },
        { key: '2', label: t('option.cancel'), nextState: 'HOME' },
      ]);
    }
    case 'BUY_SUBMITTED':
      return m(t('buy.submitted', { ref }), []);
    case 'SELL_QUANTITY': {
      if (!stock) return stockGone();
      const max = sellableUnits(stock.id, data.holdings);
      const pending = pendingUnits(stock.id, data.holdings);
      if (max.lt(ONE) && pending.gt(ZERO)) return gone(pendingSettlement(language, stock.symbol, pending));
      if (max.lt(ONE)) return gone(t('refusal.noWholeUnits', { symbol: stock.symbol }));
      return m(t('sell.quantity', { symbol: stock.symbol, max: plain(max) }), [home]);
    }
    case 'SELL_CONFIRM': {
      const q = context.quantity;
      if (!stock || q === undefined) return stockGone();
      const head = t('sell.head', { quantity: q, symbol: stock.symbol });
      const refusal = sellRefusal(data, stock, parseDecimal(q, 'quantity', 0), language);
      if (refusal?.kind === 'UNITS_NOT_AVAILABLE') return gone(refusal.message);
      if (refusal) return gone(`${head}\n${refusal.message}`);
      const value = formatMoney(proceeds(parseDecimal(q, 'quantity', 0), priceOf(stock), stock.currency));
      const estimate = t('sell.proceeds', { currency: stock.currency, value });
      return m(`${head}\n${priceLine(language, stock)}\n${estimate}`, [
        { key: '1', label: t('option.confirm'), nextState: 'SELL_SUBMITTED' },
        { key: '2', label: t('option.cancel'), nextState: 'HOME' },
      ]);
    }
    case 'SELL_SUBMITTED':
      return m(t('sell.submitted', { ref }), []);
    case 'PORTFOLIO': {
      const options: UssdOption[] = [
        { key: '1', label: t('option.openRequests'), nextState: 'REQUESTS' },
        home,
      ];
      const held = data.holdings.filter((h) => parseDecimal(h.units, 'units').gt(ZERO));
      const list = held.map((h) =>
        t('portfolio.holding', {
          symbol: h.symbol,
          units: formatUnits(parseDecimal(h.units, 'units')),
          currency: h.currency,
          value: shown(h.value, h.currency),
        }),
      );
      const head = [extra.notice, t('portfolio.title')].filter((l) => l !== undefined);
      const tail = [
        ...(held.length === 0 ? [t('portfolio.none')] : []),
        t('portfolio.openCount', { count: data.openOrders.length }),
      ];
      return finish(state, fitList(language, head, list, tail, options), options);
    }
    case 'REQUESTS': {
      const {
        page,
        totalPages: pages,
        items,
      } = paginate(data.openOrders, context.requestsPage, REQUESTS_PAGE_SIZE);
      if (items.length === 0) return gone(t('requests.none'));
      const listed: UssdOption[] = items.map((o, i) => ({
        key: String(i + 1),
        label: orderLine(language, o, true),
        nextState: 'REQUEST_DETAILS',
      }));
      const next: UssdOption[] = pages > 1 ? [{ key: '7', label: t('option.next') }] : [];
      return m(t('requests.title', { page, pages }), [...listed, ...next, home]);
    }
    case 'REQUEST_DETAILS':
      if (!order) return gone(t('request.gone'));
      return m(
        t('request.details', { order: orderLine(language, order), status: order.status, ref: order.id }),
        [{ key: '1', label: t('option.cancelRequest'), nextState: 'CANCEL_REQUEST_CONFIRMATION' }, home],
      );
    case 'CANCEL_REQUEST_CONFIRMATION':
      if (!order) return gone(t('request.gone'));
      return m(t('cancel.confirm', { order: orderLine(language, order) }), [
        { key: '1', label: t('option.yesCancel'), action: 'CANCEL_ORDER' },
        { key: '2', label: t('option.no'), nextState: 'HOME' },
      ]);
    case 'REQUEST_CANCELLED':
      return m(t('cancel.done', { ref }), []);
    case 'ERROR':
      return m(t('error'), [home]);
  }
  const _exhaustive: never = state;
  throw new Error(`Unknown USSD state: ${String(_exhaustive)}`);
}
