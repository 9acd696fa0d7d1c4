/**
 * The USSD menu tree as a pure state machine: no I/O, no database, no clock.
 *
 * How a caller drives it (one DB transaction per move):
 *   1. Load the session row (state, context) and a fresh `UssdData` snapshot (organization name,
 *      customer, full listed stock catalog, holdings, open orders).
 *   2. `const r = move({ state, context, choice, data })`.
 *   3. Execute `r.effects` in order (CREATE_BUY_ORDER / CREATE_SELL_ORDER / CANCEL_ORDER).
 *   4. The submitted screens show the new order's id, which is only known after step 3: for
 *      CREATE_BUY_ORDER and CREATE_SELL_ORDER call `completeSubmission(r.state, r.context, orderId)`
 *      and use its screen (it stores the id in `context.orderId`). CANCEL_ORDER needs no follow-up.
 *   5. Persist `state` and `context`; return `menu` and `ussdText`. A menu with `isEndState` ends the
 *      session; `move` throws if called from an end state. Any exception (bad data, failed effect)
 *      should be turned into the ERROR screen: `errorScreen()`.
 *
 * A choice that is not a key of the current menu keeps the state with `Invalid choice.` on the first
 * line. Texts are in `data.language` (menus.ts). Free-text states: SEARCH_STOCK (search term), BUY_AMOUNT (whole, from the instrument's
 * minimum, 100 unless it names one, to 1,000,000 in the stock's currency) and SELL_QUANTITY (whole
 * units 1..holding); their only key is 0 (Home).
 */
import { DEFAULT_LANGUAGE, type Language } from '../../i18n/index.ts';
import { Big, parseWholeInput, plain } from '../../lib/money.ts';
import {
  DEFAULT_MIN_BUY_AMOUNT,
  errorMenu,
  findStock,
  minimumBuy,
  paginate,
  REQUESTS_PAGE_SIZE,
  renderMenu,
  sellableUnits,
  stockList,
  ussdMessage,
  ussdText,
} from './menus.ts';
import {
  isEndState,
  type MoveInput,
  type MoveResult,
  type UssdContext,
  type UssdData,
  type UssdEffect,
  type UssdScreen,
  type UssdState,
} from './types.ts';

export { errorMenu, isEndState, renderMenu, ussdText };

export const MAX_BUY_AMOUNT = new Big('1000000');
const ONE = new Big('1');

export function initialContext(): UssdContext {
  return { stocksPage: 1 };
}

/** Renders any state as a screen (the caller may use it to re-show the stored session). */
export function screen(state: UssdState, context: UssdContext, data: UssdData, notice?: string): UssdScreen {
  const menu = renderMenu(state, context, data, notice === undefined ? {} : { notice });
  return { state, context, menu, ussdText: ussdText(menu) };
}

export function startSession(data: UssdData): UssdScreen {
  return screen('HOME', initialContext(), data);
}

export function errorScreen(language: Language = DEFAULT_LANGUAGE): UssdScreen {
  const menu = errorMenu(language);
  return { state: 'ERROR', context: initialContext(), menu, ussdText: ussdText(menu) };
}

/** The BUY_SUBMITTED / SELL_SUBMITTED screen once the created order's id is known. */
export function completeSubmission(
  state: UssdState,
  context: UssdContext,
  orderId: string,
  language: Language = DEFAULT_LANGUAGE,
): UssdScreen {
  if (state !== 'BUY_SUBMITTED' && state !== 'SELL_SUBMITTED') {
    throw new Error(`completeSubmission: ${state} is not a submitted state`);
  }
  const next = { ...context, orderId };
  const menu = renderMenu(state, next, { ...emptyData, language });
  return { state, context: next, menu, ussdText: ussdText(menu) };
}

// The submitted screens do not read the data snapshot.
const emptyData: UssdData = {
  organizationName: '',
  customer: { id: '', hasMsisdn: false, paymentsAvailable: false, network: null, paymentCurrency: null },
  stocks: [],
  holdings: [],
  openOrders: [],
};

const wrap = (page: number, totalPages: number) => (page >= totalPages ? 1 : page + 1);

