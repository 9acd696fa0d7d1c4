import { sql } from 'drizzle-orm';
import type { Db, Tx } from '../../../db/client.ts';
import { one } from '../../../db/query.ts';
import { AppError } from '../../../lib/errors.ts';
import { applyProviderResult } from '../apply-callback.ts';
import { createTransaction } from '../create-transaction.ts';
import type { TransactionRef } from '../provider.ts';
import { type LoadedRequest, loadRequest, recordDecision, setState } from './store.ts';
import type { PipelineDeps } from './types.ts';

/**
 * What an operator decides about a payment the pipeline could not (docs/payments.md, Operators):
 * - `paid` / `not-paid`: a PENDING collection or payout, after looking at the provider's own records
 *   (`paid` names the provider's receipt). Settled through the same apply-once path as a provider's
 *   answer: a paid collection executes its order (or is refunded if the order cannot use it).
 * - `retry-payout` / `paid-another-way`: a payout the provider failed, whose customer is still owed
 *   (its request is with the operator). A retry is a new payout (a new transaction and request, so
 *   the provider never takes it for the failed one); paid another way is a new payout recorded as
 *   paid with the operator's reference. The failed transaction stays FAILED, for the record; the
 *   partner's payment status shows the newest payout.
 */
export type Resolution = {
  action: 'paid' | 'not-paid' | 'retry-payout' | 'paid-another-way';
  reason: string;
  receipt?: string;
  operator?: string;
};

export type ResolveDeps = Pick<PipelineDeps, 'db' | 'events' | 'registry' | 'log'> & { db: Db };

export async function resolvePayment(
  deps: ResolveDeps,
  input: Resolution & { transactionId: string; sourceAddress: string; now: Date },
): Promise<{ transactionId: string; status: string; newTransactionId?: string; queued: boolean }> {
  const result = await deps.db.transaction(async (tx) => {
    const requestId = await one<{ id: string }>(
      tx,
      sql`select id from provider_requests where transaction_id = ${input.transactionId}`,
    );
    if (!requestId) throw new AppError(404, 'Not found', 'Transaction not found');
    const request = (await loadRequest(tx, requestId.id, true))!;
    const before = `${request.transactionStatus}/${request.state}`;
    const done = await decide(tx, deps, request, input);
    const after = await one<{ status: string; state: string }>(
      tx,
      sql`select t.status, r.state from transactions t join provider_requests r on r.transaction_id = t.id
  where t.id = ${request.transactionId}`,
    );
    const who = input.operator ?? 'admin-token';
    await recordDecision(
      tx,
      request,
      'operator',
      `operator ${who} from ${input.sourceAddress}: ${input.action}${input.receipt ? ` (receipt ${input.receipt})` : ''}: ${input.reason}; ${before} -> ${after!.status}/${after!.state}${done.newTransactionId ? `; new payout ${done.newTransactionId}` : ''}`,
      input.now,
    );
    return { transactionId: request.transactionId, status: after!.status, ...done };
  });
  deps.log.info(
    { transactionId: input.transactionId, action: input.action, operator: input.operator ?? 'admin-token' },
    'payment resolved by an operator',
  );
  return result;
}

const conflict = (message: string) => new AppError(409, 'Conflict', message);

async function decide(
  tx: Tx,
  deps: ResolveDeps,
  request: LoadedRequest,
  input: Resolution & { now: Date },
): Promise<{ newTransactionId?: string; queued: boolean }> {
  const needsReceipt = () => {
    if (!input.receipt)
      throw new AppError(400, 'Invalid request', `${input.action} needs the provider's receipt`);
    return input.receipt;
  };
  switch (input.action) {
    case 'paid':
    case 'not-paid': {
      if (request.transactionStatus !== 'PENDING' || request.state === 'DONE')
        throw conflict(`The transaction is already ${request.transactionStatus}: nothing to decide`);
      if (request.state === 'SENDING' || request.state === 'QUEUED')
        throw conflict('The request is being sent: wait for it, or reconcile it first');
      const applied = await applyProviderResult(
        tx,
        {
          transactionId: request.transactionId,
          status: input.action === 'paid' ? 'SUCCESS' : 'FAILED',
          providerReference: input.action === 'paid' ? needsReceipt() : `OPERATOR-${request.id.slice(-8)}`,
          reason: `by the operator: ${input.reason}`,
        },
        deps,
      );
      if (applied.outcome !== 'applied') throw conflict('The transaction was settled meanwhile');
      // A payout the operator found unpaid: the customer is still owed, so it stays with the operator.
      if (request.operation === 'DISBURSE' && input.action === 'not-paid')
        await setState(tx, request.id, { state: 'OPERATOR', lastError: owedNote(request) }, input.now);
      return { queued: applied.disbursements.length > 0 };
    }
    case 'retry-payout':
    case 'paid-another-way': {
      if (
        request.operation !== 'DISBURSE' ||
        request.transactionStatus !== 'FAILED' ||
        request.state !== 'OPERATOR'
      )
        throw conflict('Only a failed payout whose customer is still owed can be paid again');
      const order = await one<{ orderId: string }>(
        tx,
        sql`select order_id as "orderId" from transactions where id = ${request.transactionId}`,
      );
      // To the same number, the same amount: a new transaction and request (a new provider id).
      const payout: TransactionRef = await createTransaction({
        tx,
        deps,
        input: {
          organizationId: request.organizationId,
          orderId: order!.orderId,
          type: 'OUTGOING',
          amount: request.amount,
          msisdn: request.msisdn,
        },
      });
      if (input.action === 'paid-another-way') {
        await applyProviderResult(
          tx,
          { transactionId: payout.id, status: 'SUCCESS', providerReference: needsReceipt() },
          deps,
        );
      }
      await setState(tx, request.id, { state: 'DONE', lastError: null }, input.now);
      return { newTransactionId: payout.id, queued: input.action === 'retry-payout' };
    }
  }
}

/** What the operator is told a failed payout leaves owed. */
export function owedNote(request: Pick<LoadedRequest, 'amount' | 'msisdn'>, why?: string): string {
  const amount = `${request.amount.currency} ${request.amount.amount.toFixed(2)}`;
  return `${why ? `${why}: ` : ''}the customer is owed ${amount} to ${request.msisdn}; retry the payout or pay another way (POST /admin/payments/{transactionId}/resolve)`;
}
