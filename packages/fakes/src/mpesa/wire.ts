import { randomInt } from 'node:crypto';
import { type Answer, digits, hex, upper } from '../kit/index.ts';
import { darajaTimestamp, dottedDateTime } from './daraja-time.ts';
import type { FakeScenario } from './scenarios.ts';

/** Daraja's shapes: its error envelope, field checks, identifiers and the bodies of its callbacks. */

export type Result = { code: number | string; desc: string };

export type StkRecord = {
  merchantRequestId: string;
  checkoutRequestId: string;
  amount: number;
  phone: string;
  /** What the query says; null while the customer has not answered. */
  outcome: Result | null;
  /** The receipt of the money that moved (Transaction Status finds it); null: none moved. */
  receipt: string | null;
};

export type B2cRecord = {
  originatorConversationId: string;
  conversationId: string;
  transactionId: string;
  amount: number;
  partyB: string;
  /** What Transaction Status says; null while in progress. */
  outcome: Result | null;
};

/** The ids a Transaction Status request gets for itself. */
export type OwnIds = { originatorConversationId: string; conversationId: string };

export const envelope = (status: number, errorCode: string, errorMessage: string): Answer => ({
  status,
  body: { requestId: requestIdLike(), errorCode, errorMessage },
});
export const invalidField = (field: string) => envelope(400, '400.002.02', `Bad Request - Invalid ${field}`);
export const internalError = () => envelope(500, '500.003.1001', 'Internal Server Error');

/** Amount as Daraja reads it: a whole number ≥ 1, as a JSON number or a numeric string. */
export function wholeAmount(value: unknown): number | null {
  const n =
    typeof value === 'number'
      ? value
      : typeof value === 'string' && /^\d+$/.test(value)
        ? Number(value)
        : Number.NaN;
  return Number.isSafeInteger(n) && n >= 1 ? n : null;
}
export const msisdn = (v: unknown) => /^254\d{9}$/.test(String(v ?? ''));
export const shortcode = (v: unknown) => /^\d{5,7}$/.test(String(v ?? ''));
export const stringOfLength = (v: unknown, min: number, max: number) =>
  typeof v === 'string' && v.length >= min && v.length <= max;

/** The first failing check's answer: `checks` maps a field to whether it is valid. */
export function firstInvalid(checks: Array<[field: string, valid: boolean]>): Answer | null {
  const bad = checks.find(([, valid]) => !valid);
  return bad ? invalidField(bad[0]) : null;
}

/** Like `1c5b-4ba8-815c-ac45c57a3db01495926`. */
export const requestIdLike = () => `${hex(4)}-${hex(4)}-${hex(4)}-${hex(12)}${digits(7)}`;
/** Like `AG_20240706_20106e9209f64bebd05b`. */
export const conversationIdLike = () => `AG_${darajaTimestamp(new Date()).slice(0, 8)}_${hex(20)}`;
/** Like `SG632NMUAB`: M-Pesa receipts are ten upper-case letters and digits. */
export const receiptLike = () => `${upper(2)}${digits(1)}${upper(1)}${digits(2)}${upper(4)}`;
export const ownIds = (): OwnIds => ({
  originatorConversationId: `${randomInt(1000, 9999)}-${hex(4)}-${hex(20)}`,
  conversationId: conversationIdLike(),
});

/** The synchronous answer of B2C and Transaction Status: accepted, the outcome comes to ResultURL. */
export function asyncAccepted(own: OwnIds): Answer {
  return {
    status: 200,
    body: {
      OriginatorConversationID: own.originatorConversationId,
      ConversationID: own.conversationId,
      ResponseCode: '0',
      ResponseDescription: 'Accept the service request successfully.',
    },
  };
}

export function stkCallbackBody(record: StkRecord, result: Result) {
  const stkCallback: Record<string, unknown> = {
    MerchantRequestID: record.merchantRequestId,
    CheckoutRequestID: record.checkoutRequestId,
    ResultCode: result.code,
    ResultDesc: result.desc,
  };
  if (result.code === 0) {
    stkCallback.CallbackMetadata = {
      Item: [
        { Name: 'Amount', Value: record.amount },
        { Name: 'MpesaReceiptNumber', Value: record.receipt ?? receiptLike() },
        { Name: 'Balance' },
        { Name: 'TransactionDate', Value: Number(darajaTimestamp(new Date())) },
        { Name: 'PhoneNumber', Value: Number(record.phone) },
      ],
    };
  }
  return { Body: { stkCallback } };
}

