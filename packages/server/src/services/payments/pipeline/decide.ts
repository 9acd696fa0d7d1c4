import { sql } from 'drizzle-orm';
import type { Tx } from '../../../db/client.ts';
import { one } from '../../../db/query.ts';
import { amountString, Big } from '../../../lib/money.ts';
import { applyProviderResult } from '../apply-callback.ts';
import type { FinalStatus, PaymentEvidence, QueryResult, SendResult } from './adapter.ts';
import { owedNote, weighPayoutFailure } from './owed.ts';
import { type LoadedRequest, mergeProviderIds, recordDecision, recordExchanges, setState } from './store.ts';
import { adaptersOf, type PipelineDeps } from './types.ts';

/**
 * The key, in a collection's providerIds, of a receipt a paying callback named while the status
 * query denied the payment: the provider's own record of that receipt decides (`settleDispute`).
 */
export const DISPUTED_RECEIPT = 'disputedReceipt';

/** What a decision asks of the caller after commit: run the worker again (new disbursements). */
export type Decided = { note: string; nudge: boolean };

/** Capped exponential backoff with full jitter: uniform in [0, min(max, base · 2^attempt)). */
export function backoffMs(deps: Pick<PipelineDeps, 'settings' | 'random'>, attempt: number): number {
  const { PAYMENT_BACKOFF_BASE_MS: base, PAYMENT_BACKOFF_MAX_MS: max } = deps.settings;
  const cap = Math.min(max, base * 2 ** Math.min(attempt, 30));
  return Math.floor((deps.random ?? Math.random)() * cap);
}

const later = (now: Date, ms: number) => new Date(now.getTime() + ms);

/**
 * When to ask again about a request the provider still calls pending: after a quarter of its age,
 * at least the adapter's `reconcileAfterMs` and at most PAYMENT_BACKOFF_MAX_MS, and never past the
 * moment it reaches PAYMENT_MAX_PENDING_SECONDS. A fresh request is asked as often as before; one
 * pending for ten minutes every 150 s (at most every 5 min), not every few seconds. A collection
 * nobody pays costs a few dozen queries an hour instead of one per `reconcileAfterMs`.
 */
export function pendingLookMs(
  settings: Pick<PipelineDeps['settings'], 'PAYMENT_BACKOFF_MAX_MS' | 'PAYMENT_MAX_PENDING_SECONDS'>,
  createdAt: Date,
  now: Date,
  reconcileAfterMs: number,
): number {
  const age = now.getTime() - createdAt.getTime();
  const look = Math.min(
    Math.max(reconcileAfterMs, age / 4),
    Math.max(reconcileAfterMs, settings.PAYMENT_BACKOFF_MAX_MS),
  );
  // 1 ms past the maximum age, so that the look that comes then fails it (pastMaxAge is strict).
  const untilMaxAge = maxAgeLeftMs(settings, createdAt, now) + 1;
  return Math.round(Math.max(0, Math.min(look, untilMaxAge)));
}

/** What is left of PAYMENT_MAX_PENDING_SECONDS for a request created at `createdAt` (negative: past it). */
function maxAgeLeftMs(
  settings: Pick<PipelineDeps['settings'], 'PAYMENT_MAX_PENDING_SECONDS'>,
  createdAt: Date,
  now: Date,
): number {
  return settings.PAYMENT_MAX_PENDING_SECONDS * 1000 - (now.getTime() - createdAt.getTime());
}

