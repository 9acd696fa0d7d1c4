import type { Tx } from '../../db/client.ts';
import { isDatabaseUnavailable } from '../../db/client.ts';
import { AppError } from '../../lib/errors.ts';

/**
 * Runs a move inside a savepoint of the request's transaction. An unexpected failure rolls back
 * every write of the move (no partial orders or transactions survive), then `onFailure` records the
 * ERROR state in the outer transaction, which commits it together with the idempotent reply.
 * Spec answers (AppError) and an unreachable database are not "unexpected": they propagate.
 */
export async function withErrorState<T>(
  tx: Tx,
  move: (savepoint: Tx) => Promise<T>,
  onFailure: (error: unknown) => Promise<T>,
): Promise<T> {
  try {
    return await tx.transaction(move);
  } catch (error) {
    if (error instanceof AppError || isDatabaseUnavailable(error)) throw error;
    return onFailure(error);
  }
}
