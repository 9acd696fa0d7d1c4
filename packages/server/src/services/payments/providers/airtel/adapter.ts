import { amountString, Big, type Money, MoneyError } from '../../../../lib/money.ts';
import type { PaymentAdapter, ProviderRequest, QueryResult, SendResult } from '../../pipeline/adapter.ts';
import type { CallOutcome } from '../outcome.ts';
import {
  type AirtelAdapter,
  type AirtelAdapterOptions,
  createAirtelAdapter,
  type EnquiryAnswer,
} from './client.ts';
import type { AirtelConfig } from './settings.ts';

export const AIRTEL_ADAPTER_NAME = 'airtel';

/**
 * Keys this adapter puts in a request's providerIds. `transactionId` is the `transaction.id` sent
 * to Airtel: the request's own id, stable across retries (Airtel refuses a reuse, so a retry never
 * pays or prompts twice), the enquiry's key and the callback's `transaction.id`.
 */
export const AIRTEL_IDS = {
  transactionId: 'airtelTransactionId',
  /** Airtel's receipt (`airtel_money_id`), on success. */
  airtelMoneyId: 'airtelMoneyId',
  /** A payout's `reference_id` (the TID in Airtel's message). */
  referenceId: 'airtelReferenceId',
  /** A payout with cents in a whole-unit currency: the part paid and the part left owed. */
  paidAmount: 'paidAmount',
  unpaidRemainder: 'unpaidRemainder',
} as const;

export type AirtelPaymentAdapterOptions = AirtelAdapterOptions & {
  /** How long after acceptance the sweep waits before it enquires; Airtel advises ≥ 3 minutes. */
  reconcileAfterMs?: number;
  /** The raw adapter to drive (tests); default one made from `config`. */
  airtel?: AirtelAdapter;
};

/**
 * A number of the configured country as Airtel takes it: the local digits without the calling code
 * or a leading 0 (`+254733123456`, `254733123456` and `0733123456` are `733123456` for KE).
 */
export function airtelMsisdn(msisdn: string, callingCode: string): string | undefined {
  const digits = msisdn.replace(/^\+/, '').replace(/[\s-]/g, '');
  if (!/^\d+$/.test(digits)) return undefined;
  let local: string;
  if (digits.startsWith(callingCode) && digits.length > callingCode.length + 6)
    local = digits.slice(callingCode.length);
  else if (digits.startsWith('0')) local = digits.slice(1);
  else return undefined;
  return /^[1-9]\d{6,10}$/.test(local) ? local : undefined;
}

/** An amount as Airtel's JSON number with at most `decimals` decimals; payouts round the rest DOWN. */
export function splitAirtelAmount(amount: Money, decimals: 0 | 2): { send: Money; remainder: Money } {
  const send = { amount: amount.amount.round(decimals, Big.roundDown), currency: amount.currency };
  return { send, remainder: { amount: amount.amount.minus(send.amount), currency: amount.currency } };
}

const asNumber = (m: Money) => Number(amountString(m));

/**
 * Airtel as the payment pipeline drives it. COLLECT is a USSD push whose `transaction.id` is the
 * request's id; DISBURSE a payout with the same rule; both are confirmed by Transaction Enquiry by
 * that id, which works even when the send's answer was lost. It only asks and reports; the
 * pipeline decides.
 */
