import { ErrorLabel, ErrorMessage, UssdMessage } from '@partner-api/contract';
import type { AppContext } from '../../context.ts';
import type { Tx } from '../../db/client.ts';
import { AppError } from '../../lib/errors.ts';
import type { Log, TransactionRef } from '../payments/provider.ts';
import { applyEffects } from './apply-effects.ts';
import type { UssdReply } from './create-session.ts';
import { withErrorState } from './error-state.ts';
import { loadUssdData } from './load-data.ts';
import { completeSubmission, errorScreen, isEndState, move } from './machine.ts';
import { expiryFrom, presentScreen } from './present.ts';
import { lockSession, saveSession } from './session-row.ts';
import { USSD_STATES, type UssdContext, type UssdState } from './types.ts';

const badRequest = (message: string) => new AppError(400, ErrorLabel.badRequest, message);
const isUssdState = (value: string): value is UssdState => (USSD_STATES as readonly string[]).includes(value);

/**
 * Advances a session by one choice. The session row is locked (SELECT ... FOR UPDATE) for the whole
 * move, so two racing calls on one session apply one after the other, the second from the state the
 * first left. The move (session, orders, transactions, holdings) is one unit: an unexpected failure
 * rolls it back and leaves the session in ERROR (200, `processed with error state`).
 */
export async function processUssdChoice({
  ctx,
  tx,
  input,
  log,
}: {
  ctx: AppContext;
  tx: Tx;
  input: { organizationId: string; sessionId: string; choice: string };
  log: Log;
}): Promise<UssdReply & { payments: TransactionRef[] }> {
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

  return withErrorState<UssdReply & { payments: TransactionRef[] }>(
    tx,
    async () => {
      if (!isUssdState(state)) throw new Error(`session ${sessionId} holds unknown state ${state}`);
      const owner = { organizationId: session.organizationId, customerId: session.customerId };
      const { customer, data } = await loadUssdData(tx, owner, ctx.registry);
      if (!customer) throw new Error(`session ${sessionId}: customer ${session.customerId} is gone`);
      const context = session.context as unknown as UssdContext;
      const moved = move({ state, context, choice: input.choice, data });
      const effects = await applyEffects(tx, { ...owner, msisdn: customer.msisdn }, moved.effects, ctx);
      await ctx.faultInjector?.('ussd.process.effects');
      const screen = effects.orderId
        ? completeSubmission(moved.state, moved.context, effects.orderId)
        : moved;
      await saveSession(tx, sessionId, screen, times);
      const body = { message: UssdMessage.processed, data: presentScreen(sessionId, screen, expiresAt) };
      return { status: 200, body, state: screen.state, payments: effects.payments };
    },
    async (error) => {
      log.error({ err: error, sessionId, from: state }, 'USSD move failed; session put in ERROR');
      const screen = errorScreen();
      await saveSession(tx, sessionId, screen, times);
      const body = {
        message: UssdMessage.processedWithError,
        data: presentScreen(sessionId, screen, expiresAt),
      };
      return { status: 200, body, state: screen.state, payments: [] };
    },
  );
}
