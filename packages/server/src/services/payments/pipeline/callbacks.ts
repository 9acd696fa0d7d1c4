import { createId } from '@partner-api/contract';
import { sql } from 'drizzle-orm';
import type { Queryable } from '../../../db/client.ts';
import { one, rows, run } from '../../../db/query.ts';
import type { ExchangeRecord } from '../providers/outcome.ts';
import type { FinalStatus, QueryResult } from './adapter.ts';
import {
  applyFinal,
  type Decided,
  DISPUTED_RECEIPT,
  decideOnQuery,
  disputeIfPaidClaim,
  settleDispute,
} from './decide.ts';
import {
  type LoadedRequest,
  loadRequest,
  markCallback,
  mergeProviderIds,
  recordDecision,
  recordExchanges,
  setState,
} from './store.ts';
import { adaptersOf, type PipelineDeps } from './types.ts';
import { callQuery } from './worker.ts';

/**
 * The request a provider's id belongs to (e.g. `checkoutRequestId`), among one adapter's requests.
 * Daraja's `originatorConversationId` is our request id (B2C takes ours), so it also matches a
 * request whose id it is: a payout's callback after a crash, before Daraja's answer was saved.
 */
/** Provider ids that are our request's own id (Daraja B2C's, Airtel's transaction id). */
const OWN_ID_KEYS = new Set(['originatorConversationId', 'airtelTransactionId']);

export async function findRequestByProviderId(
  db: Queryable,
  adapterName: string,
  key: string,
  value: string,
): Promise<{ id: string; transactionId: string } | undefined> {
  const byId = OWN_ID_KEYS.has(key) ? sql` or id = ${value}` : sql``;
  return one<{ id: string; transactionId: string }>(
    db,
    sql`select id, transaction_id as "transactionId" from provider_requests
  where adapter = ${adapterName}
    and (provider_ids @> ${JSON.stringify({ [key]: value })}::jsonb${byId})
  limit 1`,
  );
}

/**
 * A collection whose send timed out or was reset after the provider took it, or whose process died
 * before the answer was saved: we never learned the provider's id, so its callback matches nothing by
 * id. The candidate is the one unsettled COLLECT request of this adapter without `key` in its ids, on
 * a PENDING transaction of the number that paid and that amount (the operator's queue included);
 * none or several: undefined. Nothing is written here: `handleCallback` queries the provider with
 * the callback's ids (`adoptIds`) and stores them only if the provider confirms the claim.
 */
export async function findOrphanCollection(
  db: Queryable,
  adapterName: string,
  input: { key: string; msisdn: string; amount: string },
): Promise<{ id: string; transactionId: string } | undefined> {
  const digits = input.msisdn.replace(/\D/g, '');
  const candidates = await rows<{ id: string; transactionId: string }>(
    db,
    sql`select r.id, r.transaction_id as "transactionId" from provider_requests r
  join transactions t on t.id = r.transaction_id
  where r.adapter = ${adapterName} and r.operation = 'COLLECT'
    and r.state in ('SENDING', 'UNCERTAIN', 'AWAITING', 'OPERATOR') and not (r.provider_ids ? ${input.key})
    and t.status = 'PENDING' and regexp_replace(t.msisdn, '\D', '', 'g') = ${digits}
    and t.amount = ${input.amount}::numeric
  limit 2`,
  );
  return candidates.length === 1 ? candidates[0] : undefined;
}

/** Unmatched callbacks kept per minute by this process; beyond it they are counted, not stored. */
export const UNMATCHED_KEPT_PER_MINUTE = 600;

const unmatchedBudget = (() => {
  let windowStart = 0;
  let used = 0;
  let lastDropLog = 0;
  return {
    take(now: number): boolean {
      if (now - windowStart >= 60_000) {
        windowStart = now;
        used = 0;
      }
      if (used >= UNMATCHED_KEPT_PER_MINUTE) return false;
      used++;
      return true;
    },
    shouldLogDrop(now: number): boolean {
      if (now - lastDropLog < 60_000) return false;
      lastDropLog = now;
      return true;
    },
  };
})();

/**
 * A callback that names no request of ours (malformed, or ids we never had): recorded as an
 * exchange with no request (an operator can search it) and logged.
 */
