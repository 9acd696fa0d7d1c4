import { sql } from 'drizzle-orm';
import type { Tx } from '../../../db/client.ts';
import { one } from '../../../db/query.ts';
import { handBackAfterFailure, startPassLoop } from '../../../lib/pass-loop.ts';
import type { PaymentAdapter, QueryResult, SendResult } from './adapter.ts';
import { type BreakerState, createBreakers, providerFailed } from './breaker.ts';
import { type Decided, DISPUTED_RECEIPT, decideOnQuery, decideOnSend } from './decide.ts';
import {
  type ClaimedRequest,
  claimDue,
  handBack,
  type LoadedRequest,
  loadRequest,
  markDispatched,
  mergeProviderIds,
  recordDecision,
  recordExchanges,
  setState,
} from './store.ts';
import { adaptersOf, type PipelineDeps } from './types.ts';

/** Serialises the reconciliation sweep's claims across instances (pg_try_advisory_xact_lock). */
export const SWEEP_LOCK_ID = 7_246_115;

/** Kinds that only an answering provider gives (an adapter without HTTP exchanges: the simulator). */
const ANSWERED = new Set(['accepted', 'rejected', 'final', 'pending', 'not-found']);

/** Calls the adapter: metrics by adapter/operation/outcome, latency, and the breaker's count. */
async function call<R extends SendResult | QueryResult>(
  deps: PipelineDeps,
  adapter: PaymentAdapter,
  operation: 'send' | 'query',
  run: () => Promise<R>,
): Promise<R> {
  const started = performance.now();
  let result: R;
  try {
    result = await run();
  } catch (err) {
    // An adapter must not throw; if it does, nothing is known: treat it as ambiguous / unknown.
    deps.log.error({ err, adapter: adapter.name, operation }, 'payment adapter threw');
    const reason = `adapter error: ${err instanceof Error ? err.message : String(err)}`;
    result = (operation === 'send'
      ? { kind: 'ambiguous', reason, exchanges: [] }
      : { kind: 'unknown', reason, exchanges: [] }) as unknown as R;
  }
  deps.metrics.providerCalls.inc({ adapter: adapter.name, operation, outcome: result.kind });
  deps.metrics.providerLatency.observe(
    { adapter: adapter.name, operation },
    (performance.now() - started) / 1000,
  );
  // Only the provider's own failures count: a call that learned nothing because the provider did not
  // answer or answered 5xx. A pending answer sent as a 500 (Daraja's "being processed") is an answer.
  // An adapter that threw (our fault) counts neither way.
  if (ANSWERED.has(result.kind)) deps.breakers?.success(adapter.name);
  else if (providerFailed(result.exchanges)) deps.breakers?.failure(adapter.name);
  else if (result.exchanges.length > 0) deps.breakers?.success(adapter.name);
  return result;
}

/** Queries the provider; a collection whose receipt is in dispute asks the provider's record of it. */
export const callQuery = (deps: PipelineDeps, adapter: PaymentAdapter, request: LoadedRequest) => {
  const disputed = request.providerIds[DISPUTED_RECEIPT];
  return call(deps, adapter, 'query', () =>
    disputed !== undefined && adapter.queryReceipt
      ? adapter.queryReceipt(request, disputed)
      : adapter.query(request),
  );
};

type Calls = Array<{
  kind: 'request' | 'query';
  exchanges: SendResult['exchanges'];
  providerIds?: Record<string, string>;
}>;
type Decide = (tx: Tx, current: LoadedRequest, now: Date) => Promise<Decided>;

/**
 * Records one call's exchanges and the decision in one transaction, if this worker still holds the
 * request's lease (`lease`: the locked_until it set). A request settled meanwhile (a confirmed
 * callback, the operator) keeps its state; the exchanges are recorded all the same.
 */
async function record(
  deps: PipelineDeps,
  request: LoadedRequest,
  lease: string,
  calls: Calls,
  operation: string,
  decide: Decide,
): Promise<boolean> {
  const now = deps.clock();
  const decided = await deps.db.transaction(async (tx) => {
    const current = await loadRequest(tx, request.id, true);
    if (!current) return undefined;
    for (const c of calls) {
      await recordExchanges(tx, current, c.kind, c.exchanges);
      if (c.providerIds) await mergeProviderIds(tx, current.id, c.providerIds);
    }
    const held =
      current.state === 'SENDING' &&
      current.lockedUntil !== null &&
      Date.parse(current.lockedUntil) === Date.parse(lease);
    if (!held) {
      await recordDecision(tx, current, operation, `lease lost (now ${current.state}); no change`, now);
      return undefined;
    }
    const d = await decide(tx, current, now);
    await recordDecision(tx, current, operation, d.note, now);
    return d;
  });
  if (decided)
    deps.log.info(
      { requestId: request.id, transactionId: request.transactionId, decision: decided.note },
      'payment request decided',
    );
  return decided?.nudge ?? false;
}

/**
 * One claimed request (read by its claim): send it, or (it may have gone out) query first. True: run
 * again soon.
 */
