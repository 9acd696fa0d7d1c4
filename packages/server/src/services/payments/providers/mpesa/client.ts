import { z } from 'zod';
import { sendHttp } from '../http-exchange.ts';
import type { CallOutcome, ExchangeRecord } from '../outcome.ts';
import {
  classify,
  type DarajaError,
  isDuplicateOriginator,
  isInvalidToken,
  isStillProcessing,
} from './envelope.ts';
import { darajaTimestamp, stkPassword } from './password.ts';
import { type MappedResult, mapResultCode } from './result-codes.ts';
import { callbackUrl, type MpesaConfig } from './settings.ts';
import { MPESA_SECRET_KEYS, TokenCache } from './token.ts';

export type StkPushInput = {
  /** `2547XXXXXXXX` or `2541XXXXXXXX`: twelve digits, no `+`. */
  msisdn: string;
  /** Whole shillings, an integer ≥ 1 (Daraja takes no cents). */
  amount: number;
  /** At most 12 characters, shown to the customer in the prompt. */
  accountReference: string;
  /** At most 13 characters. */
  description: string;
  /** Awaited after the token call, just before the push leaves; if it throws, nothing is sent. */
  dispatching?: () => Promise<void>;
};
export type StkPushAccepted = {
  merchantRequestId: string;
  checkoutRequestId: string;
  customerMessage: string;
};

export type StkQueryAnswer =
  | { status: 'PENDING' }
  | (MappedResult & { resultDesc: string; merchantRequestId: string; checkoutRequestId: string });

export type B2cInput = {
  /** Ours, unique per payout and reused on every retry of it: Daraja refuses a second use. */
  originatorConversationId: string;
  msisdn: string;
  /** Whole shillings, an integer ≥ 1 (Daraja's B2C minimum is KES 10; it refuses below). */
  amount: number;
  /** 2 to 100 characters (required). */
  remarks: string;
  occasion?: string;
  commandId?: 'BusinessPayment' | 'SalaryPayment' | 'PromotionPayment';
  /** Awaited after the token call, just before the payout leaves; if it throws, nothing is sent. */
  dispatching?: () => Promise<void>;
};
export type AsyncAccepted = { conversationId: string; originatorConversationId: string };

/**
 * B2C adds `duplicate`: Daraja refused a reused OriginatorConversationID, which means the earlier
 * request with it went through; its Result (or a Transaction Status query) tells the outcome.
 */
export type B2cOutcome =
  | CallOutcome<AsyncAccepted>
  | { kind: 'duplicate'; originatorConversationId: string; exchanges: ExchangeRecord[] };

/**
 * `of`: whose transaction it is: a payout of the B2C shortcode (default) or a collection of the
 * paybill (STK), which names the shortcode Daraja searches (PartyA).
 */
export type TransactionStatusInput = { remarks?: string; of?: 'payout' | 'collection' } & (
  | { originatorConversationId: string; transactionId?: undefined }
  | { transactionId: string; originatorConversationId?: string }
);

export type MpesaAdapter = {
  readonly provider: 'MPESA';
  /** M-Pesa Express: prompts the customer; the outcome comes on the `stk` callback. */
  stkPush(input: StkPushInput): Promise<CallOutcome<StkPushAccepted>>;
  /** STK Push Query: the outcome of a prompt, or PENDING while the customer has not answered. */
  stkQuery(checkoutRequestId: string): Promise<CallOutcome<StkQueryAnswer>>;
  /** B2C v3 payout; the outcome comes on `b2c-result` (or `b2c-timeout`). */
  b2cPayment(input: B2cInput): Promise<B2cOutcome>;
  /** Transaction Status; asynchronous, its answer comes on `status-result` as a Result body. */
  transactionStatus(input: TransactionStatusInput): Promise<CallOutcome<AsyncAccepted>>;
};

export type MpesaAdapterOptions = { fetch?: typeof fetch; now?: () => Date };

const stkAccepted = z.object({
  MerchantRequestID: z.string().min(1),
  CheckoutRequestID: z.string().min(1),
  ResponseCode: z.union([z.literal('0'), z.literal(0)]),
  ResponseDescription: z.string(),
  CustomerMessage: z.string().optional(),
});
const stkQueryAnswer = z.object({
  ResponseCode: z.union([z.literal('0'), z.literal(0)]),
  MerchantRequestID: z.string().min(1),
  CheckoutRequestID: z.string().min(1),
  ResultCode: z.union([z.number().int(), z.string().trim().min(1)]),
  ResultDesc: z.string(),
});
const asyncAccepted = z.object({
  ConversationID: z.string().min(1),
  OriginatorConversationID: z.string().min(1),
  ResponseCode: z.union([z.literal('0'), z.literal(0)]),
  ResponseDescription: z.string(),
});