/** Applies a provider's final status through the settlement logic (order effects, refunds), once. */
export async function applyFinal(
  tx: Tx,
  deps: PipelineDeps,
  request: LoadedRequest,
  final: { status: FinalStatus; reason?: string; receipt?: string },
  now: Date,
  options: { late?: boolean } = {},
): Promise<Decided> {
  // A payout the provider failed: the callbacks before its word are weighed; its reason names the
  // failure Result's code when one came first (owed.ts).
  const payoutFailure = request.operation === 'DISBURSE' && final.status !== 'SUCCESS';
  const reason = payoutFailure ? await weighPayoutFailure(tx, deps, request, final) : final.reason;
  const result = await applyProviderResult(
    tx,
    {
      transactionId: request.transactionId,
      status: final.status,
      providerReference: final.receipt ?? request.providerIds.reference ?? request.id,
      reason,
      ...(options.late ? { late: true } : {}),
    },
    deps,
  );
  // A repeat answer about a payout already failed keeps it owed (only the operator closes it). The
  // transaction as applyProviderResult read it under its lock decides: the request's copy may be
  // older (another answer about this payout, committed while this one waited for the request's lock).
  const settled = 'transaction' in result ? result.transaction : undefined;
  if (payoutFailure && settled && settled.status !== 'SUCCESS' && settled.status !== 'PENDING') {
    // The payout failed at the provider: the partner sees FAILED, the units are sold, and the
    // customer is still owed: the operator retries or pays another way (resolve.ts).
    const failure = `payout ${final.status.toLowerCase()}${reason ? ` (${reason})` : ''}`;
    const lastError = owedNote(request, settled.orderId, failure);
    await setState(tx, request.id, { state: 'OPERATOR', lastError }, now);
    deps.log.warn({ requestId: request.id, transactionId: request.transactionId }, lastError);
    return { note: `applied ${final.status}; to the operator: ${lastError}`, nudge: false };
  }
  // Settling marks the request DONE; a transaction already final (settled by hand or by a signed
  // callback) closes it too.
  await setState(tx, request.id, { state: 'DONE', lastError: null }, now);
  const note =
    result.outcome === 'applied'
      ? `applied ${final.status}${final.reason ? `: ${final.reason}` : ''}`
      : `provider says ${final.status}; transaction already ${request.transactionStatus}, nothing changed`;
  return { note, nudge: result.outcome === 'applied' && result.disbursements.length > 0 };
}

function pastMaxAge(deps: PipelineDeps, request: LoadedRequest, now: Date): boolean {
  return maxAgeLeftMs(deps.settings, request.createdAt, now) < 0;
}

/**
 * Nothing learned yet (pending, unknown): wait. Past the maximum age a collection fails with a
 * reason (nobody paid) and a disbursement goes to the operator (the customer may be owed).
 */
async function keepWaiting(
  tx: Tx,
  deps: PipelineDeps,
  request: LoadedRequest,
  now: Date,
  wait: {
    state: 'AWAITING' | 'UNCERTAIN';
    afterMs: number;
    attempts?: number;
    why: string;
    /** The provider itself said pending: the customer has not paid (yet). */
    pending?: boolean;
  },
): Promise<Decided> {
  if (pastMaxAge(deps, request, now)) {
    const reason = `no answer from the provider within ${deps.settings.PAYMENT_MAX_PENDING_SECONDS} s`;
    // A collection fails only on the provider's own word that nothing was paid yet; one we could not
    // ask about (no provider id: the answer to the push was lost), or whose payment is in dispute,
    // may have been paid: the operator decides with what we know (docs/payments.md, Crashes).
    const mayHavePaid = !wait.pending || request.providerIds[DISPUTED_RECEIPT] !== undefined;
    if (request.operation === 'COLLECT' && !mayHavePaid)
      return applyFinal(tx, deps, request, { status: 'FAILED', reason }, now);
    const what =
      request.operation === 'COLLECT'
        ? `the customer may have paid ${amountString(request.amount)} ${request.amount.currency} from ${request.msisdn}; find it in the provider's records`
        : `the customer is owed ${amountString(request.amount)} ${request.amount.currency}`;
    const lastError = `${reason} (${wait.why}): ${what}`;
    await setState(tx, request.id, { state: 'OPERATOR', lastError }, now);
    return { note: `to the operator: ${lastError}`, nudge: false };
  }
  await setState(
    tx,
    request.id,
    {
      state: wait.state,
      nextAttemptAt: later(now, wait.afterMs),
      attempts: wait.attempts,
      lastError: wait.why,
    },
    now,
  );
  return { note: `${wait.state}: ${wait.why}; next look in ${wait.afterMs} ms`, nudge: false };
}