async function processClaimed(
  deps: PipelineDeps,
  adapter: PaymentAdapter,
  request: ClaimedRequest,
  lease: string,
): Promise<boolean> {
  const calls: Calls = [];
  // A SENDING request never marked dispatched: its holder died between the claim and the call, so
  // nothing left us and it is sent as if queued (one prompt), never queried for an id it cannot have.
  const neverSent = request.previousState === 'SENDING' && request.dispatchedAt === null;
  if (request.previousState !== 'QUEUED' && !neverSent) {
    // UNCERTAIN, AWAITING, or SENDING whose holder died: the request may have reached the provider.
    const answer = await callQuery(deps, adapter, request);
    calls.push({
      kind: 'query',
      exchanges: answer.exchanges,
      ...(answer.kind === 'unknown' && answer.providerIds ? { providerIds: answer.providerIds } : {}),
    });
    if (answer.kind !== 'not-found') {
      return record(deps, request, lease, calls, 'query', (tx, current, now) =>
        decideOnQuery(tx, deps, current, answer, now, adapter.reconcileAfterMs),
      );
    }
    // The provider never received it: sending again, with the same id, is safe.
  } else if (request.transactionStatus !== 'PENDING') {
    // Settled or cancelled before anything was sent (a cancelled buy, a hand settlement): never send.
    return record(deps, request, lease, calls, 'send', async (tx, current, now) => {
      await setState(tx, current.id, { state: 'DONE' }, now);
      return { note: `not sent: the transaction is already ${current.transactionStatus}`, nudge: false };
    });
  }
  // Marked just before the call leaves, while this worker's lease holds (markDispatched).
  let dispatched = false;
  const dispatching = async () => {
    if (dispatched) return;
    const ownIds = adapter.ownIds?.(request);
    if (!(await markDispatched(deps.db, { id: request.id, lease, now: deps.clock(), ownIds })))
      throw new Error('the lease was lost before sending; not sent');
    dispatched = true;
  };
  if (!adapter.callsDispatching) await dispatching();
  const sent = await call(deps, adapter, 'send', () => adapter.send(request, dispatching));
  calls.push({ kind: 'request', exchanges: sent.exchanges });
  return record(deps, request, lease, calls, 'send', (tx, current, now) =>
    decideOnSend(tx, deps, current, sent, now, adapter.reconcileAfterMs),
  );
}

/**
 * The provider calls of this instance in flight, per adapter. The worker's passes do not wait for
 * them: a pass claims only what the adapter has room for (PAYMENT_WORKER_BATCH calls at once per
 * adapter) and hands each claim to its own call, so one slow or hung call delays only its own
 * request, never another customer's prompt. `done` runs after each call (the worker nudges itself).
 */
export type InFlight = { count: Map<string, number>; all: Set<Promise<boolean>>; done: () => void };

export function createInFlight(done: () => void): InFlight {
  return { count: new Map(), all: new Set(), done };
}

/**
 * One pass of this instance: for each adapter whose breaker allows it, claim due requests (and, if
 * this instance wins the sweep lock, due AWAITING ones), commit, then call the adapter outside any
 * transaction and record each outcome. Without `inFlight` the pass waits for every call and returns
 * true when there may be more due work at once; with it (the worker), the calls go on after the
 * pass returns, bounded per adapter, and each one's end nudges the next pass.
 */
export async function runPipelineOnce(deps: PipelineDeps, inFlight?: InFlight): Promise<boolean> {
  const { PAYMENT_WORKER_BATCH: batch, PAYMENT_LEASE_SECONDS: leaseSeconds } = deps.settings;
  const now = deps.clock();
  const lease = new Date(now.getTime() + leaseSeconds * 1000).toISOString();
  const claims: Array<{ adapter: PaymentAdapter; request: ClaimedRequest }> = [];
  for (const adapter of adaptersOf(deps.registry).values()) {
    const room = batch - (inFlight?.count.get(adapter.name) ?? 0);
    if (room <= 0) continue;
    const allowed = deps.breakers ? deps.breakers.allowance(adapter.name, room) : room;
    if (allowed === 0) continue;
    const mine = await claimDue(deps.db, {
      adapter: adapter.name,
      limit: allowed,
      now: now.toISOString(),
      leaseUntil: lease,
      awaiting: false,
    });
    const left = allowed - mine.length;
    // The sweep's claim and its lock in one statement: the lock is held while it claims.
    const swept =
      left > 0
        ? await claimDue(deps.db, {
            adapter: adapter.name,
            limit: left,
            now: now.toISOString(),
            leaseUntil: lease,
            awaiting: true,
            onlyWithLock: SWEEP_LOCK_ID,
          })
        : [];
    // A half-open trial that found nothing due is freed, so the next pass may try.
    if (mine.length + swept.length === 0 && deps.breakers?.state(adapter.name) === 'half-open')
      deps.breakers.release(adapter.name);
    for (const request of [...mine, ...swept]) claims.push({ adapter, request });
  }
  const processing = claims.map(({ adapter, request: c }) => {
    const p = processClaimed(deps, adapter, c, lease).catch(async (err: unknown) => {
      // Handed back after the base backoff rather than held for the whole lease: a passing
      // database failure delays the request by a second, not a minute. The next pass queries
      // first. If the database still refuses, the lease stands and runs out as for a dead worker.
      const until = new Date(deps.clock().getTime() + deps.settings.PAYMENT_BACKOFF_BASE_MS);
      const outcome = await handBackAfterFailure(
        () => handBack(deps.db, c.id, lease, until.toISOString()),
        lease,
        until,
        'handed back, the next pass queries first',
      );
      deps.log.error(
        { err, requestId: c.id, retryAt: outcome.retryAt },
        `payment request processing failed; ${outcome.what}`,
      );
      return false;
    });
    if (inFlight) track(inFlight, adapter.name, p);
    return p;
  });
  if (inFlight) return false;
  const results = await Promise.all(processing);
  return results.some(Boolean) || claims.length >= batch;
}

