import { z } from 'zod';
import type { ParseResult, PaymentStatus } from '../outcome.ts';
import { type MappedResult, mapResultCode } from './result-codes.ts';

/**
 * Parsers for what Daraja POSTs to us. Types are checked exactly; unknown extra properties are
 * ignored (a field Safaricom adds must not lose a payment; the raw body is stored anyway). They
 * never throw: a malformed body is a typed failure the route answers without a 500.
 */

/** A number in STK callbacks, a string in queries, and non-numeric strings such as "SFC_IC0003". */
const resultCode = z.union([z.number().int(), z.string().trim().min(1)]);
const text = z.string().trim().min(1);

const metadataItem = z.object({
  Name: text,
  // Older samples carry `{ "Name": "Balance" }` with no Value.
  Value: z.union([z.number(), z.string()]).optional(),
});

const stkCallbackBody = z.object({
  Body: z.object({
    stkCallback: z.object({
      MerchantRequestID: text,
      CheckoutRequestID: text,
      ResultCode: resultCode,
      ResultDesc: z.string(),
      CallbackMetadata: z.object({ Item: z.array(metadataItem) }).optional(),
    }),
  }),
});

export type StkCallback = MappedResult & {
  merchantRequestId: string;
  checkoutRequestId: string;
  resultDesc: string;
  /** Present when the code is 0 (the parser requires Amount and MpesaReceiptNumber then). */
  payment: {
    /** As sent (`1.00` or `1`): whole shillings are expected. */
    amount: number;
    receipt: string;
    /** `YYYYMMDDHHmmss`, as Daraja sends it (EAT). */
    transactionDate: string | null;
    phoneNumber: string | null;
  } | null;
  /** Every metadata item by Name (a missing Value is undefined). */
  items: Record<string, number | string | undefined>;
};

export function parseStkCallback(body: unknown): ParseResult<StkCallback> {
  const parsed = stkCallbackBody.safeParse(asJson(body));
  if (!parsed.success) return failure(parsed.error);
  const cb = parsed.data.Body.stkCallback;
  const items: Record<string, number | string | undefined> = {};
  for (const item of cb.CallbackMetadata?.Item ?? []) items[item.Name] = item.Value;
  const mapped = mapResultCode(cb.ResultCode, cb.ResultDesc);
  let payment: StkCallback['payment'] = null;
  if (mapped.status === 'SUCCESS') {
    const amount = toNumber(items.Amount);
    const receipt = items.MpesaReceiptNumber;
    if (amount === null || amount <= 0)
      return { ok: false, error: 'CallbackMetadata: Amount missing or invalid' };
    if (typeof receipt !== 'string' || receipt.trim() === '') {
      return { ok: false, error: 'CallbackMetadata: MpesaReceiptNumber missing' };
    }
    payment = {
      amount,
      receipt,
      transactionDate: items.TransactionDate === undefined ? null : String(items.TransactionDate),
      phoneNumber: items.PhoneNumber === undefined ? null : String(items.PhoneNumber),
    };
  }
  return {
    ok: true,
    value: {
      ...mapped,
      merchantRequestId: cb.MerchantRequestID,
      checkoutRequestId: cb.CheckoutRequestID,
      resultDesc: cb.ResultDesc,
      payment,
      items,
    },
  };
}

const keyValue = z.object({ Key: text, Value: z.union([z.number(), z.string()]).optional() });
/** A list, or a single object where a converter collapsed a one-element list. */
const keyValues = z.union([z.array(keyValue), keyValue]).transform((v) => (Array.isArray(v) ? v : [v]));

const resultBody = z.object({
  Result: z.object({
    ResultType: z.union([z.number().int(), z.string()]),
    ResultCode: resultCode,
    ResultDesc: z.string(),
    OriginatorConversationID: text,
    ConversationID: text,
    TransactionID: z.string().optional(),
    ResultParameters: z.object({ ResultParameter: keyValues }).optional(),
    ReferenceData: z.object({ ReferenceItem: keyValues }).optional(),
  }),
});

/** A `Result` body: the B2C result and the Transaction Status answer share it. */
export type DarajaResult = MappedResult & {
  resultType: string;
  resultDesc: string;
  originatorConversationId: string;
  conversationId: string;
  transactionId: string | null;
  /** ResultParameters by Key: TransactionAmount, TransactionReceipt, TransactionStatus, ReceiptNo… */
  parameters: Record<string, number | string | undefined>;
};

