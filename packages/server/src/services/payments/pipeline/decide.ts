import type { Tx } from '../../../db/client.ts';
import { applyProviderResult } from '../apply-callback.ts';
import type { FinalStatus, QueryResult, SendResult } from './adapter.ts';
import { type LoadedRequest, recordDecision, recordExchanges, setState } from './store.ts';
import type { PipelineDeps } from './types.ts';

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
): Promise<Decided> {
  const result = await applyProviderResult(
    tx,
    {
      transactionId: request.transactionId,
      status: final.status,
      providerReference: final.receipt ?? request.providerIds.reference ?? request.id,
      reason: final.reason,
    },
    deps,
  );
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
  wait: { state: 'AWAITING' | 'UNCERTAIN'; afterMs: number; attempts?: number; why: string },
): Promise<Decided> {
  if (pastMaxAge(deps, request, now)) {
    const reason = `no answer from the provider within ${deps.settings.PAYMENT_MAX_PENDING_SECONDS} s`;
    if (request.operation === 'COLLECT')
      return applyFinal(tx, deps, request, { status: 'FAILED', reason }, now);
    await setState(tx, request.id, { state: 'OPERATOR', lastError: `${reason} (${wait.why})` }, now);
    return { note: `to the operator: ${reason} (${wait.why})`, nudge: false };
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
    case 'final':
      return applyFinal(tx, deps, request, result, now);
    case 'pending':
      return keepWaiting(tx, deps, request, now, {
        state: 'AWAITING',
        afterMs: pendingLookMs(deps.settings, request.createdAt, now, reconcileAfterMs),
        why: 'the provider says pending',
      });
    case 'unknown':
      return failedAttempt(tx, deps, request, now, 'unknown', result.reason, reconcileAfterMs);
  }
}

export { recordDecision, recordExchanges };