export function move(input: MoveInput): MoveResult {
  const { state, context: ctx, data } = input;
  const notice = (id: string, values?: Record<string, string>) =>
    ussdMessage(data.language ?? DEFAULT_LANGUAGE, `notice.${id}`, values);
  const choice = input.choice.trim();
  if (isEndState(state)) throw new Error(`USSD session in end state ${state} cannot move`);

  const go = (next: UssdState, context: UssdContext, effects: UssdEffect[] = [], notice?: string) => ({
    ...screen(next, context, data, notice),
    effects,
  });
  const invalid = () => go(state, ctx, [], notice('invalidChoice'));
  const option = renderMenu(state, ctx, data).options.find((o) => o.key === choice);
  if (option?.nextState === 'HOME') return go('HOME', initialContext());

  switch (state) {
    case 'HOME':
      return option?.nextState ? go(option.nextState, initialContext()) : invalid();
    case 'STOCKS': {
      if (option?.key === '7') {
        const { page, totalPages } = paginate(stockList(ctx, data), ctx.stocksPage);
        return go('STOCKS', { ...ctx, stocksPage: wrap(page, totalPages) });
      }
      if (option?.data) return go('SELECT_STOCK', { ...ctx, stockId: option.data.stockId });
      return option?.nextState ? go(option.nextState, ctx) : invalid();
    }
    case 'SEARCH_STOCK': {
      if (choice === '') return invalid();
      const found = stockList({ stocksPage: 1, searchTerm: choice }, data).length > 0;
      if (!found) return go('SEARCH_STOCK', ctx, [], notice('noMatch', { term: choice }));
      return go('STOCKS', { ...ctx, stocksPage: 1, searchTerm: choice });
    }
    case 'SELECT_STOCK':
    case 'PORTFOLIO':
    case 'REQUEST_DETAILS':
    case 'ERROR': {
      if (!option?.nextState) return invalid();
      return go(option.nextState, option.nextState === 'REQUESTS' ? { ...ctx, requestsPage: 1 } : ctx);
    }
    case 'BUY_AMOUNT': {
      const stock = findStock(ctx, data);
      const min = stock ? minimumBuy(stock) : DEFAULT_MIN_BUY_AMOUNT;
      const amount = parseWholeInput(choice, min, MAX_BUY_AMOUNT);
      if (amount === undefined || !ctx.stockId) return go(state, ctx, [], notice('invalidAmount'));
      return go('BUY_CONFIRM', { ...ctx, amount: plain(amount) });
    }
    case 'BUY_CONFIRM': {
      if (option?.nextState !== 'BUY_SUBMITTED' || !ctx.stockId || !ctx.amount) return invalid();
      return go('BUY_SUBMITTED', ctx, [
        { type: 'CREATE_BUY_ORDER', stockId: ctx.stockId, amount: ctx.amount },
      ]);
    }
    case 'SELL_QUANTITY': {
      const quantity = parseWholeInput(choice, ONE, sellableUnits(ctx.stockId, data.holdings));
      if (quantity === undefined || !ctx.stockId) return go(state, ctx, [], notice('invalidQuantity'));
      return go('SELL_CONFIRM', { ...ctx, quantity: plain(quantity) });
    }
    case 'SELL_CONFIRM': {
      if (option?.nextState !== 'SELL_SUBMITTED' || !ctx.stockId || ctx.quantity === undefined)
        return invalid();
      const effect: UssdEffect = { type: 'CREATE_SELL_ORDER', stockId: ctx.stockId, quantity: ctx.quantity };
      return go('SELL_SUBMITTED', ctx, [effect]);
    }
    case 'REQUESTS': {
      const { page, totalPages, items } = paginate(data.openOrders, ctx.requestsPage, REQUESTS_PAGE_SIZE);
      if (option?.key === '7') return go('REQUESTS', { ...ctx, requestsPage: wrap(page, totalPages) });
      const picked = option?.nextState === 'REQUEST_DETAILS' ? items[Number(option.key) - 1] : undefined;
      return picked ? go('REQUEST_DETAILS', { ...ctx, orderId: picked.id }) : invalid();
    }
    case 'CANCEL_REQUEST_CONFIRMATION': {
      if (option?.action !== 'CANCEL_ORDER' || !ctx.orderId) return invalid();
      return go('REQUEST_CANCELLED', ctx, [{ type: 'CANCEL_ORDER', orderId: ctx.orderId }]);
    }
    case 'BUY_SUBMITTED':
    case 'SELL_SUBMITTED':
    case 'REQUEST_CANCELLED':
      return invalid(); // unreachable: end states are rejected above
  }
  const _exhaustive: never = state;
  throw new Error(`Unknown USSD state: ${String(_exhaustive)}`);
}
