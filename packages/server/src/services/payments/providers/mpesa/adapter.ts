import { amountString, Big, type Money, MoneyError, toMpesaAmount } from '../../../../lib/money.ts';
import type { PaymentAdapter, ProviderRequest, QueryResult, SendResult } from '../../pipeline/adapter.ts';
import type { CallOutcome } from '../outcome.ts';
import type { MpesaAdapter, TransactionStatusInput } from './client.ts';

export type DarajaPaymentAdapterOptions = {
  /** How long after Daraja accepted a request the reconciliation sweep waits before it queries. */
  reconcileAfterMs: number;
  /** STK `TransactionDesc` (at most 13 characters); default `Investment`. */
  collectionDescription?: string;
  /** B2C `Remarks` (2 to 100 characters); default `Investment payout`. */
  payoutRemarks?: string;
};

/**
 * Keys this adapter puts in a request's providerIds. `unpaidRemainder` is set on a payout whose
 * amount had cents: Daraja pays whole shillings, so the whole part is paid and the cents stay owed
 * to the customer, recorded here for the operator (docs/payments.md, "Payouts with cents").
 */
export const DARAJA_IDS = {
  merchantRequestId: 'merchantRequestId',
  checkoutRequestId: 'checkoutRequestId',
  conversationId: 'conversationId',
  originatorConversationId: 'originatorConversationId',
  paidAmount: 'paidAmount',
  unpaidRemainder: 'unpaidRemainder',
  /** The OriginatorConversationID of our latest Transaction Status query (a payout's, or a receipt's). */
  statusQueryId: 'statusQueryId',
} as const;

/** `+2547…`, `2547…` or `07…`/`01…` as Daraja's twelve digits; undefined for anything else. */
export function darajaMsisdn(msisdn: string): string | undefined {
  const digits = msisdn.replace(/^\+/, '');
  const n = /^0[17]\d{8}$/.test(digits) ? `254${digits.slice(1)}` : digits;
  return /^254[17]\d{8}$/.test(n) ? n : undefined;
}

/** The whole shillings of a payout (rounded DOWN: never more than owed) and the cents left over. */
export function splitPayout(amount: Money): { whole: Money; remainder: Money } {
  if (amount.currency !== 'KES') throw new MoneyError(`M-Pesa takes KES only, not ${amount.currency}`);
  const whole = { amount: amount.amount.round(0, Big.roundDown), currency: 'KES' };
  return { whole, remainder: { amount: amount.amount.minus(whole.amount), currency: 'KES' } };
}

/**
 * Daraja as the payment pipeline drives it: COLLECT is an STK Push confirmed by STK Push Query;
 * DISBURSE is a B2C payment whose OriginatorConversationID is the request's own id (stable across
 * retries, so a retry Daraja already has is refused as a duplicate, never paid twice), confirmed by
 * Transaction Status, whose answer arrives on a callback. It only asks and reports; the pipeline
 * decides.
 */
