import { createId } from '@partner-api/contract';
import { sql } from 'drizzle-orm';
import type { Tx } from '../../../db/client.ts';
import { one, run } from '../../../db/query.ts';
import { AppError } from '../../../lib/errors.ts';
import { applyProviderResult } from '../apply-callback.ts';
import { createTransaction, NoPaymentAdapterError } from '../create-transaction.ts';
import { owedNote } from './owed.ts';
import { type LoadedRequest, loadRequest, recordDecision, setState } from './store.ts';
import type { PipelineDeps } from './types.ts';

/**
 * What an operator decides about a payment the pipeline left to them, after looking at the
 * provider's own records (docs/payments.md, Operators):
 * - `paid` (with the provider's receipt) / `not-paid`: a PENDING collection or payout whose request
 *   is with the operator, uncertain or awaiting. Settled through the same apply-once path as a
 *   provider's answer: a paid collection executes its order, or is refunded when the order can no
 *   longer use it (the customer cancelled it meanwhile); a payout found unpaid stays owed.
 * - `retry-payout` / `paid-another-way` (with the reference): a payout the customer is still owed
 *   (its request with the operator, the transaction FAILED, or PENDING and found unpaid: then it is
 *   FAILED first). Paid again as a new OUTGOING transaction and request of the same order: a new
 *   provider id (Daraja would refuse a reused OriginatorConversationID as a duplicate), and the
 *   failed one stays FAILED for the record, as the partner was told. A retry is sent by the
 *   pipeline; paid another way is recorded SUCCESS with the reference at once and never sent.
 * Once: the request is locked, and a resolved one is DONE, which no action decides again.
 */
export const RESOLVE_ACTIONS = ['paid', 'not-paid', 'retry-payout', 'paid-another-way'] as const;
export type ResolveAction = (typeof RESOLVE_ACTIONS)[number];

export type Resolution = {
  action: ResolveAction;
  reason: string;
  receipt?: string;
  /** Who decides; "admin-token" when not given. */
  operator?: string;
};

export type Resolved = {
  transactionId: string;
  action: ResolveAction;
  /** The transaction's status after (a payout paid again stays FAILED: the new one carries it). */
  status: string;
  /** Its provider request's state after. */
  state: string;
  /** The new payout (retry-payout, paid-another-way). */
  newTransactionId?: string;
  /** A payout was queued for the pipeline to send (a retry, or the refund of a collection). */
  queued: boolean;
};

export type ResolveDeps = Pick<PipelineDeps, 'db' | 'events' | 'registry' | 'market' | 'log' | 'config'>;

type Input = Resolution & { transactionId: string; sourceAddress: string; now: Date };
type Done = { newTransactionId?: string; queued: boolean };

const conflict = (message: string) => new AppError(409, 'Conflict', message);
const RECEIPT_ACTIONS: readonly ResolveAction[] = ['paid', 'paid-another-way'];

/**
 * Called inside the resolution's transaction with the request as it was found (locked) and as the
 * resolution left it, and the result: what the caller writes here (the console's audit row)
 * commits with the resolution or not at all.
 */
export type ResolutionHook = (
  tx: Tx,
  change: { before: LoadedRequest; after: LoadedRequest; resolved: Resolved },
) => Promise<void>;