const MSISDN = /^254[17]\d{8}$/;

/** Refuses what Daraja cannot take before anything is sent: a programming error, not an outcome. */
function requireInput(ok: boolean, message: string): void {
  if (!ok) throw new RangeError(message);
}
const requireWholeShillings = (amount: number) =>
  requireInput(
    Number.isSafeInteger(amount) && amount >= 1,
    `amount must be whole shillings ≥ 1, got ${amount}`,
  );
const requireMsisdn = (msisdn: string) =>
  requireInput(MSISDN.test(msisdn), `msisdn must be 2547XXXXXXXX or 2541XXXXXXXX, got ${msisdn}`);

/**
 * The Daraja adapter: each method makes one request (plus the token request it needs, and one retry
 * when Daraja calls the token invalid) and returns a typed outcome with the exchange records.
 */
export function createMpesaAdapter(config: MpesaConfig, options: MpesaAdapterOptions = {}): MpesaAdapter {
  const now = options.now ?? (() => new Date());
  const tokens = new TokenCache(config, () => now().getTime(), options.fetch);
  const requestMs = config.timeouts?.requestMs ?? 15_000;

  /** POSTs with a Bearer token; on an invalid-token envelope drops the token and tries once more. */
  async function post<T>(
    operation: string,
    path: string,
    makeBody: () => Record<string, unknown>,
    onSuccess: (json: unknown) => T | null,
    onEnvelope: (e: DarajaError) => T | null = () => null,
    dispatching?: () => Promise<void>,
  ): Promise<CallOutcome<T>> {
    const exchanges: ExchangeRecord[] = [];
    for (let attempt = 1; ; attempt++) {
      const token = await tokens.get();
      exchanges.push(...token.exchanges);
      if (!token.ok) return { kind: 'not-sent', detail: token.detail, exchanges };
      try {
        await dispatching?.();
      } catch (err) {
        const detail = err instanceof Error ? err.message : String(err);
        return { kind: 'not-sent', detail: `not dispatched: ${detail}`, exchanges };
      }
      const { answer, record } = await sendHttp({
        provider: 'MPESA',
        operation,
        method: 'POST',
        url: `${config.baseUrl.replace(/\/+$/, '')}${path}`,
        headers: { authorization: `Bearer ${token.token}` },
        body: makeBody(),
        timeoutMs: requestMs,
        secretKeys: MPESA_SECRET_KEYS,
        // CallBackURL, ResultURL and QueueTimeOutURL carry the callback path token.
        secretValues: [config.callbackToken],
        fetch: options.fetch,
      });
      exchanges.push(record);
      const c = classify(answer);
      switch (c.kind) {
        case 'success': {
          const value = onSuccess(c.json);
          if (value !== null) return { kind: 'accepted', value, exchanges };
          return {
            kind: 'ambiguous',
            reason: 'unparseable',
            detail: `HTTP ${c.status}: unexpected body`,
            exchanges,
          };
        }
        case 'envelope': {
          if (isInvalidToken(c.error)) {
            tokens.drop(token.token);
            if (attempt === 1) continue;
            return { kind: 'not-sent', detail: `token refused twice: ${c.error.errorCode}`, exchanges };
          }
          const value = onEnvelope(c.error);
          if (value !== null) return { kind: 'accepted', value, exchanges };
          return {
            kind: 'rejected',
            code: c.error.errorCode,
            message: c.error.errorMessage,
            httpStatus: c.httpStatus,
            exchanges,
          };
        }
        case 'rejected':
          return { ...c, exchanges };
        case 'ambiguous':
          return { ...c, exchanges };
      }
    }
  }

  function stkCredentials() {
    const timestamp = darajaTimestamp(now());
    return {
      BusinessShortCode: config.shortcode,
      Password: stkPassword(config.shortcode, config.passkey, timestamp),
      Timestamp: timestamp,
    };
  }

  async function sendB2c(input: B2cInput): Promise<B2cOutcome> {
    const outcome = await post(
      'b2c-payment',
      '/mpesa/b2c/v3/paymentrequest',
      () => ({
        OriginatorConversationID: input.originatorConversationId,
        InitiatorName: config.initiatorName,
        SecurityCredential: config.securityCredential,
        CommandID: input.commandId ?? 'BusinessPayment',
        Amount: input.amount,
        PartyA: config.b2cShortcode,
        PartyB: input.msisdn,
        Remarks: input.remarks,
        QueueTimeOutURL: callbackUrl(config, 'b2c-timeout'),
        ResultURL: callbackUrl(config, 'b2c-result'),
        // Daraja's own spelling; optional, 1 to 100 characters when sent.
        ...(input.occasion ? { Occassion: input.occasion } : {}),
      }),
      parseAsyncAccepted,
      undefined,
      input.dispatching,
    );
    if (
      outcome.kind === 'rejected' &&
      isDuplicateOriginator({ errorCode: outcome.code, errorMessage: outcome.message })
    ) {
      return {
        kind: 'duplicate',
        originatorConversationId: input.originatorConversationId,
        exchanges: outcome.exchanges,
      };
    }
    return outcome;
  }

  return {
    provider: 'MPESA',

    stkPush(input) {
      requireWholeShillings(input.amount);
      requireMsisdn(input.msisdn);
      requireInput(
        input.accountReference.length >= 1 && input.accountReference.length <= 12,
        'accountReference: 1 to 12 characters',
      );
      requireInput(input.description.length <= 13, 'description: at most 13 characters');
      return post(
        'stk-push',
        '/mpesa/stkpush/v1/processrequest',
        () => ({
          ...stkCredentials(),
          TransactionType: config.transactionType ?? 'CustomerPayBillOnline',
          Amount: input.amount,
          PartyA: input.msisdn,
          PartyB: config.partyB ?? config.shortcode,
          PhoneNumber: input.msisdn,
          CallBackURL: callbackUrl(config, 'stk'),
          AccountReference: input.accountReference,
          TransactionDesc: input.description,
        }),
        (json) => {
          const ok = stkAccepted.safeParse(json);
          if (!ok.success) return null;
          const d = ok.data;
          return {
            merchantRequestId: d.MerchantRequestID,
            checkoutRequestId: d.CheckoutRequestID,
            customerMessage: d.CustomerMessage ?? d.ResponseDescription,
          };
        },
        undefined,
        input.dispatching,
      );
    },

    stkQuery(checkoutRequestId) {
      return post<StkQueryAnswer>(
        'stk-query',
        '/mpesa/stkpushquery/v1/query',
        () => ({ ...stkCredentials(), CheckoutRequestID: checkoutRequestId }),
        (json) => {
          const ok = stkQueryAnswer.safeParse(json);
          if (!ok.success) return null;
          const d = ok.data;
          return {
            ...mapResultCode(d.ResultCode, d.ResultDesc),
            resultDesc: d.ResultDesc,
            merchantRequestId: d.MerchantRequestID,
            checkoutRequestId: d.CheckoutRequestID,
          };
        },
        (e) => (isStillProcessing(e) ? { status: 'PENDING' } : null),
      );
    },

    b2cPayment(input) {
      requireWholeShillings(input.amount);
      requireMsisdn(input.msisdn);
      requireInput(input.remarks.length >= 2 && input.remarks.length <= 100, 'remarks: 2 to 100 characters');
      return sendB2c(input);
    },

    transactionStatus(input) {
      return post(
        'transaction-status',
        '/mpesa/transactionstatus/v1/query',
        () => ({
          Initiator: config.initiatorName,
          SecurityCredential: config.securityCredential,
          CommandID: 'TransactionStatusQuery',
          ...(input.transactionId ? { TransactionID: input.transactionId } : {}),
          ...(input.originatorConversationId
            ? { OriginalConversationID: input.originatorConversationId }
            : {}),
          PartyA: input.of === 'collection' ? config.shortcode : config.b2cShortcode,
          IdentifierType: '4',
          ResultURL: callbackUrl(config, 'status-result'),
          QueueTimeOutURL: callbackUrl(config, 'status-timeout'),
          Remarks: input.remarks ?? 'reconciliation',
        }),
        parseAsyncAccepted,
      );
    },
  };
}

function parseAsyncAccepted(json: unknown): AsyncAccepted | null {
  const ok = asyncAccepted.safeParse(json);
  return ok.success
    ? { conversationId: ok.data.ConversationID, originatorConversationId: ok.data.OriginatorConversationID }
    : null;
}