export async function recordUnmatched(
  deps: Pick<PipelineDeps, 'db' | 'log' | 'metrics'>,
  adapterName: string,
  e: ExchangeRecord,
  reason: string,
): Promise<void> {
  deps.metrics.providerCallbacks.inc({ adapter: adapterName, outcome: 'unconfirmed' });
  if (!unmatchedBudget.take(Date.now())) {
    // A flood of callbacks naming nothing of ours: counted, logged once a minute, not stored.
    deps.metrics.providerCallbacks.inc({ adapter: adapterName, outcome: 'unmatched-not-kept' });
    if (unmatchedBudget.shouldLogDrop(Date.now()))
      deps.log.warn(
        { adapter: adapterName, perMinute: UNMATCHED_KEPT_PER_MINUTE },
        'unmatched provider callbacks over the budget: counted, not kept',
      );
    return;
  }
  deps.log.warn({ adapter: adapterName, reason, path: e.path }, 'provider callback matches no request');
  await run(
    deps.db,
    sql`insert into provider_exchanges (id, provider_request_id, transaction_id, kind, operation, at,
  latency_ms, http_status, provider_ids, request_body, response_body, note, source_address, confirmed)
  values (${createId()}, null, null, 'callback', ${e.operation}, ${e.startedAt.toISOString()}::timestamptz,
  ${Math.round(e.latencyMs)}, ${e.status}, null, ${JSON.stringify(e.requestBody ?? null)}::jsonb,
  ${JSON.stringify(e.responseBody ?? null)}::jsonb, ${`unmatched ${adapterName} callback: ${reason}`},
  ${e.sourceAddress ?? null}, false)`,
  );
}

export type CallbackClaim = { status: FinalStatus | 'PENDING'; reason?: string; receipt?: string };

export type CallbackInput = {
  adapterName: string;
  requestId: string;
  claimed: CallbackClaim;
  exchange: ExchangeRecord;
  /**
   * Ids the callback gives for a request that has none yet (a push whose answer was lost): the
   * query asks with them, and they are stored only if the provider confirms the claim.
   */
  adoptIds?: Record<string, string>;
};

/**
 * A provider's callback, never trusted alone: it is kept as it came (an append-only record with its
 * source address and its claim), then the provider is queried, and the order is paid or the payout
 * recorded only when the query's final status equals the claim. Nothing of the callback (ids, claim,
 * receipt) is written to the request before that: a confirmed claim becomes the request's `claimed`
 * and the record is marked confirmed; a contradiction changes nothing (logged `suspicious`, the record
 * marked unconfirmed), except that a claim of payment the query denies is put to the provider's own
 * record of the receipt (`disputeOrApply`). A callback on a collection that ended unpaid is checked
 * too: a payment the provider confirms after the order ended is refunded.
 */
export async function handleCallback(
  deps: PipelineDeps,
  input: CallbackInput,
): Promise<'applied' | 'already-final' | 'contradicted' | 'unconfirmed'> {
  const count = (outcome: string) =>
    deps.metrics.providerCallbacks.inc({ adapter: input.adapterName, outcome });
  const request = await loadRequest(deps.db, input.requestId);
  if (!request) {
    deps.log.warn({ requestId: input.requestId }, 'callback for an unknown provider request');
    count('unconfirmed');
    return 'unconfirmed';
  }
  const [callbackId] = await recordExchanges(deps.db, request, 'callback', [input.exchange], input.claimed);
  if (request.state === 'DONE' && !claimsLatePayment(request, input.claimed)) {
    count('confirmed');
    return 'already-final';
  }
  const adapter = adaptersOf(deps.registry).get(request.adapter);
  if (!adapter) {
    count('unconfirmed');
    return 'unconfirmed';
  }
  const asked = input.adoptIds
    ? { ...request, providerIds: { ...request.providerIds, ...input.adoptIds } }
    : request;
  const answer = await callQuery(deps, adapter, asked);
  const now = deps.clock();
  const outcome = await deps.db.transaction(async (tx) => {
    const current = await loadRequest(tx, request.id, true);
    if (!current) return 'unconfirmed';
    await recordExchanges(tx, current, 'query', answer.exchanges);
    if (answer.kind === 'unknown' && answer.providerIds && !input.adoptIds)
      await mergeProviderIds(tx, current.id, answer.providerIds);
    if (answer.kind !== 'final') {
      await recordDecision(
        tx,
        current,
        'callback',
        `callback unconfirmed: the query says ${answer.kind}`,
        now,
      );
      count('unconfirmed');
      return 'unconfirmed';
    }
    if (answer.status !== input.claimed.status) {
      const note = `suspicious callback: claims ${input.claimed.status}, the query says ${answer.status}; nothing changed`;
      deps.log.warn(
        {
          suspicious: true,
          requestId: current.id,
          transactionId: current.transactionId,
          claimed: input.claimed.status,
          queried: answer.status,
          source: input.exchange.sourceAddress,
        },
        note,
      );
      await markCallback(tx, callbackId!, false);
      await recordDecision(tx, current, 'callback', note, now);
      count('contradicted');
      // Adopting: the query was about ids that are not (yet) this request's; nothing to dispute.
      if (!input.adoptIds && current.state !== 'DONE' && adapter.queryReceipt)
        await disputeIfPaidClaim(tx, deps, current, answer, now);
      return 'contradicted';
    }
    if (input.adoptIds) {
      const taken = await Promise.all(
        Object.entries(input.adoptIds).map(([key, value]) =>
          findRequestByProviderId(tx, current.adapter, key, value),
        ),
      );
      if (taken.some((other) => other && other.id !== current.id)) {
        await recordDecision(
          tx,
          current,
          'callback',
          'adoption refused: its ids belong to another request',
          now,
        );
        count('unconfirmed');
        return 'unconfirmed';
      }
      await mergeProviderIds(tx, current.id, input.adoptIds);
      await recordDecision(
        tx,
        current,
        'callback',
        "adopted: the provider confirmed the callback's ids",
        now,
      );
    }
    await markCallback(tx, callbackId!, true);
    count('confirmed');
    if (current.state !== 'DONE') await setClaimed(tx, current.id, input.claimed);
    // Settled meanwhile (a duplicate of this callback, the sweep): only a payment on a collection
    // that ended unpaid is still to act on.
    if (current.state === 'DONE' && !claimsLatePayment(current, input.claimed)) return 'already-final';
    const receipt = answer.receipt ?? input.claimed.receipt;
    const decided = await applyFinal(tx, deps, current, { ...answer, ...(receipt ? { receipt } : {}) }, now, {
      late: current.state === 'DONE',
    });
    await recordDecision(tx, current, 'callback', `callback confirmed by query; ${decided.note}`, now);
    return 'applied';
  });
  if (outcome === 'applied') {
    deps.log.info({ requestId: request.id }, 'callback confirmed and applied');
    deps.nudge?.();
  }
  return outcome;
}