export async function resolvePayment(
  deps: ResolveDeps,
  input: Input,
  inTransaction?: ResolutionHook,
): Promise<Resolved> {
  const operator = input.operator ?? 'admin-token';
  const context = {
    transactionId: input.transactionId,
    action: input.action,
    operator,
    sourceAddress: input.sourceAddress,
  };
  try {
    if (RECEIPT_ACTIONS.includes(input.action) && !input.receipt)
      throw new AppError(
        400,
        'Invalid request',
        `${input.action} needs the receipt or reference of the payment (receipt)`,
      );
    const resolved = await deps.db.transaction(async (tx) => {
      // Locked first, read after: a resolution that waited for another one reads what it left.
      const locked = await one<{ id: string }>(
        tx,
        sql`select id from provider_requests where transaction_id = ${input.transactionId} for update`,
      );
      if (!locked) {
        const exists = await one<{ id: string }>(
          tx,
          sql`select id from transactions where id = ${input.transactionId}`,
        );
        if (!exists) throw new AppError(404, 'Not found', 'Transaction not found');
        throw conflict('The transaction has no provider request: nothing for the operator to decide');
      }
      const before = (await loadRequest(tx, locked.id))!;
      const done = await decide(tx, deps, before, { ...input, operator });
      const after = (await loadRequest(tx, locked.id))!;
      await recordResolution(tx, before, after, done, { ...input, operator });
      const result: Resolved = {
        transactionId: input.transactionId,
        action: input.action,
        status: after.transactionStatus,
        state: after.state,
        ...done,
      };
      await inTransaction?.(tx, { before, after, resolved: result });
      return result;
    });
    deps.log.info({ ...context, ...resolved }, 'payment resolved by an operator');
    return resolved;
  } catch (error) {
    if (error instanceof AppError)
      deps.log.warn({ ...context, refused: error.message }, 'payment resolution refused; nothing changed');
    throw error;
  }
}

function decide(tx: Tx, deps: ResolveDeps, request: LoadedRequest, input: Input): Promise<Done> {
  const what = request.operation === 'COLLECT' ? 'collection' : 'payout';
  if (request.state === 'DONE')
    throw conflict(`Nothing to resolve: the ${what} is ${request.transactionStatus} and closed`);
  if (input.action === 'paid' || input.action === 'not-paid') return decidePayment(tx, deps, request, input);
  if (request.operation !== 'DISBURSE')
    throw conflict(`${input.action} pays a customer a payout they are owed; this is a collection`);
  return payAgain(tx, deps, request, input);
}

/** `paid` / `not-paid`: the operator's reading of the provider's records, applied once. */
async function decidePayment(tx: Tx, deps: ResolveDeps, request: LoadedRequest, input: Input): Promise<Done> {
  if (request.state === 'QUEUED' || request.state === 'SENDING')
    throw conflict('The request is being sent: wait for its answer, or reconcile it first');
  // A collection whose order the customer cancelled while it waited: a payment found is refunded.
  const cancelledWaiting = request.operation === 'COLLECT' && request.transactionStatus === 'CANCELLED';
  if (request.transactionStatus !== 'PENDING' && !cancelledWaiting) {
    const next =
      request.operation === 'DISBURSE' && request.transactionStatus === 'FAILED'
        ? ': the customer is owed; retry-payout or paid-another-way'
        : '';
    throw conflict(`The payment is already ${request.transactionStatus}${next}`);
  }
  if (input.action === 'not-paid' && cancelledWaiting) {
    await setState(tx, request.id, { state: 'DONE', lastError: null }, input.now);
    return { queued: false };
  }
  const paid = input.action === 'paid';
  const applied = await applyProviderResult(
    tx,
    {
      transactionId: request.transactionId,
      status: paid ? 'SUCCESS' : 'FAILED',
      providerReference: paid ? input.receipt! : `OPERATOR-${request.id.slice(-8)}`,
      // The partner reads this reason; the operator's own words stay in the audit record.
      ...(paid
        ? {}
        : {
            reason: `not paid: the operator found no ${request.operation === 'COLLECT' ? 'payment' : 'payout'} in the provider's records`,
          }),
    },
    deps,
  );
  if (applied.outcome !== 'applied') throw conflict('The payment was settled meanwhile');
  // A payout found unpaid: the customer is still owed, so it stays with the operator.
  if (request.operation === 'DISBURSE' && !paid) {
    const failure = `payout not paid (${input.reason})`;
    await setState(
      tx,
      request.id,
      { state: 'OPERATOR', lastError: owedNote(request, applied.transaction.orderId, failure) },
      input.now,
    );
  }
  return { queued: applied.disbursements.length > 0 };
}