export function parseResultCallback(body: unknown): ParseResult<DarajaResult> {
  const parsed = resultBody.safeParse(asJson(body));
  if (!parsed.success) return failure(parsed.error);
  const r = parsed.data.Result;
  const parameters: Record<string, number | string | undefined> = {};
  for (const p of r.ResultParameters?.ResultParameter ?? []) parameters[p.Key] = p.Value;
  return {
    ok: true,
    value: {
      ...mapResultCode(r.ResultCode, r.ResultDesc),
      resultType: String(r.ResultType),
      resultDesc: r.ResultDesc,
      originatorConversationId: r.OriginatorConversationID,
      conversationId: r.ConversationID,
      transactionId: r.TransactionID?.trim() || null,
      parameters,
    },
  };
}

/**
 * The QueueTimeOutURL body: not documented; a team running B2C in production models it as an echo
 * of the request, with OriginatorConversationID required. It is not a final outcome: a Result may
 * still follow, so the pipeline queries Transaction Status.
 */
const queueTimeoutBody = z.object({
  OriginatorConversationID: text,
  CommandID: z.string().optional(),
  Amount: z.union([z.number(), z.string()]).optional(),
  PartyA: z.union([z.number(), z.string()]).optional(),
  PartyB: z.union([z.number(), z.string()]).optional(),
});

export type QueueTimeout = {
  originatorConversationId: string;
  commandId: string | null;
  amount: string | null;
  partyB: string | null;
};

export function parseQueueTimeoutCallback(body: unknown): ParseResult<QueueTimeout> {
  const parsed = queueTimeoutBody.safeParse(asJson(body));
  if (!parsed.success) return failure(parsed.error);
  const t = parsed.data;
  return {
    ok: true,
    value: {
      originatorConversationId: t.OriginatorConversationID,
      commandId: t.CommandID ?? null,
      amount: t.Amount === undefined ? null : String(t.Amount),
      partyB: t.PartyB === undefined ? null : String(t.PartyB),
    },
  };
}

/**
 * The acknowledgement a callback route answers with (HTTP 200). Daraja documents none for STK or
 * B2C; this is the C2B shape that third parties recommend (docs/payments.md).
 */
export const CALLBACK_ACK = { ResultCode: 0, ResultDesc: 'Accepted' } as const;

/** Accepts a parsed body or its raw text (a Buffer or string from the route). */
function asJson(body: unknown): unknown {
  if (typeof body === 'string' || Buffer.isBuffer(body)) {
    try {
      return JSON.parse(String(body));
    } catch {
      return undefined;
    }
  }
  return body;
}

function toNumber(value: number | string | undefined): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value)))
    return Number(value);
  return null;
}

function failure(error: z.ZodError): { ok: false; error: string } {
  const issue = error.issues[0];
  const where = issue && issue.path.length > 0 ? issue.path.join('.') : 'body';
  return { ok: false, error: `${where}: ${issue?.message ?? 'invalid'}` };
}

/**
 * Transaction Status's `TransactionStatus` words we read (lower case). Daraja documents only
 * "Completed"; an emulator built from the documentation answered a failed payout with ResultCode 0
 * and "Failed", and the fake answers "Pending" while a payout is in progress. Only words that
 * clearly say the money did not move are FAILED: none other is documented or observed, so
 * "Declined", "Cancelled", "Reversed" or anything else is not read at all (docs/payments.md).
 */
export const TRANSACTION_STATUS_WORDS: Readonly<Record<string, PaymentStatus>> = {
  completed: 'SUCCESS',
  failed: 'FAILED',
  pending: 'PENDING',
};

/**
 * What a Transaction Status Result says about the transaction it was asked about: a non-zero code
 * maps through the table (an unknown code is FAILED naming it; the pipeline does not fail a payout
 * on that alone, it goes to the operator queue); code 0 is read from `TransactionStatus`
 * (TRANSACTION_STATUS_WORDS). Undefined: a word we do not read (or none), neither paid nor failed.
 */
export function statusOfQueriedTransaction(result: DarajaResult): PaymentStatus | undefined {
  if (result.status !== 'SUCCESS') return result.status;
  return TRANSACTION_STATUS_WORDS[transactionStatusWord(result).toLowerCase()];
}

/** The `TransactionStatus` parameter of a Transaction Status Result, trimmed ('' when absent). */
export function transactionStatusWord(result: DarajaResult): string {
  return String(result.parameters.TransactionStatus ?? '').trim();
}
