import type {
  Account,
  AccountLanguage,
  AccountList,
  AccountStatus,
  Asset,
  Customer,
  CustomerCreate,
  CustomerList,
  CustomerUpdate,
  DailyBar,
  IdentificationType,
  Instrument,
  InstrumentList,
  InstrumentPrices,
  InvestmentRequest,
  InvestmentType,
  InvestmentTypeId,
  LatestPrice,
  LedgerTransactionType,
  MonthlyStatementData,
  Organization,
  PaymentStatus,
  PaymentTransaction,
  Portfolio,
  PortfolioPosition,
  Report,
  ReportList,
  ReportType,
  RequestList,
  RequestSide,
  RequestStatus,
  TokenResponse,
  TradeConfirmationData,
  TradingStatus,
  Transaction,
  TransactionList,
  TransactionStatus,
  UssdResponse,
  UssdSessionData,
  WebhookKeyResponse,
} from '@partner-api/contract';

export type {
  /** Investments (preview, INVESTMENTS_PREVIEW): docs/investments.md. */
  Account,
  AccountLanguage,
  AccountList,
  AccountStatus,
  Asset,
  Customer,
  CustomerCreate,
  CustomerList,
  CustomerUpdate,
  DailyBar,
  IdentificationType,
  Instrument,
  InstrumentList,
  InstrumentPrices,
  /** A request is an order: its id is the orderId GET /payment/status/{orderId} takes. */
  InvestmentRequest,
  InvestmentType,
  InvestmentTypeId,
  LatestPrice,
  LedgerTransactionType,
  MonthlyStatementData,
  Organization,
  PaymentStatus,
  PaymentTransaction,
  Portfolio,
  PortfolioPosition,
  Report,
  ReportList,
  ReportType,
  RequestList,
  RequestSide,
  RequestStatus,
  TokenResponse,
  TradeConfirmationData,
  TradingStatus,
  /** A money or units movement of the ledger (GET /transactions), not a payment transaction. */
  Transaction,
  TransactionList,
  TransactionStatus,
  /** Both USSD endpoints; the error state is `data.currentState === 'ERROR'` (HTTP 200). */
  UssdResponse,
  /** `ussdText`: the menu text, a blank line, then one `<key>. <label>` line per option (at most 182 characters). */
  UssdSessionData,
  WebhookKeyResponse,
};

/** Bodies exactly as the API answers them (the CLI's --json prints these). */
export type MeResponse = { data: Organization };
export type RevokeResponse = { message: string };
export type CustomerResponse = { message: string; data: Customer };
export type CustomerGetResponse = { data: Customer };
export type PaymentStatusResponse = { message: string; data: PaymentStatus };

/** GET /customers query; every field optional (page 1 and limit 10 by default, limit at most 100). */
export type CustomerListQuery = {
  page?: number;
  limit?: number;
  isActive?: boolean;
  search?: string;
  identificationType?: IdentificationType;
  /** Exact match: a USSD gateway knows the caller's phone number, not our customer id. */
  msisdn?: string;
};

/** Investments (preview): bodies as the API answers them. */
export type InvestmentTypeListResponse = { data: InvestmentType[] };
export type InstrumentResponse = { data: Instrument };
export type InstrumentPricesResponse = { data: InstrumentPrices };
/** 201 `Account created successfully`, or 200 `Account already exists` with the customer's account. */
export type AccountCreateResponse = { message: string; data: Account };
export type AccountResponse = { data: Account };
/** 200 `Account updated successfully`. */
export type AccountUpdateResponse = { message: string; data: Account };
export type AssetListResponse = { data: Asset[] };
export type PortfolioResponse = { data: Portfolio };
export type RequestResponse = { message: string; data: InvestmentRequest };
export type RequestGetResponse = { data: InvestmentRequest };
export type TransactionResponse = { data: Transaction };
export type ReportResponse = { data: Report };

/** The lists' page and limit, as GET /customers (page 1 and limit 10 by default, limit at most 100). */
export type PageQuery = { page?: number; limit?: number };

/** GET /instruments, ordered by symbol. */
export type InstrumentListQuery = PageQuery & {
  investmentType?: InvestmentTypeId;
  tradingStatus?: TradingStatus;
  /** Case-insensitive substring of the symbol or the name. */
  search?: string;
};

/** GET /instruments/{id}/prices: YYYY-MM-DD in the market's time zone, both included (default: the last 30 days). */
export type InstrumentPricesQuery = { from?: string; to?: string };

/** POST /accounts; `language` (null: the organization's default) is set with a new account only. */
export type AccountCreate = { customerId: string; language?: AccountLanguage | null };

/** PATCH /accounts/{id}: the customer's language; null: the organization's default. */
export type AccountUpdate = { language?: AccountLanguage | null };

/** GET /accounts, newest first. */
export type AccountListQuery = PageQuery & { customerId?: string; status?: AccountStatus };

/** GET /accounts/{id}/portfolio: `asOf` a past day (YYYY-MM-DD, Africa/Nairobi); absent: now. */
export type PortfolioQuery = { asOf?: string };

/** POST /requests: a buy by a whole amount, or a sell by whole units, both as decimal strings ('1000'). */
export type RequestCreate =
  | { customerId: string; instrumentId: string; side: 'BUY'; amount: string }
  | { customerId: string; instrumentId: string; side: 'SELL'; units: string };

/** GET /requests, newest first; createdFrom and createdTo are UTC days (YYYY-MM-DD), both included. */
export type RequestListQuery = PageQuery & {
  customerId?: string;
  instrumentId?: string;
  status?: RequestStatus;
  createdFrom?: string;
  createdTo?: string;
};

/** GET /transactions, newest first; from and to are EAT days (YYYY-MM-DD) of createdAt, both included. */
export type TransactionListQuery = PageQuery & {
  customerId?: string;
  requestId?: string;
  type?: LedgerTransactionType;
  ledger?: 'MONEY' | 'UNITS';
  from?: string;
  to?: string;
};

/** GET /reports, newest first. */
export type ReportListQuery = PageQuery & { customerId?: string; type?: ReportType };

/** Spec "Menu object" and "Option object": nextState and action are mutually exclusive; Next carries neither. */
export type UssdMenu = UssdSessionData['menu'];
export type UssdOption = UssdMenu['options'][number];

/** Transaction statuses after which nothing changes (docs/ussd-and-payments.md, Payments). */
export const FINAL_TRANSACTION_STATUSES: readonly TransactionStatus[] = Object.freeze([
  'SUCCESS',
  'FAILED',
  'CANCELLED',
]);
