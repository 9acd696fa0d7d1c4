import { createId } from '@partner-api/contract';
import { sql } from 'drizzle-orm';
import type { Queryable } from '../../../db/client.ts';
import { one, rows, run } from '../../../db/query.ts';
import type { ExchangeRecord } from '../providers/outcome.ts';
import type { FinalStatus, QueryResult } from './adapter.ts';
import { applyFinal, type Decided, decideOnQuery } from './decide.ts';
import { loadRequest, mergeProviderIds, recordDecision, recordExchanges, setState } from './store.ts';
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
 * A collection whose send timed out or was reset after the provider took it: we never learned the
 * provider's id, so its callback matches nothing by id. This adopts it by what the paying callback
 * tells (the number that paid and the amount): exactly one unsettled COLLECT request of this adapter
 * without `key` in its ids, on a PENDING transaction of that number and amount, gets `ids` and is
 * returned; none or several: undefined (left to the operator). Nothing is applied here: the caller
 * hands the callback to `handleCallback`, which confirms by querying the provider with those ids.
 */
export async function adoptOrphanCollection(
  db: Queryable,
  adapterName: string,
  input: { key: string; msisdn: string; amount: string; ids: Record<string, string> },
): Promise<{ id: string; transactionId: string } | undefined> {
  const digits = input.msisdn.replace(/\D/g, '');
  const candidates = await rows<{ id: string; transactionId: string }>(
    db,
    sql`select r.id, r.transaction_id as "transactionId" from provider_requests r
  join transactions t on t.id = r.transaction_id
  where r.adapter = ${adapterName} and r.operation = 'COLLECT'
    and r.state in ('SENDING', 'UNCERTAIN', 'AWAITING') and not (r.provider_ids ? ${input.key})
    and t.status = 'PENDING' and regexp_replace(t.msisdn, '\D', '', 'g') = ${digits}
    and t.amount = ${input.amount}::numeric
  limit 2`,
  );
  if (candidates.length !== 1) return undefined;
  const [only] = candidates;
  await run(
    db,
    sql`update provider_requests set provider_ids = provider_ids || ${JSON.stringify(input.ids)}::jsonb
  where id = ${only!.id} and not (provider_ids ? ${input.key})`,
  );
  return only;
}

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
  deps.log.warn({ adapter: adapterName, reason, path: e.path }, 'provider callback matches no request');
  deps.metrics.providerCallbacks.inc({ adapter: adapterName, outcome: 'unconfirmed' });
  await run(
    deps.db,
    sql`insert into provider_exchanges (id, provider_request_id, transaction_id, kind, operation, at,
  latency_ms, http_status, provider_ids, request_body, response_body, note)
  values (${createId()}, null, null, 'callback', ${e.operation}, ${e.startedAt.toISOString()}::timestamptz,
  ${Math.round(e.latencyMs)}, ${e.status}, null, ${JSON.stringify(e.requestBody ?? null)}::jsonb,
  ${JSON.stringify(e.responseBody ?? null)}::jsonb, ${`unmatched ${adapterName} callback: ${reason}`})`,
  );
}

export type CallbackClaim = { status: FinalStatus | 'PENDING'; reason?: string; receipt?: string };

/**
 * A provider's callback, never trusted alone: it is recorded (and its claim kept on the request),
 * then the adapter is queried, and the order is paid or the payout recorded only when the query's
 * final status equals the claim. A contradiction changes nothing: it is logged `suspicious` and
 * recorded. Anything else ('unconfirmed') is left to the reconciliation sweep.
 */
export async function handleCallback(
  deps: PipelineDeps,
  input: { adapterName: string; requestId: string; claimed: CallbackClaim; exchange: ExchangeRecord },
): Promise<'applied' | 'already-final' | 'contradicted' | 'unconfirmed'> {
  const count = (outcome: string) =>
    deps.metrics.providerCallbacks.inc({ adapter: input.adapterName, outcome });
  const request = await loadRequest(deps.db, input.requestId);
  if (!request) {
    deps.log.warn({ requestId: input.requestId }, 'callback for an unknown provider request');
    count('unconfirmed');
    return 'unconfirmed';
  }
  await deps.db.transaction(async (tx) => {
    await recordExchanges(tx, request, 'callback', [input.exchange]);
    await run(
      tx,
      sql`update provider_requests set claimed = ${JSON.stringify(input.claimed)}::jsonb where id = ${request.id}`,
    );
  });
  if (request.state === 'DONE') {
    count('confirmed');
    return 'already-final';
  }
  const adapter = adaptersOf(deps.registry).get(request.adapter);
  if (!adapter) {
    count('unconfirmed');
    return 'unconfirmed';
  }
  const answer = await callQuery(deps, adapter, request);
  const now = deps.clock();
  return deps.db
    .transaction(async (tx) => {
      const current = await loadRequest(tx, request.id, true);
      if (!current) return 'unconfirmed';
      await recordExchanges(tx, current, 'query', answer.exchanges);
      if (answer.kind === 'unknown' && answer.providerIds)
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
          },
          note,
        );
        await recordDecision(tx, current, 'callback', note, now);
        count('contradicted');
        return 'contradicted';
      }
      count('confirmed');
      if (current.state === 'DONE') return 'already-final';
      const decided = await applyFinal(tx, deps, current, answer, now);
      await recordDecision(tx, current, 'callback', `callback confirmed by query; ${decided.note}`, now);
      return 'applied';
    })
    .then((outcome) => {
      if (outcome === 'applied') deps.log.info({ requestId: request.id }, 'callback confirmed and applied');
      return outcome;
    });
}

/**
 * The answer to a query that comes later (Daraja B2C Transaction Status arrives on a callback):
 * decided exactly as a query's answer in the worker. A request already done records it only;
 * not-found means the provider never received it, so it is queued to be sent again (same id).
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
    } else if (result.kind === 'not-found') {
      await setState(tx, current.id, { state: 'QUEUED', nextAttemptAt: now }, now);
      decided = {
        note: 'the provider never received it: QUEUED to send again with the same id',
        nudge: true,
      };
    } else {
      const claimed = current.claimed?.status;
      if (
        result.kind === 'final' &&
        claimed !== undefined &&
        claimed !== 'PENDING' &&
        claimed !== result.status
      )
        deps.log.warn(
          { suspicious: true, requestId, claimed, queried: result.status },
          'callback contradicted by the query',
        );
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
  if (decided?.nudge) deps.log.info({ requestId }, 'query answer recorded; more to send');
}
