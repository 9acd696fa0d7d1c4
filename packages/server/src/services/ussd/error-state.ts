import { sql } from 'drizzle-orm';
import type { Tx } from '../../db/client.ts';
import { isDatabaseUnavailable } from '../../db/client.ts';
import { run } from '../../db/query.ts';
import { AppError } from '../../lib/errors.ts';

const SAVEPOINT = sql.raw('savepoint ussd_move');
const ROLLBACK_TO_SAVEPOINT = sql.raw('rollback to savepoint ussd_move');

/**
 * Spec answers (AppError) and an unreachable database are answered as such; anything else is an
 * unexpected failure, which puts the session in ERROR.
 */
export const isExpected = (error: unknown): boolean =>
  error instanceof AppError || isDatabaseUnavailable(error);

/**
 * Runs a move inside a savepoint of the request's transaction. An unexpected failure rolls back
 * every write of the move (no partial orders or transactions survive), then `onFailure` records the
 * ERROR state in the outer transaction, which commits it together with the idempotent reply.
 * Spec answers (AppError) and an unreachable database are not "unexpected": they propagate, and the
 * request's transaction rolls back as a whole.
 *
 * The savepoint is never released: COMMIT releases it with everything else, and a RELEASE would be
 * one more round trip on every move for nothing. `move` runs on `tx` itself.
 */
export async function withErrorState<T>(
  tx: Tx,
  move: (tx: Tx) => Promise<T>,
  onFailure: (error: unknown) => Promise<T>,
): Promise<T> {
  await run(tx, SAVEPOINT);
  try {
    return await move(tx);
  } catch (error) {
    if (isExpected(error)) throw error;
    await run(tx, ROLLBACK_TO_SAVEPOINT);
    return onFailure(error);
  }
}