function track(inFlight: InFlight, adapter: string, p: Promise<boolean>): void {
  inFlight.count.set(adapter, (inFlight.count.get(adapter) ?? 0) + 1);
  inFlight.all.add(p);
  void p.finally(() => {
    inFlight.count.set(adapter, (inFlight.count.get(adapter) ?? 1) - 1);
    inFlight.all.delete(p);
    inFlight.done();
  });
}

/** The oldest not-done request's age per adapter, for the gauge (0 when none). */
export async function updatePendingGauge(deps: PipelineDeps): Promise<void> {
  const now = deps.clock().getTime();
  for (const name of adaptersOf(deps.registry).keys()) {
    const row = await one<{ oldest: string | null }>(
      deps.db,
      sql`select min(created_at)::text as oldest from provider_requests
  where adapter = ${name} and state in ('QUEUED', 'SENDING', 'AWAITING', 'UNCERTAIN')`,
    );
    const age = row?.oldest ? Math.max(0, (now - Date.parse(row.oldest)) / 1000) : 0;
    deps.metrics.oldestPending.set({ adapter: name }, age);
  }
}

const BREAKER_GAUGE: Record<BreakerState, number> = { closed: 0, 'half-open': 0.5, open: 1 };

export type PaymentWorker = {
  /** Run a pass now (a route after committing a move); a pass already running runs once more. */
  nudge(): void;
  /** Stops the timer and waits for the pass in flight. */
  stop(): Promise<void>;
  /** For /healthz: whether it runs and each adapter's breaker. */
  health(): { worker: 'running' | 'stopped'; breakers: Record<string, BreakerState> };
  /** Resolves after the next complete pass (tests, the operator's reconcile). */
  settled(): Promise<void>;
};

const GAUGE_EVERY_MS = 5000;

/**
 * The payment worker of this instance (every instance runs one): a pass every
 * PAYMENT_WORKER_INTERVAL_MS after PAYMENT_WORKER_START_DELAY_MS, one pass at a time, nothing
 * kept in memory but the breakers: every request lives in provider_requests.
 */
export function startPaymentWorker(
  base: Omit<PipelineDeps, 'breakers'>,
  options: { startDelayMs?: number } = {},
): PaymentWorker {
  const breakers = createBreakers({
    threshold: base.settings.PAYMENT_BREAKER_THRESHOLD,
    cooldownMs: base.settings.PAYMENT_BREAKER_COOLDOWN_MS,
    onChange: (adapter, state) => {
      base.metrics.breakerState.set({ adapter }, BREAKER_GAUGE[state]);
      base.log.warn({ adapter, breaker: state }, `payment adapter circuit ${state}`);
    },
  });
  const deps: PipelineDeps = { ...base, breakers };
  // Set once the loop exists: a call's end nudges the next pass (more due, freed room).
  let nudgeLoop = () => {};
  const inFlight = createInFlight(() => nudgeLoop());
  for (const name of adaptersOf(deps.registry).keys()) deps.metrics.breakerState.set({ adapter: name }, 0);
  let lastGauge = 0;
  const loop = startPassLoop({
    intervalMs: deps.settings.PAYMENT_WORKER_INTERVAL_MS,
    startDelayMs: options.startDelayMs,
    pass: async () => {
      let more = false;
      try {
        more = await runPipelineOnce(deps, inFlight);
        if (Date.now() - lastGauge >= GAUGE_EVERY_MS) {
          lastGauge = Date.now();
          await updatePendingGauge(deps);
        }
      } catch (err) {
        deps.log.error({ err }, 'payment worker pass failed');
      }
      return more;
    },
    onError: (err) => deps.log.error({ err }, 'payment worker pass failed'),
  });
  nudgeLoop = loop.nudge;
  /** The calls in flight now, and any their ends lead to, until none is left. */
  const drain = async () => {
    while (inFlight.all.size > 0) await Promise.allSettled([...inFlight.all]);
  };

  return {
    nudge: loop.nudge,
    async stop() {
      await loop.stop();
      await drain();
    },
    health: () => ({ worker: loop.stopped() ? 'stopped' : 'running', breakers: breakers.all() }),
    // A complete pass and the calls it started (tests, the operator's reconcile).
    async settled() {
      await loop.settled();
      await drain();
    },
  };
}