export function createDarajaPaymentAdapter(
  mpesa: MpesaAdapter,
  options: DarajaPaymentAdapterOptions,
): PaymentAdapter {
  const description = options.collectionDescription ?? 'Investment';
  const remarks = options.payoutRemarks ?? 'Investment payout';

  async function collect(
    request: ProviderRequest,
    msisdn: string,
    dispatching?: () => Promise<void>,
  ): Promise<SendResult> {
    let amount: number;
    try {
      amount = toMpesaAmount(request.amount);
    } catch (error) {
      // A collection with cents is refused before anything is sent: rounding it either way would
      // take more or less than the order is worth.
      return refusedBeforeSending(error);
    }
    if (amount < 1) return refusedBeforeSending(new MoneyError('M-Pesa collects at least KES 1'));
    const outcome = await mpesa.stkPush({
      msisdn,
      amount,
      // Shown in the customer's prompt; the transaction id's random tail (at most 12 characters).
      accountReference: request.transactionId.slice(-12),
      description,
      dispatching,
    });
    if (outcome.kind !== 'accepted') return notAccepted(outcome);
    return {
      kind: 'accepted',
      providerIds: {
        [DARAJA_IDS.merchantRequestId]: outcome.value.merchantRequestId,
        [DARAJA_IDS.checkoutRequestId]: outcome.value.checkoutRequestId,
      },
      exchanges: outcome.exchanges,
    };
  }

  async function disburse(
    request: ProviderRequest,
    msisdn: string,
    dispatching?: () => Promise<void>,
  ): Promise<SendResult> {
    let split: ReturnType<typeof splitPayout>;
    try {
      split = splitPayout(request.amount);
    } catch (error) {
      return refusedBeforeSending(error);
    }
    if (split.whole.amount.lt('1')) {
      return refusedBeforeSending(
        new MoneyError(`M-Pesa pays whole shillings: KES ${amountString(request.amount)} has none`),
      );
    }
    const remainderIds: Record<string, string> = split.remainder.amount.gt('0')
      ? {
          [DARAJA_IDS.paidAmount]: amountString(split.whole),
          [DARAJA_IDS.unpaidRemainder]: amountString(split.remainder),
        }
      : {};
    const outcome = await mpesa.b2cPayment({
      originatorConversationId: request.id,
      msisdn,
      amount: toMpesaAmount(split.whole),
      remarks,
      occasion: request.transactionId,
      dispatching,
    });
    if (outcome.kind === 'duplicate') {
      // Daraja already has a payout with this id: the earlier attempt went through. Its Result
      // callback or a Transaction Status query tells how it ended; it is not sent again.
      return {
        kind: 'accepted',
        providerIds: { [DARAJA_IDS.originatorConversationId]: request.id, ...remainderIds },
        exchanges: outcome.exchanges,
      };
    }
    if (outcome.kind !== 'accepted') return notAccepted(outcome);
    return {
      kind: 'accepted',
      providerIds: {
        [DARAJA_IDS.originatorConversationId]: outcome.value.originatorConversationId,
        [DARAJA_IDS.conversationId]: outcome.value.conversationId,
        ...remainderIds,
      },
      exchanges: outcome.exchanges,
    };
  }

  async function queryCollection(request: ProviderRequest): Promise<QueryResult> {
    const checkoutRequestId = request.providerIds[DARAJA_IDS.checkoutRequestId];
    if (!checkoutRequestId) {
      // STK Push takes no reference of ours: without Daraja's id there is nothing to ask about.
      return { kind: 'unknown', reason: 'no CheckoutRequestID: the push was never accepted', exchanges: [] };
    }
    const outcome = await mpesa.stkQuery(checkoutRequestId);
    if (outcome.kind !== 'accepted') {
      // Even a refusal of our own CheckoutRequestID is not "never received": Daraja gave us that id.
      return { kind: 'unknown', reason: describe(outcome), exchanges: outcome.exchanges };
    }
    const answer = outcome.value;
    if (answer.status === 'PENDING') return { kind: 'pending', exchanges: outcome.exchanges };
    return {
      kind: 'final',
      status: answer.status,
      ...(answer.reason ? { reason: answer.reason } : {}),
      exchanges: outcome.exchanges,
    };
  }

  async function queryPayout(request: ProviderRequest): Promise<QueryResult> {
    return askTransactionStatus({ originatorConversationId: request.id, remarks: 'reconciliation' });
  }

  /** Transaction Status, whose answer comes on the status-result callback (matched by statusQueryId). */
  async function askTransactionStatus(input: TransactionStatusInput): Promise<QueryResult> {
    const outcome = await mpesa.transactionStatus(input);
    if (outcome.kind !== 'accepted')
      return { kind: 'unknown', reason: describe(outcome), exchanges: outcome.exchanges };
    return {
      kind: 'unknown',
      reason: 'Transaction Status asked: the answer comes on the status-result callback',
      exchanges: outcome.exchanges,
      // Its Result carries this id; a failed payout's Result may not name the payout itself.
      providerIds: { [DARAJA_IDS.statusQueryId]: outcome.value.originatorConversationId },
    };
  }

  return {
    name: 'mpesa',
    reconcileAfterMs: options.reconcileAfterMs,
    country: 'KE',
    currency: 'KES',
    callsDispatching: true,
    async send(request, dispatching) {
      const msisdn = darajaMsisdn(request.msisdn);
      if (!msisdn) return refusedBeforeSending(new RangeError('not a Safaricom-form number'));
      return request.operation === 'COLLECT'
        ? collect(request, msisdn, dispatching)
        : disburse(request, msisdn, dispatching);
    },
    query(request) {
      return request.operation === 'COLLECT' ? queryCollection(request) : queryPayout(request);
    },
    // The payment's own record at the paybill: amount, paying party and status (docs/payments.md).
    queryReceipt: (_request, receipt) =>
      askTransactionStatus({ transactionId: receipt, of: 'collection', remarks: 'receipt check' }),
  };
}

/** Input Daraja cannot take: nothing is sent, so it is a definite refusal with no exchange. */
function refusedBeforeSending(error: unknown): SendResult {
  const message = error instanceof Error ? error.message : String(error);
  return { kind: 'rejected', reason: `refused before sending: ${message}`, exchanges: [] };
}

type NotAccepted = Exclude<CallOutcome<unknown>, { kind: 'accepted' }>;

function describe(outcome: NotAccepted): string {
  switch (outcome.kind) {
    case 'rejected':
      return `M-Pesa ${outcome.code}: ${outcome.message} (HTTP ${outcome.httpStatus})`;
    case 'ambiguous':
      return `${outcome.reason}: ${outcome.detail}`;
    case 'not-sent':
      return outcome.detail;
  }
}

function notAccepted(outcome: NotAccepted): SendResult {
  return { kind: outcome.kind, reason: describe(outcome), exchanges: outcome.exchanges };
}