/** `retry-payout` / `paid-another-way`: what a payout left owed, paid as a new payout. */
async function payAgain(tx: Tx, deps: ResolveDeps, request: LoadedRequest, input: Input): Promise<Done> {
  if (request.state !== 'OPERATOR')
    throw conflict(
      `Only a payout with the operator can be paid again; this one is ${request.state}: the pipeline is still asking the provider`,
    );
  if (request.transactionStatus !== 'FAILED' && request.transactionStatus !== 'PENDING')
    throw conflict(`The payout is ${request.transactionStatus}: nothing is owed`);
  if (request.transactionStatus === 'PENDING') {
    // The operator found it unpaid in the provider's records: FAILED for the record, first.
    await applyProviderResult(
      tx,
      {
        transactionId: request.transactionId,
        status: 'FAILED',
        providerReference: `OPERATOR-${request.id.slice(-8)}`,
        reason: "not paid: the operator found no payout in the provider's records",
      },
      deps,
    );
  }
  const order = (await one<{ orderId: string }>(
    tx,
    sql`select order_id as "orderId" from transactions where id = ${request.transactionId}`,
  ))!;
  // The same amount to the same number, for the same order: a new transaction and request.
  const payout = await createTransaction({
    tx,
    deps,
    input: {
      organizationId: request.organizationId,
      orderId: order.orderId,
      type: 'OUTGOING',
      amount: request.amount,
      msisdn: request.msisdn,
    },
  }).catch((error: unknown) => {
    if (error instanceof NoPaymentAdapterError)
      throw conflict(`No payment provider serves ${request.msisdn} now: pay another way`);
    throw error;
  });
  const retry = input.action === 'retry-payout';
  if (!retry)
    await applyProviderResult(
      tx,
      { transactionId: payout.id, status: 'SUCCESS', providerReference: input.receipt! },
      deps,
    );
  const how = retry ? 'retried as payout' : `paid another way (reference ${input.receipt}) as payout`;
  await setState(
    tx,
    request.id,
    { state: 'DONE', lastError: `resolved by ${input.operator}: ${how} ${payout.id}` },
    input.now,
  );
  await recordDecision(
    tx,
    { id: await requestIdOf(tx, payout.id), transactionId: payout.id },
    'resolve',
    `operator ${input.operator} from ${input.sourceAddress}: ${input.action} of payout ${request.transactionId}: ${input.reason}`,
    input.now,
  );
  return { newTransactionId: payout.id, queued: retry };
}

async function requestIdOf(tx: Tx, transactionId: string): Promise<string> {
  const row = await one<{ id: string }>(
    tx,
    sql`select id from provider_requests where transaction_id = ${transactionId}`,
  );
  return row!.id;
}

/**
 * The audit record of a resolution: an append-only `decision` exchange of the request, at the
 * time it was decided, from the operator's address, with what was asked (`request_body`: action,
 * reason, receipt, operator) and what it did (`response_body`: before and after, the new payout).
 */
async function recordResolution(
  tx: Tx,
  before: LoadedRequest,
  after: LoadedRequest,
  done: Done,
  input: Input & { operator: string },
): Promise<void> {
  const asked = {
    action: input.action,
    reason: input.reason,
    operator: input.operator,
    ...(input.receipt ? { receipt: input.receipt } : {}),
  };
  const was = { status: before.transactionStatus, state: before.state };
  const is = { status: after.transactionStatus, state: after.state };
  const answered = {
    before: was,
    after: is,
    ...(done.newTransactionId ? { newTransactionId: done.newTransactionId } : {}),
  };
  const receipt = input.receipt ? ` (receipt ${input.receipt})` : '';
  const created = done.newTransactionId ? `; new payout ${done.newTransactionId}` : '';
  const note = `operator ${input.operator} from ${input.sourceAddress}: ${input.action}${receipt}: ${input.reason}; ${was.status}/${was.state} -> ${is.status}/${is.state}${created}`;
  await run(
    tx,
    sql`insert into provider_exchanges (id, provider_request_id, transaction_id, kind, operation, at,
  http_status, request_body, response_body, note, source_address)
  values (${createId()}, ${before.id}, ${before.transactionId}, 'decision', 'resolve',
  ${input.now.toISOString()}::timestamptz, 200, ${JSON.stringify(asked)}::jsonb,
  ${JSON.stringify(answered)}::jsonb, ${note}, ${input.sourceAddress})`,
  );
}
