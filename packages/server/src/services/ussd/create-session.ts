import { ErrorLabel, ErrorMessage, UssdMessage, type UssdResponse } from '@partner-api/contract';
import { sql } from 'drizzle-orm';
import type { AppContext } from '../../context.ts';
import type { Tx } from '../../db/client.ts';
import { one } from '../../db/query.ts';
import { AppError } from '../../lib/errors.ts';
import type { Log } from '../payments/provider.ts';
import { withErrorState } from './error-state.ts';
import { loadUssdData } from './load-data.ts';
import { errorScreen, startSession } from './machine.ts';
import { expiryFrom, newSessionId, presentScreen } from './present.ts';
import { insertSession } from './session-row.ts';
import type { UssdState } from './types.ts';

export type UssdReply = { status: number; body: UssdResponse; state: UssdState };

/**
 * Opens a USSD session on HOME for a customer of the caller's organization (201). A failure while
 * building the menu opens it in ERROR instead (200), so the customer can still choose 0 (Home).
 * A deactivated customer cannot invest: answered like a customer that does not exist.
 */
export async function createUssdSession({
  ctx,
  tx,
  input,
  log,
}: {
  ctx: AppContext;
  tx: Tx;
  input: { organizationId: string; customerId: string };
  log: Log;
}): Promise<UssdReply> {
  const customer = await customerOf(tx, input);
  if (!customer?.isActive) {
    throw new AppError(404, ErrorLabel.customerNotFound, ErrorMessage.ussdCustomerNotFound);
  }
  const sessionId = newSessionId();
  const expiresAt = expiryFrom(new Date(), ctx.config.USSD_SESSION_TTL_SECONDS);
  const { organizationId, customerId } = input;
  const row = { id: sessionId, organizationId, customerId, expiresAt };

  return withErrorState<UssdReply>(
    tx,
    async () => {
      const snapshot = await loadUssdData(tx, { organizationId, customerId }, ctx.registry);
      const screen = startSession(snapshot.data);
      await ctx.faultInjector?.('ussd.session.menu');
      await insertSession(tx, row, screen);
      const data = presentScreen(sessionId, screen, expiresAt);
      return { status: 201, body: { message: UssdMessage.sessionCreated, data }, state: screen.state };
    },
    async (error) => {
      log.error({ err: error, sessionId }, 'USSD session menu failed; session opened in ERROR');
      const screen = errorScreen();
      await insertSession(tx, row, screen);
      const data = presentScreen(sessionId, screen, expiresAt);
      return {
        status: 200,
        body: { message: UssdMessage.sessionCreatedWithError, data },
        state: screen.state,
      };
    },
  );
}

/** The caller's customer, if it is one of the organization's: whether it is active. */
async function customerOf(
  tx: Tx,
  { organizationId, customerId }: { organizationId: string; customerId: string },
): Promise<{ isActive: boolean } | undefined> {
  return one<{ isActive: boolean }>(
    tx,
    sql`select is_active as "isActive" from customers where id = ${customerId} and organization_id = ${organizationId}`,
  );
}
