import { ErrorLabel, ErrorMessage, UssdMessage, type UssdResponse } from '@partner-api/contract';
import type { AppContext } from '../../context.ts';
import type { Queryable } from '../../db/client.ts';
import { type Read, reader } from '../../db/query.ts';
import { AppError } from '../../lib/errors.ts';
import type { StoreAnswer } from '../idempotency/answer.ts';
import type { Log } from '../payments/provider.ts';
import { isExpected } from './error-state.ts';
import { loadUssdData } from './load-data.ts';
import { errorScreen, startSession } from './machine.ts';
import { expiryFrom, newSessionId, presentScreen } from './present.ts';
import { insertSession } from './session-row.ts';
import type { UssdScreen, UssdState } from './types.ts';

export type UssdReply = { status: number; body: UssdResponse; state: UssdState };

/** What opening a session or making a move is given. */
export type UssdCall<Input, D extends Queryable = Queryable> = {
  ctx: AppContext;
  /** The database, or the one connection the request runs on (plugins/idempotency.ts, `firstRead`). */
  db: D;
  input: Input;
  log: Log;
  /** Stores the answer with the session's write (the idempotent routes); none in the sandbox. */
  store?: StoreAnswer;
  /** The first read, with the request's claim folded in (plugins/idempotency.ts, `firstRead`); else `db`'s. */
  read?: Read;
};

/**
 * Opens a USSD session on HOME for a customer of the caller's organization (201). A failure while
 * building the menu opens it in ERROR instead (200), so the customer can still choose 0 (Home).
 * A deactivated customer cannot invest: answered like a customer that does not exist.
 *
 * Round trips: the customer and the menu's snapshot are one statement (with the request's claim,
 * `read`), the session and its stored answer (`store`) another, autocommit: its only write is that
 * one statement, so it needs no transaction (plugins/idempotency.ts, `firstRead`). The menu is built before
 * anything is written, so its failure needs no savepoint.
 */
export async function createUssdSession({
  ctx,
  db,
  input,
  log,
  store,
  read = reader(db),
}: UssdCall<{ organizationId: string; customerId: string }>): Promise<UssdReply> {
  const snapshot = await loadUssdData(read, input, ctx.registry);
  if (!snapshot.customer?.isActive) {
    throw new AppError(404, ErrorLabel.customerNotFound, ErrorMessage.ussdCustomerNotFound);
  }
  const sessionId = newSessionId();
  const expiresAt = expiryFrom(new Date(), ctx.config.USSD_SESSION_TTL_SECONDS);
  const row = {
    id: sessionId,
    organizationId: input.organizationId,
    customerId: input.customerId,
    expiresAt,
  };
  const open = async (screen: UssdScreen, status: number, message: UssdReply['body']['message']) => {
    const data = presentScreen(sessionId, screen, expiresAt);
    const result: UssdReply = { status, body: { message, data }, state: screen.state };
    await insertSession(db, row, screen, store?.(result));
    return result;
  };

  let screen: UssdScreen;
  try {
    screen = startSession(snapshot.data);
    await ctx.faultInjector?.('ussd.session.menu');
  } catch (error) {
    if (isExpected(error)) throw error;
    log.error({ err: error, sessionId }, 'USSD session menu failed; session opened in ERROR');
    return open(errorScreen(snapshot.data.language), 200, UssdMessage.sessionCreatedWithError);
  }
  return open(screen, 201, UssdMessage.sessionCreated);
}
