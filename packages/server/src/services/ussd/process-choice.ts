import { ErrorLabel, ErrorMessage, UssdMessage } from '@partner-api/contract';
import type { AppContext } from '../../context.ts';
import type { Tx } from '../../db/client.ts';
import { AppError } from '../../lib/errors.ts';
import type { StoreAnswer } from '../../plugins/idempotency.ts';
import type { Log, TransactionRef } from '../payments/provider.ts';
import { applyEffects } from './apply-effects.ts';
import type { UssdReply } from './create-session.ts';
import { isExpected, withErrorState } from './error-state.ts';
import { loadUssdData, snapshotFrom } from './load-data.ts';
import { completeSubmission, errorScreen, isEndState, move } from './machine.ts';
import { expiryFrom, presentScreen } from './present.ts';
import { lockSession, saveSession } from './session-row.ts';
import { USSD_STATES, type UssdContext, type UssdScreen, type UssdState } from './types.ts';

const badRequest = (message: string) => new AppError(400, ErrorLabel.badRequest, message);
const isUssdState = (value: string): value is UssdState => (USSD_STATES as readonly string[]).includes(value);

type MoveReply = UssdReply & { payments: TransactionRef[] };

/**
 * Advances a session by one choice. The session row is locked (SELECT ... FOR UPDATE) for the whole
 * move, so two racing calls on one session apply one after the other, the second from the state the
 * first left. The move (session, orders, transactions, holdings) is one unit: an unexpected failure
 * leaves the session in ERROR (200, `processed with error state`) and no write of the move behind.
 *
 * Round trips (docs/performance.md, "A USSD move in fewer statements"): the lock and the snapshot
 * are one statement; a move without effects writes once (the session, with the stored answer as a
 * CTE: `store`); only a move with effects takes a savepoint, before its first write, so that a
 * failure rolls its orders and transactions back.
 */
export async function processUssdChoice({
  ctx,
  tx,
  input,
  log,
  store,
}: {
  ctx: AppContext;
  tx: Tx;
  input: { organizationId: string; sessionId: string; choice: string };
  log: Log;
  /** Stores the answer with the session's write (the idempotent routes); none in the sandbox. */
  store?: StoreAnswer;
}): Promise<MoveReply> {
  const { sessionId } = input;
  const session = await lockSession(tx, sessionId);
  if (!session) throw new AppError(404, ErrorLabel.sessionNotFound, ErrorMessage.sessionNotFound);
  if (session.organizationId !== input.organizationId) {
    throw new AppError(403, ErrorLabel.sessionForbidden, ErrorMessage.sessionForbidden);
  }
  const state = session.state;
  if (!session.isActive || (isUssdState(state) && isEndState(state))) {
    throw badRequest(ErrorMessage.sessionInactive);
  }
  const now = new Date();
  if (session.expiresAtMs <= now.getTime()) throw badRequest(ErrorMessage.sessionExpired);
  const expiresAt = expiryFrom(now, ctx.config.USSD_SESSION_TTL_SECONDS);
  const times = { expiresAt, now };
  const owner = { organizationId: session.organizationId, customerId: session.customerId };

  /** The screen saved with its answer, in one statement. */
  const finish = async (
    screen: UssdScreen,
    message: UssdReply['body']['message'],
    payments: TransactionRef[],
  ) => {
    const body = { message, data: presentScreen(sessionId, screen, expiresAt) };
    const result: MoveReply = { status: 200, body, state: screen.state, payments };
    await saveSession(tx, sessionId, screen, times, store?.(result));
    return result;
  };
  const failed = async (error: unknown) => {
    log.error({ err: error, sessionId, from: state }, 'USSD move failed; session put in ERROR');
    return finish(errorScreen(), UssdMessage.processedWithError, []);
  };

  let moved: ReturnType<typeof move>;
  let msisdn: string | null;
  try {
    if (!isUssdState(state)) throw new Error(`session ${sessionId} holds unknown state ${state}`);
    // A move that committed on this session while the lock waited: read what it wrote.
    const { customer, data } = session.current
      ? snapshotFrom(session.snapshot, session.customerId, ctx.registry)
      : await loadUssdData(tx, owner, ctx.registry);
    if (!customer) throw new Error(`session ${sessionId}: customer ${session.customerId} is gone`);
    msisdn = customer.msisdn;
    moved = move({ state, context: session.context as unknown as UssdContext, choice: input.choice, data });
    if (moved.effects.length === 0) await ctx.faultInjector?.('ussd.process.effects');
  } catch (error) {
    // Nothing of the move is written yet: the ERROR state needs no savepoint.
    if (isExpected(error)) throw error;
    return failed(error);
  }
  if (moved.effects.length === 0) return finish(moved, UssdMessage.processed, []);

  return withErrorState<MoveReply>(
    tx,
    async () => {
      const effects = await applyEffects(tx, { ...owner, msisdn }, moved.effects, ctx);
      await ctx.faultInjector?.('ussd.process.effects');
      const screen = effects.orderId
        ? completeSubmission(moved.state, moved.context, effects.orderId)
        : moved;
      return finish(screen, UssdMessage.processed, effects.payments);
    },
    failed,
  );
}