export function createAirtelPaymentAdapter(
  config: AirtelConfig,
  options: AirtelPaymentAdapterOptions = {},
): PaymentAdapter {
  const airtel = options.airtel ?? createAirtelAdapter(config, options);
  const reconcileAfterMs = options.reconcileAfterMs ?? config.reconcileAfterMs ?? 180_000;

  async function collect(request: ProviderRequest, msisdn: string): Promise<SendResult> {
    const { send, remainder } = splitAirtelAmount(request.amount, config.amountDecimals);
    // A collection is never rounded: it would take more or less than the order is worth.
    if (remainder.amount.gt('0') || send.amount.lte('0'))
      return refusedBeforeSending(
        new MoneyError(
          `Airtel ${config.currency} takes ${config.amountDecimals} decimals: ${amountString(request.amount)}`,
        ),
      );
    const outcome = await airtel.ussdPush({
      transactionId: request.id,
      msisdn,
      amount: asNumber(send),
      reference: request.transactionId.slice(0, 64),
    });
    const ids = { [AIRTEL_IDS.transactionId]: request.id };
    // A reused id: the earlier push went out; the enquiry tells how it ended. Never a second prompt.
    if (outcome.kind === 'duplicate' || outcome.kind === 'accepted')
      return { kind: 'accepted', providerIds: ids, exchanges: outcome.exchanges };
    return notAccepted(outcome);
  }

  async function disburse(request: ProviderRequest, msisdn: string): Promise<SendResult> {
    const { send, remainder } = splitAirtelAmount(request.amount, config.amountDecimals);
    if (send.amount.lte('0'))
      return refusedBeforeSending(
        new MoneyError(`nothing to pay in whole ${config.currency}: ${amountString(request.amount)}`),
      );
    const remainderIds: Record<string, string> = remainder.amount.gt('0')
      ? { [AIRTEL_IDS.paidAmount]: amountString(send), [AIRTEL_IDS.unpaidRemainder]: amountString(remainder) }
      : {};
    let outcome: Awaited<ReturnType<AirtelAdapter['disburse']>>;
    try {
      outcome = await airtel.disburse({
        transactionId: request.id,
        msisdn,
        amount: asNumber(send),
        reference: request.transactionId
          .replace(/[^A-Za-z0-9 ]/g, '')
          .slice(0, 64)
          .padEnd(4, '0'),
      });
    } catch (error) {
      // A missing PIN or key is a configuration error caught before anything was sent.
      return refusedBeforeSending(error);
    }
    const ids = { [AIRTEL_IDS.transactionId]: request.id, ...remainderIds };
    if (outcome.kind === 'duplicate')
      return { kind: 'accepted', providerIds: ids, exchanges: outcome.exchanges };
    if (outcome.kind !== 'accepted') return notAccepted(outcome);
    const v = outcome.value;
    const providerIds = {
      ...ids,
      ...(v.airtelMoneyId ? { [AIRTEL_IDS.airtelMoneyId]: v.airtelMoneyId } : {}),
      ...(v.referenceId ? { [AIRTEL_IDS.referenceId]: v.referenceId } : {}),
    };
    // Taken but its outcome unknown (DP00900001000): the pipeline enquires before anything else.
    if (v.meaning === 'ambiguous')
      return {
        kind: 'ambiguous',
        reason: `Airtel ${v.responseCode}: ${v.message}`,
        exchanges: outcome.exchanges,
      };
    return { kind: 'accepted', providerIds, exchanges: outcome.exchanges };
  }

  function answer(outcome: CallOutcome<EnquiryAnswer>): QueryResult {
    if (outcome.kind !== 'accepted')
      return { kind: 'unknown', reason: describe(outcome), exchanges: outcome.exchanges };
    const a = outcome.value;
    // Not found: Airtel never took this id, so sending it again (same id) is safe: a late
    // arrival of the first would make the second a refused duplicate.
    if (!a.found) return { kind: 'not-found', exchanges: outcome.exchanges };
    if (a.status === 'PENDING') return { kind: 'pending', exchanges: outcome.exchanges };
    // Final only on TS/TF/TE from the enquiry: a payout is never failed on a guess.
    return {
      kind: 'final',
      status: a.status,
      ...(a.reason ? { reason: a.reason } : {}),
      ...(a.status === 'SUCCESS' && a.airtelMoneyId ? { receipt: a.airtelMoneyId } : {}),
      exchanges: outcome.exchanges,
    };
  }

  return {
    name: AIRTEL_ADAPTER_NAME,
    reconcileAfterMs,
    country: config.country,
    currency: config.currency,
    async send(request) {
      if (request.amount.currency !== config.currency)
        return refusedBeforeSending(
          new MoneyError(`Airtel here takes ${config.currency}, not ${request.amount.currency}`),
        );
      const msisdn = airtelMsisdn(request.msisdn, config.callingCode);
      if (!msisdn) return refusedBeforeSending(new RangeError(`not a +${config.callingCode} number`));
      return request.operation === 'COLLECT' ? collect(request, msisdn) : disburse(request, msisdn);
    },
    async query(request) {
      try {
        if (request.operation === 'COLLECT') return answer(await airtel.collectionEnquiry(request.id));
        const result = answer(await airtel.disbursementEnquiry(request.id));
        // A v3 payout is asked about at v2's endpoint (no v3 one is documented). One Airtel took
        // (its id stored from Airtel's answer, or a retry refused as a duplicate) that v2 does not
        // find may be unknown to v2, not unknown to Airtel: sending it again would only meet the
        // duplicate refusal, again and again, with the partner seeing PENDING. Unknown instead: the
        // attempts run out and the operator decides (docs/payments-airtel.md, "v3 payouts' status").
        if (
          result.kind === 'not-found' &&
          config.disbursementApi === 'v3' &&
          request.providerIds[AIRTEL_IDS.transactionId] !== undefined
        )
          return {
            kind: 'unknown',
            reason:
              'Airtel took this v3 payout, but the v2 enquiry does not find it (v2 may not know v3 payouts); not sent again',
            exchanges: result.exchanges,
          };
        return result;
      } catch (error) {
        return {
          kind: 'unknown',
          reason: error instanceof Error ? error.message : String(error),
          exchanges: [],
        };
      }
    },
  };
}

/** Input Airtel cannot take: nothing is sent, so it is a definite refusal with no exchange. */
function refusedBeforeSending(error: unknown): SendResult {
  const message = error instanceof Error ? error.message : String(error);
  return { kind: 'rejected', reason: `refused before sending: ${message}`, exchanges: [] };
}

type NotAccepted = Exclude<CallOutcome<unknown>, { kind: 'accepted' }>;

function describe(outcome: NotAccepted): string {
  switch (outcome.kind) {
    case 'rejected':
      return `Airtel ${outcome.code}: ${outcome.message} (HTTP ${outcome.httpStatus})`;
    case 'ambiguous':
      return `${outcome.reason}: ${outcome.detail}`;
    case 'not-sent':
      return outcome.detail;
  }
}

function notAccepted(outcome: NotAccepted): SendResult {
  return { kind: outcome.kind, reason: describe(outcome), exchanges: outcome.exchanges };
}
