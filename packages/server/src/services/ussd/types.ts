import type { Language } from '../../i18n/index.ts';

/**
 * Types of the pure USSD menu state machine (see machine.ts for the flow).
 * Everything here is plain JSON-serializable data: the caller stores `state` and `context`
 * in the session row and loads a fresh `UssdData` snapshot before every move.
 */

export const USSD_STATES = [
  'HOME',
  'STOCKS',
  'SEARCH_STOCK',
  'SELECT_STOCK',
  'BUY_AMOUNT',
  'BUY_CONFIRM',
  'BUY_SUBMITTED',
  'SELL_QUANTITY',
  'SELL_CONFIRM',
  'SELL_SUBMITTED',
  'PORTFOLIO',
  'REQUESTS',
  'REQUEST_DETAILS',
  'CANCEL_REQUEST_CONFIRMATION',
  'REQUEST_CANCELLED',
  'ERROR',
] as const;

export type UssdState = (typeof USSD_STATES)[number];

/** States whose menu has `isEndState: true`: the session is no longer active after them. */
export const END_STATES: readonly UssdState[] = ['BUY_SUBMITTED', 'SELL_SUBMITTED', 'REQUEST_CANCELLED'];

export function isEndState(state: UssdState): boolean {
  return END_STATES.includes(state);
}

/** Operations an option performs instead of navigating (spec: only `CANCEL_ORDER` is known). */
export type UssdAction = 'CANCEL_ORDER';

/** Spec "Option object". `nextState` and `action` are mutually exclusive; Next carries neither. */
export interface UssdOption {
  key: string;
  label: string;
  nextState?: UssdState;
  action?: UssdAction;
  data?: { stockId: string; symbol: string; name: string };
}

/** Spec "Menu object". */
export interface UssdMenu {
  state: UssdState;
  text: string;
  options: UssdOption[];
  isEndState: boolean;
}

/** Session context kept between moves (JSON-serializable; stored by the caller). */
export interface UssdContext {
  /** 1-based page of the STOCKS list (wraps). */
  stocksPage: number;
  /** When set, STOCKS lists only the stocks matching this term (symbol or name, case-insensitive). */
  searchTerm?: string;
  /** Stock chosen in STOCKS (SELECT_STOCK, BUY_*, SELL_*). */
  stockId?: string;
  /** Buy amount in whole KES, e.g. '1000' (BUY_CONFIRM). */
  amount?: string;
  /** Whole units to sell, e.g. '3' (SELL_CONFIRM). */
  quantity?: string;
  /** 1-based page of the REQUESTS list (wraps). */
  requestsPage?: number;
  /** Order shown in REQUEST_DETAILS / CANCEL_REQUEST_CONFIRMATION, or created by a submission. */
  orderId?: string;
}

export interface UssdStock {
  id: string;
  symbol: string;
  name: string;
  /** Decimal string with up to 4 decimals, e.g. '28.50'. */
  price: string;
  currency: string;
  /** When `price` was true (ISO time); null: never recorded. */
  priceAsOf?: string | null;
  /** Smallest buy in `currency`, a decimal string ('500.00'); null or absent: the platform's 100. */
  minOrderAmount?: string | null;
  /** Whether a buyer may get fractions of a unit; absent: true. False: whole units only. */
  fractional?: boolean;
}

export interface UssdHolding {
  stockId: string;
  symbol: string;
  /** Decimal string with up to 4 decimals, e.g. '10.5000'. */
  units: string;
  /** Of `units`, those pending settlement (not available to sell); absent: none. */
  pending?: string;
  /** Decimal string, e.g. '2850.00', in `currency` (the stock's). */
  value: string;
  currency: string;
}

export interface UssdOpenOrder {
  id: string;
  side: 'BUY' | 'SELL';
  symbol: string;
  /** Decimal string, e.g. '1000.00', in `currency` (the order's). */
  amount: string;
  currency: string;
  status: string;
}

/** Snapshot the caller loads before each move. `stocks` is the full listed catalog. */
export interface UssdData {
  organizationName: string;
  /** The language of the screens: the customer's, else the organization's; absent: English. */
  language?: Language;
  customer: {
    id: string;
    hasMsisdn: boolean;
    /** Whether a provider serves the network of the customer's number (the adapter registry). */
    paymentsAvailable: boolean;
    /** That network as customers call it ('M-Pesa'); null without a number. */
    network: string | null;
    /** The only currency the serving provider moves; null: any (the sandbox simulator) or none. */
    paymentCurrency: string | null;
  };
  stocks: UssdStock[];
  holdings: UssdHolding[];
  /** Open (cancellable) orders of the customer, in display order (e.g. newest first). */
  openOrders: UssdOpenOrder[];
  /**
   * Market hours and price ages, when they are enforced (docs/market.md, "Orders and market hours"):
   * whether the market is in its continuous session now, now, and the oldest price an order may use.
   * Absent: always open (the sandbox's default).
   */
  trading?: { open: boolean; nowMs: number; maxAgeMs: number };
}

/** Writes the caller performs in the same DB transaction as the move. */
export type UssdEffect =
  | { type: 'CREATE_BUY_ORDER'; stockId: string; amount: string }
  | { type: 'CREATE_SELL_ORDER'; stockId: string; quantity: string }
  | { type: 'CANCEL_ORDER'; orderId: string };

/** A screen: what the caller persists (state, context) and returns (menu, ussdText). */
export interface UssdScreen {
  state: UssdState;
  context: UssdContext;
  menu: UssdMenu;
  ussdText: string;
}

export interface MoveInput {
  state: UssdState;
  context: UssdContext;
  choice: string;
  data: UssdData;
}

export interface MoveResult extends UssdScreen {
  effects: UssdEffect[];
}
