import { ErrorLabel, ErrorMessage, UssdMessage } from '@partner-api/contract';
import type { AppContext } from '../../context.ts';
import type { Queryable, Tx } from '../../db/client.ts';
import { reader } from '../../db/query.ts';
import type { Language } from '../../i18n/index.ts';
import { AppError } from '../../lib/errors.ts';
import { tradingNow } from '../market/trading.ts';
import { StaleMoveError } from '../orders/life.ts';
import type { Log, TransactionRef } from '../payments/provider.ts';
import { applyEffects } from './apply-effects.ts';
import type { UssdCall, UssdReply } from './create-session.ts';
import { isExpected, withErrorState } from './error-state.ts';
import { loadUssdData, type Snapshot, snapshotFrom } from './load-data.ts';
import { completeSubmission, errorScreen, isEndState, move } from './machine.ts';
import { expiryFrom, presentScreen } from './present.ts';
import {
  type LockedSession,
  lockSession,
  readSession,
  saveSession,
  saveSessionIfUnchanged,
} from './session-row.ts';
import { USSD_STATES, type UssdContext, type UssdScreen, type UssdState } from './types.ts';

const badRequest = (message: string) => new AppError(400, ErrorLabel.badRequest, message);
const isUssdState = (value: string): value is UssdState => (USSD_STATES as readonly string[]).includes(value);

type MoveReply = UssdReply & { payments: TransactionRef[] };
type MoveInput = { organizationId: string; sessionId: string; choice: string };
type Times = { expiresAt: Date; now: Date };

/**
 * Advances a session by one choice. Two moves racing on one session apply one after the other, the
 * second from the state the first left. The move (session, orders, transactions, holdings) is one
 * unit: an unexpected failure leaves the session in ERROR (200, `processed with error state`) and no
 * write of the move behind.
 *
 * Round trips (docs/performance.md, "Fewer statements, one connection"): a move without effects (most
 * of them: every menu but a confirmed buy, sell or cancel) reads the session with its snapshot,
 * unlocked, in the statement that claims the request's key (`read`), and writes the new screen with
 * the stored answer in one autocommit statement that applies only if no other move committed on the
 * session in between. Otherwise (a move with
 * effects, or one that lost that race) it runs in a transaction that locks the session row
 * (`processLocked`).
 */
export async function processUssdChoice({
  ctx,
  db,
  input,
  log,
  store,
  read = reader(db),
}: UssdCall<MoveInput>): Promise<MoveReply> {
  const { session, times } = movable(ctx, input, await readSession(read, input.sessionId));
  const plan = await planMove(ctx, db, session, input.choice, async () =>
    snapshotFrom(session.snapshot, session.customerId, ctx.registry),
  );
  if (plan.kind === 'screen') {
    const result = replyOf(input.sessionId, plan.screen, plan.message, times, []);
    const saved = await saveSessionIfUnchanged(
      db,
      { id: input.sessionId, version: session.version },
      plan.screen,
      times,
      (onlyIf) => store?.(result, onlyIf),
    );
    if (saved) {
      if (plan.error) logFailure(log, plan.error, input.sessionId, session.state);
      return result;
    }
  }
  return db.transaction((tx) => processLocked({ ctx, db: tx, input, log, store }));
}