export function b2cResultBody(record: B2cRecord, result: Result) {
  const body: Record<string, unknown> = {
    ResultType: 0,
    ResultCode: result.code,
    ResultDesc: result.desc,
    OriginatorConversationID: record.originatorConversationId,
    ConversationID: record.conversationId,
    TransactionID: record.transactionId,
  };
  if (result.code === 0) {
    body.ResultParameters = {
      ResultParameter: [
        { Key: 'TransactionAmount', Value: record.amount },
        { Key: 'TransactionReceipt', Value: record.transactionId },
        { Key: 'ReceiverPartyPublicName', Value: `${record.partyB} - FAKE CUSTOMER` },
        { Key: 'TransactionCompletedDateTime', Value: dottedDateTime(new Date()) },
        { Key: 'B2CUtilityAccountAvailableFunds', Value: 8959269.6 },
        { Key: 'B2CWorkingAccountAvailableFunds', Value: 1199371.0 },
        { Key: 'B2CRecipientIsRegisteredCustomer', Value: 'Y' },
        { Key: 'B2CChargesPaidAccountAvailableFunds', Value: -1980.0 },
      ],
    };
  }
  body.ReferenceData = {
    ReferenceItem: {
      Key: 'QueueTimeoutURL',
      Value: 'https://internalsandbox.safaricom.co.ke/mpesa/b2cresults/v1/submit',
    },
  };
  return { Result: body };
}

/**
 * Transaction Status about a collection's receipt at the paybill: completed, with the amount and
 * the paying party as Daraja's sample names them (DebitPartyName "<MSISDN> - <name>").
 */
export function collectionStatusResultBody(own: OwnIds, paid: StkRecord, shortcode: string) {
  return {
    Result: {
      ResultType: 0,
      ResultCode: 0,
      ResultDesc: 'The service request is processed successfully.',
      OriginatorConversationID: own.originatorConversationId,
      ConversationID: own.conversationId,
      TransactionID: paid.receipt,
      ResultParameters: {
        ResultParameter: [
          { Key: 'ReceiptNo', Value: paid.receipt },
          { Key: 'TransactionStatus', Value: 'Completed' },
          { Key: 'Amount', Value: paid.amount },
          { Key: 'DebitPartyName', Value: `${paid.phone} - FAKE CUSTOMER` },
          { Key: 'CreditPartyName', Value: `${shortcode} - FAKE PAYBILL` },
          { Key: 'ReasonType', Value: 'Pay Bill Online' },
          { Key: 'FinalisedTime', Value: Number(darajaTimestamp(new Date())) },
        ],
      },
    },
  };
}

/**
 * The Transaction Status answer. Daraja's sample shows a completed payout only; for a failed one
 * (whatever its Result's code: 1, 2, 2001, SFC_IC0003…) the query succeeds (ResultCode 0) with
 * TransactionStatus "Failed", as an emulator built from the documentation answered; for one in
 * progress TransactionStatus "Pending"; with the `unread-status` scenario "Reversed"; and for an
 * unknown id the string code "TS_NOT_FOUND" (an invention: the real answer is not documented).
 */
export function statusResultBody(own: OwnIds, wanted: B2cRecord | undefined, scenario: FakeScenario | null) {
  const head = {
    ResultType: 0,
    OriginatorConversationID: own.originatorConversationId,
    ConversationID: own.conversationId,
  };
  if (!wanted)
    return {
      Result: { ...head, ResultCode: 'TS_NOT_FOUND', ResultDesc: 'No transaction found for the given id.' },
    };
  const outcome = wanted.outcome;
  // The query itself succeeds (ResultCode 0); the payout's fate is in TransactionStatus.
  const fate =
    scenario === 'unread-status'
      ? 'Reversed'
      : !outcome
        ? 'Pending'
        : outcome.code === 0
          ? 'Completed'
          : 'Failed';
  return {
    Result: {
      ...head,
      ResultCode: 0,
      ResultDesc: 'The service request is processed successfully.',
      TransactionID: wanted.transactionId,
      ResultParameters: {
        ResultParameter: [
          { Key: 'ReceiptNo', Value: wanted.transactionId },
          { Key: 'TransactionStatus', Value: fate },
          { Key: 'Amount', Value: wanted.amount },
          { Key: 'OriginatorConversationID', Value: wanted.originatorConversationId },
          { Key: 'ConversationID', Value: wanted.conversationId },
          { Key: 'CreditPartyName', Value: `${wanted.partyB} - FAKE CUSTOMER` },
          { Key: 'FinalisedTime', Value: Number(darajaTimestamp(new Date())) },
        ],
      },
    },
  };
}
