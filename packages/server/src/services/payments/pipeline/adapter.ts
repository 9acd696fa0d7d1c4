import type { Money } from '../../../lib/money.ts';
import type { ExchangeRecord } from '../providers/outcome.ts';

/** One durable ask to a provider (a row of provider_requests). */
export type ProviderRequest = {
  /** Ours and stable across retries: the provider's idempotency id where it takes one (B2C OriginatorConversationID). */
  id: string;
  transactionId: string;
  operation: 'COLLECT' | 'DISBURSE';
  amount: Money;
  msisdn: string;
  /** What the provider answered when it accepted (e.g. checkoutRequestId, merchantRequestId, conversationId). */
  providerIds: Record<string, string>;
  attempts: number;
  createdAt: Date;
};

export type FinalStatus = 'SUCCESS' | 'FAILED' | 'CANCELLED';

export type SendResult =
  | { kind: 'accepted'; providerIds: Record<string, string>; exchanges: ExchangeRecord[] }
  /** A definite refusal: nothing moved. */
  | { kind: 'rejected'; reason: string; exchanges: ExchangeRecord[] }
  /** It may have moved (timeout, reset, 5xx after sending): query before anything else. */
  | { kind: 'ambiguous'; reason: string; exchanges: ExchangeRecord[] }
  /** Nothing left our side (no token): safe to send again. */
  | { kind: 'not-sent'; reason: string; exchanges: ExchangeRecord[] };

/** What the provider's own record says the payment was (Daraja's Transaction Status), to check against ours. */
export type PaymentEvidence = { amount?: string; party?: string };

export type QueryResult =
  | {
      kind: 'final';
      status: FinalStatus;
      reason?: string;
      receipt?: string;
      evidence?: PaymentEvidence;
      exchanges: ExchangeRecord[];
    }
  | { kind: 'pending'; exchanges: ExchangeRecord[] }
  /** The provider has no such request: it was never received, so sending is safe. */
  | { kind: 'not-found'; exchanges: ExchangeRecord[] }
  /**
   * Could not ask, or the answer cannot be read, or it comes later by callback (B2C Transaction
   * Status: `providerIds` then names the query, so that its answer can be matched to the request).
   */
  | { kind: 'unknown'; reason: string; exchanges: ExchangeRecord[]; providerIds?: Record<string, string> };

/** A provider as the pipeline drives it: it only asks and queries; the pipeline decides. */
export interface PaymentAdapter {
  /** 'sandbox' | 'mpesa' | later 'mtn' | 'airtel': metrics label and exchange records. */
  readonly name: string;
  /** How long after acceptance the reconciliation sweep waits before it queries. */
  readonly reconcileAfterMs: number;
  /** The one country (ISO 3166 alpha-2) and currency it is configured for; unset: any (the simulator). */
  readonly country?: string;
  readonly currency?: string;
  /** The sandbox simulator: no money moves, so a signed `/v1/webhooks/callback` may settle its requests. */
  readonly simulated?: boolean;
  /**
   * Sends. `dispatching`, when the adapter declares `callsDispatching`, must be awaited just before
   * the call that could move money leaves (after any token call); if it throws, nothing may be sent
   * (answer `not-sent`). Other adapters are marked dispatched by the worker before `send`.
   */
  send(request: ProviderRequest, dispatching?: () => Promise<void>): Promise<SendResult>;
  query(request: ProviderRequest): Promise<QueryResult>;
  /** True: `send` calls `dispatching` itself, at the last moment (Daraja, after its token call). */
  readonly callsDispatching?: boolean;
  /**
   * Ids of ours the provider knows the request by before it answers (MTN's X-Reference-Id, derived
   * from the request id): stored when it is dispatched, so that a callback after a lost answer or a
   * crash still finds its request.
   */
  ownIds?(request: ProviderRequest): Record<string, string>;
  /**
   * Asks the provider's authoritative record of a payment by its receipt (Daraja: Transaction
   * Status by TransactionID), when a paying callback and the status query disagree. The answer may
   * come later (`unknown` with `providerIds` naming the query), like a payout's Transaction Status.
   */
  queryReceipt?(request: ProviderRequest, receipt: string): Promise<QueryResult>;
}

/**
 * Which adapter serves a network in a country (mobile-network.ts routes a number); undefined:
 * payments from that network are not available there. Without a country: any country.
 */
export type AdapterRegistry = (
  network: 'MPESA' | 'AIRTEL_MONEY' | 'MTN_MOMO',
  country?: string,
) => PaymentAdapter | undefined;
