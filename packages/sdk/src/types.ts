import type {
  Customer,
  CustomerCreate,
  CustomerList,
  CustomerUpdate,
  IdentificationType,
  Organization,
  PaymentStatus,
  PaymentTransaction,
  TokenResponse,
  TransactionStatus,
  WebhookKeyResponse,
} from '@partner-api/contract';

export type {
  Customer,
  CustomerCreate,
  CustomerList,
  CustomerUpdate,
  IdentificationType,
  Organization,
  PaymentStatus,
  PaymentTransaction,
  TokenResponse,
  TransactionStatus,
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

/** Spec "Option object": nextState and action are mutually exclusive; Next carries neither. */
export type UssdOption = {
  key: string;
  label: string;
  nextState?: string;
  action?: string;
  data?: { stockId: string; symbol: string; name: string };
};

export type UssdMenu = { state: string; text: string; options: UssdOption[]; isEndState: boolean };

/** Spec "USSD session data"; the error state is `currentState === 'ERROR'` (HTTP 200). */
export type UssdSessionData = {
  sessionId: string;
  currentState: string;
  menu: UssdMenu;
  /** The menu text, a blank line, then one `<key>. <label>` line per option; at most 182 characters. */
  ussdText: string;
  expiresAt: string;
};

export type UssdResponse = { message: string; data: UssdSessionData };

/** Transaction statuses after which nothing changes (product.md, Payments). */
export const FINAL_TRANSACTION_STATUSES: readonly TransactionStatus[] = ['SUCCESS', 'FAILED', 'CANCELLED'];