/**
 * The answer to a query that comes later (Daraja's Transaction Status arrives on a callback):
 * decided exactly as a query's answer in the worker. A request already done records it only;
 * not-found means the provider never received it, so it is queued to be sent again (same id). For a
 * collection whose receipt is in dispute, this is the provider's own record of that receipt: a
 * completed payment of our amount from our customer's number settles it as paid; anything else
 * leaves the sources in disagreement, and the operator decides.
 */
export async function recordQueryAnswer(
  deps: PipelineDeps,
  requestId: string,
  result: QueryResult,
): Promise<void> {
  const adapter = (name: string) => adaptersOf(deps.registry).get(name);
  const now = deps.clock();
  const decided = await deps.db.transaction(async (tx): Promise<Decided | undefined> => {
    const current = await loadRequest(tx, requestId, true);
    if (!current) return undefined;
    await recordExchanges(tx, current, 'query', result.exchanges);
    let decided: Decided;
    if (current.state === 'DONE') {
      decided = { note: `late query answer (${result.kind}); already done, nothing changed`, nudge: false };
    } else if (current.providerIds[DISPUTED_RECEIPT] !== undefined) {
      // An answer that came is an answer: one we cannot read (Daraja's undocumented "not found") is
      // no record of the payment.
      const answer = result.kind === 'unknown' ? { kind: 'not-found' as const, exchanges: [] } : result;
      decided = await settleDispute(tx, deps, current, answer, now);
    } else if (result.kind === 'not-found') {
      await setState(tx, current.id, { state: 'QUEUED', nextAttemptAt: now }, now);
      decided = {
        note: 'the provider never received it: QUEUED to send again with the same id',
        nudge: true,
      };
    } else {
      decided = await decideOnQuery(
        tx,
        deps,
        current,
        result,
        now,
        adapter(current.adapter)?.reconcileAfterMs ?? 60_000,
      );
    }
    await recordDecision(tx, current, 'query', decided.note, now);
    return decided;
  });
  if (decided?.nudge) {
    deps.log.info({ requestId }, 'query answer recorded; more to send');
    deps.nudge?.();
  }
}

/** A paying claim on a collection whose transaction is not SUCCESS: acted on even once the request is DONE. */
function claimsLatePayment(
  request: Pick<LoadedRequest, 'operation' | 'transactionStatus'>,
  claimed: CallbackClaim,
): boolean {
  return (
    request.operation === 'COLLECT' && claimed.status === 'SUCCESS' && request.transactionStatus !== 'SUCCESS'
  );
}

/** The confirmed facts of a callback, kept on the request; a settled request's are never replaced. */
async function setClaimed(q: Queryable, id: string, claimed: CallbackClaim): Promise<void> {
  await run(
    q,
    sql`update provider_requests set claimed = ${JSON.stringify(claimed)}::jsonb where id = ${id} and state <> 'DONE'`,
  );
}
