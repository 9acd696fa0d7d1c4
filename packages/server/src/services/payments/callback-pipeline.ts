import type { FinalStatus, QueryResult } from './pipeline/adapter.ts';
import type { ExchangeRecord } from './providers/outcome.ts';

export type ClaimedOutcome = { status: FinalStatus | 'PENDING'; reason?: string; receipt?: string };
export type CallbackVerdict = 'applied' | 'already-final' | 'contradicted' | 'unconfirmed';

/**
 * What the provider callback routes need from the payment pipeline, with its deps already bound:
 * the pipeline's `findRequestByProviderId(db, …)`, `handleCallback(deps, …)` and
 * `recordQueryAnswer(deps, …)` (services/payments/pipeline/). A callback is never applied on its
 * own word: handleCallback queries the provider and applies only what the query confirms.
 */
export interface CallbackPipeline {
  findRequestByProviderId(
    adapterName: string,
    key: string,
    value: string,
  ): Promise<{ id: string; transactionId: string } | undefined>;
  /**
   * The one collection a callback with ids we never saved may belong to (the send timed out, or the
   * process died before the answer was saved), by number and amount: pipeline/callbacks.ts. Nothing is
   * written: `handleCallback` with `adoptIds` stores the ids only if the provider confirms the claim.
   */
  findOrphanCollection?(
    adapterName: string,
    input: { key: string; msisdn: string; amount: string },
  ): Promise<{ id: string; transactionId: string } | undefined>;
  handleCallback(input: {
    adapterName: string;
    requestId: string;
    claimed: ClaimedOutcome;
    exchange: ExchangeRecord;
    adoptIds?: Record<string, string>;
  }): Promise<CallbackVerdict>;
  /** An asynchronous query's answer (Daraja Transaction Status): treated exactly as a query result. */
  recordQueryAnswer(requestId: string, result: QueryResult): Promise<void>;
  /** A callback that names no request of ours (malformed, or unknown ids): kept for the operator. */
  recordUnmatched?(adapterName: string, exchange: ExchangeRecord, reason: string): Promise<void>;
}
