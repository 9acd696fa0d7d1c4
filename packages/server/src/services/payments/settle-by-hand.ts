import { randomBytes } from 'node:crypto';
import type { AppContext } from '../../context.ts';
import { AppError } from '../../lib/errors.ts';
import { applyProviderResult } from './apply-callback.ts';
import type { Log } from './provider.ts';

/**
 * Sandbox operators settle a transaction by hand (admin API): the same apply-once path as a
 * provider callback, without the HMAC (the admin token authenticates the operator).
 */
export async function settleByHand({
  ctx,
  input,
  log,
}: {
  ctx: AppContext;
  input: { transactionId: string; status: 'SUCCESS' | 'FAILED'; reason?: string };
  log: Log;
}) {
  const result = await ctx.database.db.transaction((tx) =>
    applyProviderResult(
      tx,
      {
        transactionId: input.transactionId,
        status: input.status,
        providerReference: `MANUAL-${randomBytes(5).toString('hex').toUpperCase()}`,
        reason: input.status === 'FAILED' ? (input.reason ?? 'failed by the operator') : undefined,
      },
      ctx,
    ),
  );
  switch (result.outcome) {
    case 'unknown':
      throw new AppError(404, 'Not found', 'Transaction not found');
    case 'duplicate':
      throw new AppError(409, 'Conflict', `Transaction is already settled (${result.transaction.status})`);
    case 'applied':
      // Refunds are queued with the settlement; the worker sends them.
      if (result.disbursements.length > 0) ctx.paymentWorker?.nudge();
      log.info({ transactionId: input.transactionId, status: input.status }, 'settled by hand');
      return result.transaction;
  }
}