/** A call that learned nothing (ambiguous, not-sent, unknown): backoff, bounded. */
async function failedAttempt(
  tx: Tx,
  deps: PipelineDeps,
  request: LoadedRequest,
  now: Date,
  kind: 'ambiguous' | 'not-sent' | 'unknown',
  reason: string,
  adapterReconcileMs: number,
): Promise<Decided> {
  const attempts = request.attempts + 1;
  const why = `${kind}: ${reason} (attempt ${attempts})`;
  if (attempts >= deps.settings.PAYMENT_MAX_ATTEMPTS) {
    // Out of attempts. A disbursement is never failed on a guess, and nothing not-sent is retried
    // for ever: the operator decides. A collection that may have gone out is never re-sent: the
    // sweep keeps querying until the provider answers or the maximum age fails it.
    if (request.operation === 'DISBURSE' || kind === 'not-sent') {
      await setState(tx, request.id, { state: 'OPERATOR', attempts, lastError: why }, now);
      return { note: `to the operator after ${attempts} attempts: ${why}`, nudge: false };
    }
    return keepWaiting(tx, deps, request, now, {
      state: 'AWAITING',
      afterMs: adapterReconcileMs,
      attempts,
      why,
    });
  }
  const delay = backoffMs(deps, attempts);
  if (kind === 'not-sent') {
    await setState(
      tx,
      request.id,
      { state: 'QUEUED', attempts, nextAttemptAt: later(now, delay), lastError: why },
      now,
    );
    return { note: `QUEUED again in ${delay} ms: ${why}`, nudge: false };
  }
  return keepWaiting(tx, deps, request, now, { state: 'UNCERTAIN', afterMs: delay, attempts, why });
}

export async function decideOnSend(
  tx: Tx,
  deps: PipelineDeps,
  request: LoadedRequest,
  result: SendResult,
  now: Date,
  reconcileAfterMs: number,
): Promise<Decided> {
  switch (result.kind) {
    case 'accepted': {
      const providerIds = { ...request.providerIds, ...result.providerIds };
      await setState(
        tx,
        request.id,
        { state: 'AWAITING', providerIds, nextAttemptAt: later(now, reconcileAfterMs), lastError: null },
        now,
      );
      return { note: `accepted; AWAITING, query in ${reconcileAfterMs} ms`, nudge: false };
    }
    case 'rejected':
      if (request.operation === 'COLLECT')
        return applyFinal(tx, deps, request, { status: 'FAILED', reason: result.reason }, now);
      // The customer is still owed: an operator decides what to do with a refused payout.
      await setState(tx, request.id, { state: 'OPERATOR', lastError: `rejected: ${result.reason}` }, now);
      return { note: `payout refused, to the operator: ${result.reason}`, nudge: false };
    case 'ambiguous':
    case 'not-sent':
      return failedAttempt(tx, deps, request, now, result.kind, result.reason, reconcileAfterMs);
  }
}

/** A query's answer, from the worker, the sweep or an asynchronous answer (recordQueryAnswer). */
export async function decideOnQuery(
  tx: Tx,
  deps: PipelineDeps,
  request: LoadedRequest,
  result: Exclude<QueryResult, { kind: 'not-found' }>,
  now: Date,
  reconcileAfterMs: number,
): Promise<Decided> {
  switch (result.kind) {
    case 'final': {
      if (request.providerIds[DISPUTED_RECEIPT] !== undefined)
        return settleDispute(tx, deps, request, result, now);
      const disputed = await disputeIfPaidClaim(tx, deps, request, result, now);
      return disputed ?? applyFinal(tx, deps, request, result, now);
    }
    case 'pending':
      return keepWaiting(tx, deps, request, now, {
        state: 'AWAITING',
        afterMs: pendingLookMs(deps.settings, request.createdAt, now, reconcileAfterMs),
        why: 'the provider says pending',
        pending: true,
      });
    case 'unknown':
      return failedAttempt(tx, deps, request, now, 'unknown', result.reason, reconcileAfterMs);
  }
}