/** The move in a transaction that holds the session row's lock (SELECT ... FOR UPDATE) throughout. */
async function processLocked({
  ctx,
  db: tx,
  input,
  log,
  store,
}: UssdCall<MoveInput, Tx>): Promise<MoveReply> {
  const { sessionId } = input;
  const { session, times } = movable(ctx, input, await lockSession(tx, sessionId));
  const owner = { organizationId: session.organizationId, customerId: session.customerId };
  // A move that committed on this session while the lock waited: read what it wrote.
  const plan = await planMove(ctx, tx, session, input.choice, () =>
    session.current
      ? Promise.resolve(snapshotFrom(session.snapshot, session.customerId, ctx.registry))
      : loadUssdData(reader(tx), owner, ctx.registry),
  );

  /** The screen saved with its answer, in one statement. */
  const finish = async (
    screen: UssdScreen,
    message: MoveReply['body']['message'],
    payments: TransactionRef[],
  ) => {
    const result = replyOf(sessionId, screen, message, times, payments);
    await saveSession(tx, sessionId, screen, times, store?.(result));
    return result;
  };
  /** The ERROR screen, in the customer's language when the snapshot was read. */
  const failed = async (error: unknown, language?: Language) => {
    logFailure(log, error, sessionId, session.state);
    return finish(errorScreen(language), UssdMessage.processedWithError, []);
  };

  const apply = (current: Plan, retries: number): Promise<MoveReply> => {
    // Nothing of the move is written yet: the ERROR state needs no savepoint.
    if (current.kind === 'screen')
      return current.error
        ? failed(current.error, current.language)
        : finish(current.screen, current.message, []);
    const { moved, msisdn, language } = current;
    return withErrorState<MoveReply>(
      tx,
      async () => {
        const effects = await applyEffects(tx, { ...owner, msisdn }, moved.effects, ctx);
        await ctx.faultInjector?.('ussd.process.effects');
        const screen = effects.orderId
          ? completeSubmission(moved.state, moved.context, effects.orderId, language)
          : moved;
        return finish(screen, UssdMessage.processed, effects.payments);
      },
      async (error) => {
        if (!(error instanceof StaleMoveError) || retries === 0) return failed(error, language);
        // Another move outran this one's snapshot (its writes are rolled back): plan again from
        // what is there now, as the embedded store, which runs one move at a time, would have.
        log.info({ sessionId, reason: error.message }, 'USSD move outrun by another; planned again');
        const fresh = await planMove(ctx, tx, session, input.choice, () =>
          loadUssdData(reader(tx), owner, ctx.registry),
        );
        return apply(fresh, retries - 1);
      },
    );
  };
  return apply(plan, 1);
}

/** The spec's answers for a session this caller cannot move (404, 403, 400); else the move's times. */
function movable<S extends LockedSession>(
  ctx: AppContext,
  input: MoveInput,
  session: S | undefined,
): { session: S; times: Times } {
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
  return { session, times: { now, expiresAt: expiryFrom(now, ctx.config.USSD_SESSION_TTL_SECONDS) } };
}

type Moved = ReturnType<typeof move>;

/**
 * What the move writes, decided before anything is written: the next screen, or the ERROR screen
 * (with the unexpected `error` that caused it); or, for a move with effects, the move to apply.
 */
type Plan =
  | {
      kind: 'screen';
      screen: UssdScreen;
      message: MoveReply['body']['message'];
      error?: unknown;
      language?: Language;
    }
  | { kind: 'effects'; moved: Moved; msisdn: string | null; language?: Language };

async function planMove(
  ctx: AppContext,
  /** The move's own connection or transaction: the holidays are read on it when not cached. */
  q: Queryable,
  session: LockedSession,
  choice: string,
  snapshot: () => Promise<Snapshot>,
): Promise<Plan> {
  let language: Language | undefined;
  try {
    const { state } = session;
    if (!isUssdState(state)) throw new Error(`session holds unknown state ${state}`);
    const [{ customer, data: loaded }, trading] = await Promise.all([snapshot(), tradingNow(ctx, q)]);
    if (!customer) throw new Error(`session's customer ${session.customerId} is gone`);
    const data = trading ? { ...loaded, trading } : loaded;
    language = data.language;
    const moved = move({ state, context: session.context as unknown as UssdContext, choice, data });
    if (moved.effects.length > 0) return { kind: 'effects', moved, msisdn: customer.msisdn, language };
    await ctx.faultInjector?.('ussd.process.effects');
    return { kind: 'screen', screen: moved, message: UssdMessage.processed };
  } catch (error) {
    if (isExpected(error)) throw error;
    const screen = errorScreen(language);
    return { kind: 'screen', screen, message: UssdMessage.processedWithError, error, language };
  }
}

function replyOf(
  sessionId: string,
  screen: UssdScreen,
  message: MoveReply['body']['message'],
  times: Times,
  payments: TransactionRef[],
): MoveReply {
  const body = { message, data: presentScreen(sessionId, screen, times.expiresAt) };
  return { status: 200, body, state: screen.state, payments };
}

function logFailure(log: Log, error: unknown, sessionId: string, from: string): void {
  log.error({ err: error, sessionId, from }, 'USSD move failed; session put in ERROR');
}
