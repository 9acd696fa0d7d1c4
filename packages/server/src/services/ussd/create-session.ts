import { ErrorLabel, ErrorMessage, UssdMessage, type UssdResponse } from '@partner-api/contract';
import { and, eq } from 'drizzle-orm';
import type { AppContext } from '../../context.ts';
import type { Tx } from '../../db/client.ts';
import { customers, ussdSessions } from '../../db/schema.ts';
import { AppError } from '../../lib/errors.ts';
import type { Log } from '../payments/provider.ts';
import { withErrorState } from './error-state.ts';
import { loadUssdData } from './load-data.ts';
import { errorScreen, startSession } from './machine.ts';
import { expiryFrom, newSessionId, presentScreen } from './present.ts';
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
  const [customer] = await tx
    .select()
    .from(customers)
    .where(and(eq(customers.id, input.customerId), eq(customers.organizationId, input.organizationId)));
  if (!customer?.isActive) {
    throw new AppError(404, ErrorLabel.customerNotFound, ErrorMessage.ussdCustomerNotFound);
  }
  const sessionId = newSessionId();
  const expiresAt = expiryFrom(new Date(), ctx.config.USSD_SESSION_TTL_SECONDS);
  const row = { id: sessionId, organizationId: customer.organizationId, customerId: customer.id, expiresAt };

  return withErrorState<UssdReply>(
    tx,
    async (savepoint) => {
      const screen = startSession(await loadUssdData(savepoint, customer));
      await ctx.faultInjector?.('ussd.session.menu');
      await savepoint
        .insert(ussdSessions)
        .values({ ...row, state: screen.state, context: { ...screen.context } });
      const data = presentScreen(sessionId, screen, expiresAt);
      return { status: 201, body: { message: UssdMessage.sessionCreated, data }, state: screen.state };
    },
    async (error) => {
      log.error({ err: error, sessionId }, 'USSD session menu failed; session opened in ERROR');
      const screen = errorScreen();
      await tx.insert(ussdSessions).values({ ...row, state: screen.state, context: { ...screen.context } });
      const data = presentScreen(sessionId, screen, expiresAt);
      return {
        status: 200,
        body: { message: UssdMessage.sessionCreatedWithError, data },
        state: screen.state,
      };
    },
  );
}