/**
 * A collection the status query calls unpaid while a callback claimed a payment with a receipt:
 * before anything is decided, the provider's own record of that receipt is asked (an adapter with
 * `queryReceipt`: Daraja's Transaction Status). The request waits, due at once, with the receipt
 * under DISPUTED_RECEIPT; nothing is failed meanwhile. Undefined: no such claim, or the adapter's
 * status query is its authoritative record (MTN, Airtel), so the query's answer stands.
 */
export async function disputeIfPaidClaim(
  tx: Tx,
  deps: PipelineDeps,
  request: LoadedRequest,
  answer: { status: FinalStatus },
  now: Date,
): Promise<Decided | undefined> {
  if (request.operation !== 'COLLECT' || answer.status === 'SUCCESS') return undefined;
  if (!adaptersOf(deps.registry).get(request.adapter)?.queryReceipt) return undefined;
  const claim = await one<{ receipt: string }>(
    tx,
    sql`select claim->>'receipt' as receipt from provider_exchanges
  where provider_request_id = ${request.id} and kind = 'callback'
    and claim->>'status' = 'SUCCESS' and claim->>'receipt' is not null
  order by at desc limit 1`,
  );
  if (!claim) return undefined;
  await mergeProviderIds(tx, request.id, { [DISPUTED_RECEIPT]: claim.receipt });
  const why = `a callback says paid (receipt ${claim.receipt}), the query says ${answer.status}: asking the provider's record of the receipt`;
  await setState(tx, request.id, { state: 'AWAITING', nextAttemptAt: now, lastError: why }, now);
  return { note: why, nudge: true };
}

/**
 * The provider's own record of a disputed receipt: a completed payment of this request's amount
 * from this request's number settles it as paid, with that receipt. Anything else (failed, not
 * found, another amount or payer) leaves the sources in disagreement: the operator decides, and the
 * order is neither executed nor failed until then. Pending or unknown: asked again, bounded by the
 * maximum age, after which the operator decides.
 */
export async function settleDispute(
  tx: Tx,
  deps: PipelineDeps,
  request: LoadedRequest,
  result: QueryResult,
  now: Date,
): Promise<Decided> {
  const receipt = request.providerIds[DISPUTED_RECEIPT]!;
  if (result.kind === 'final' && result.status === 'SUCCESS' && evidenceMatches(request, result.evidence)) {
    const decided = await applyFinal(tx, deps, request, { status: 'SUCCESS', receipt }, now);
    return { ...decided, note: `the provider's record of ${receipt} shows the payment; ${decided.note}` };
  }
  if (result.kind === 'final' || result.kind === 'not-found') {
    const says =
      result.kind === 'final'
        ? `${result.status}${result.status === 'SUCCESS' ? ' for another amount or payer' : ''}`
        : 'no such payment';
    const lastError = `sources disagree: a callback says paid (receipt ${receipt}), the status query denies it, the provider's record of the receipt says ${says}; the operator decides`;
    await setState(tx, request.id, { state: 'OPERATOR', lastError }, now);
    deps.log.warn({ suspicious: true, requestId: request.id, receipt }, 'payment sources disagree');
    return { note: `to the operator: ${lastError}`, nudge: false };
  }
  const reconcileMs = adaptersOf(deps.registry).get(request.adapter)?.reconcileAfterMs ?? 60_000;
  return keepWaiting(tx, deps, request, now, {
    state: 'AWAITING',
    afterMs: pendingLookMs(deps.settings, request.createdAt, now, reconcileMs),
    why: `the receipt ${receipt} is in dispute; ${result.kind === 'unknown' ? result.reason : 'pending'}`,
  });
}

/** The provider's record names our amount and our customer's number (when it names them at all). */
function evidenceMatches(request: LoadedRequest, evidence: PaymentEvidence | undefined): boolean {
  if (!evidence?.amount || !evidence.party) return false;
  const amount = parseAmount(evidence.amount);
  if (!amount) return false;
  const digits = request.msisdn.replace(/\D/g, '');
  const party = evidence.party.replace(/\D/g, '');
  return amount.eq(request.amount.amount) && digits.length >= 9 && party.includes(digits.slice(-9));
}

function parseAmount(text: string) {
  try {
    return new Big(text.trim());
  } catch {
    return undefined;
  }
}

export { recordDecision, recordExchanges };
