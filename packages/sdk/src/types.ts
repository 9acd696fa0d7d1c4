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
  UssdResponse,
  UssdSessionData,
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

/** Spec "Menu object" and "Option object": nextState and action are mutually exclusive; Next carries neither. */
export type UssdMenu = UssdSessionData['menu'];
export type UssdOption = UssdMenu['options'][number];

/** Transaction statuses after which nothing changes (docs/ussd-and-payments.md, Payments). */
export const FINAL_TRANSACTION_STATUSES: readonly TransactionStatus[] = Object.freeze([
  'SUCCESS',
  'FAILED',
  'CANCELLED',
]);
