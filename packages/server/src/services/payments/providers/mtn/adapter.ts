import { toMtnAmount } from '../../../../lib/money.ts';
import type { PaymentAdapter, ProviderRequest, QueryResult, SendResult } from '../../pipeline/adapter.ts';
import type { CallOutcome } from '../outcome.ts';
import type { MtnStatusBody } from './callbacks.ts';
import { createMtnAdapter, type MtnAdapter, type MtnAdapterOptions, type MtnSendOutcome } from './client.ts';
import { type MtnConfig, mtnReferenceId } from './settings.ts';

export const MTN_ADAPTER_NAME = 'mtn';

/**
 * Keys this adapter puts in a request's providerIds. `referenceId` is the X-Reference-Id (derived
 * from our request id, config.ts) and names the request in its callback URL; `externalId` is our
 * request id as MTN echoes it in every status body and callback.
 */
export const MTN_IDS = {
  referenceId: 'referenceId',
  externalId: 'externalId',
} as const;

export type MtnPaymentAdapterOptions = MtnAdapterOptions & {
  /** The raw adapter to drive (tests); default one made from `config`. */
  mtn?: MtnAdapter;
  /** `payerMessage` of a collection (at most 160 characters); default `Investment`. */
  collectionMessage?: string;
  /** `payerMessage`/`payeeNote` of a payout; default `Investment payout`. */
  payoutNote?: string;
};

/** `+256…`/`256…` as MTN's digits, a local `0…` number in the configured country; else undefined. */
export function mtnMsisdn(msisdn: string, countryCode: string): string | undefined {
  const compact = msisdn.replace(/[\s-]/g, '');
  const digits = /^0\d{8,10}$/.test(compact)
    ? `${countryCode}${compact.slice(1)}`
    : compact.replace(/^\+/, '');
  return /^\d{8,15}$/.test(digits) ? digits : undefined;
}

/**
 * MTN MoMo as the payment pipeline drives it: COLLECT is a request-to-pay, DISBURSE a transfer, each
 * with the X-Reference-Id derived from the request's own id (stable across retries: a retry MTN
 * already has gets 409 and is never charged or paid twice), each confirmed by its status query.
 * It only asks and reports; the pipeline decides.
 */
export function createMtnPaymentAdapter(
  config: MtnConfig,
  options: MtnPaymentAdapterOptions = {},
): PaymentAdapter {
  const mtn = options.mtn ?? createMtnAdapter(config, options);
  const collectionMessage = options.collectionMessage ?? 'Investment';
  const payoutNote = options.payoutNote ?? 'Investment payout';

  /** Ours, known before MTN answers: stored when the request is dispatched, so a callback after a lost answer matches. */
  const ownIds = (request: ProviderRequest) => ({
    [MTN_IDS.referenceId]: mtnReferenceId(request.id),
    [MTN_IDS.externalId]: request.id,
  });

  async function send(request: ProviderRequest): Promise<SendResult> {
    const msisdn = mtnMsisdn(request.msisdn, config.countryCode);
    if (!msisdn) return refusedBeforeSending(`not an MTN-form number: ${request.msisdn}`);
    if (request.amount.currency !== config.currency)
      return refusedBeforeSending(`MTN here takes ${config.currency}, not ${request.amount.currency}`);
    if (!request.amount.amount.gt('0')) return refusedBeforeSending('the amount must be positive');
    const referenceId = mtnReferenceId(request.id);
    const input = {
      referenceId,
      externalId: request.id,
      msisdn,
      amount: toMtnAmount(request.amount),
      payerMessage: request.operation === 'COLLECT' ? collectionMessage : payoutNote,
      payeeNote: request.operation === 'COLLECT' ? collectionMessage : payoutNote,
    };
    const outcome: MtnSendOutcome =
      request.operation === 'COLLECT' ? await mtn.requestToPay(input) : await mtn.transfer(input);
    const providerIds = ownIds(request);
    switch (outcome.kind) {
      case 'accepted':
        return { kind: 'accepted', providerIds, exchanges: outcome.exchanges };
      case 'duplicate':
        // 409: an earlier attempt with this reference reached MTN. Not sent again: its status tells.
        return { kind: 'accepted', providerIds, exchanges: outcome.exchanges };
      default:
        return { kind: outcome.kind, reason: describe(outcome), exchanges: outcome.exchanges };
    }
  }

  async function query(request: ProviderRequest): Promise<QueryResult> {
    const referenceId = mtnReferenceId(request.id);
    const outcome =
      request.operation === 'COLLECT'
        ? await mtn.requestToPayStatus(referenceId)
        : await mtn.transferStatus(referenceId);
    return queryResultOf(outcome);
  }

  return {
    name: MTN_ADAPTER_NAME,
    reconcileAfterMs: config.reconcileAfterMs,
    ...(config.country ? { country: config.country } : {}),
    currency: config.currency,
    send,
    query,
    ownIds,
  };
}

/**
 * A status answer as the pipeline reads it: 404 RESOURCE_NOT_FOUND is `not-found` (MTN never got the
 * reference, so sending it is safe); PENDING is pending; SUCCESSFUL and FAILED are final; anything
 * else (no answer, a 5xx, an unreadable body, another refusal) is unknown: never a guess.
 */
export function queryResultOf(outcome: CallOutcome<MtnStatusBody>): QueryResult {
  if (outcome.kind !== 'accepted') {
    if (outcome.kind === 'rejected' && outcome.httpStatus === 404)
      return { kind: 'not-found', exchanges: outcome.exchanges };
    return { kind: 'unknown', reason: describe(outcome), exchanges: outcome.exchanges };
  }
  const answer = outcome.value;
  if (answer.status === 'PENDING') return { kind: 'pending', exchanges: outcome.exchanges };
  return {
    kind: 'final',
    status: answer.status,
    ...(answer.reason ? { reason: answer.reason } : {}),
    ...(answer.status === 'SUCCESS' && answer.financialTransactionId
      ? { receipt: answer.financialTransactionId }
      : {}),
    exchanges: outcome.exchanges,
  };
}

function refusedBeforeSending(message: string): SendResult {
  return { kind: 'rejected', reason: `refused before sending: ${message}`, exchanges: [] };
}

type NotAccepted = Exclude<CallOutcome<unknown>, { kind: 'accepted' }>;

function describe(outcome: NotAccepted): string {
  switch (outcome.kind) {
    case 'rejected':
      return `MTN ${outcome.code}: ${outcome.message} (HTTP ${outcome.httpStatus})`;
    case 'ambiguous':
      return `${outcome.reason}: ${outcome.detail}`;
    case 'not-sent':
      return outcome.detail;
  }
}
