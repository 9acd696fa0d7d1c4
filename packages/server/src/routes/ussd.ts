import {
  type UssdProcessRequest,
  type UssdSessionRequest,
  ussdProcessRequestSchema,
  ussdSessionRequestSchema,
} from '@partner-api/contract';
import type { FastifyInstance } from 'fastify';
import type { Queryable } from '../db/client.ts';
import type { Read } from '../db/query.ts';
import { requireIdempotencyKey, respondIdempotently } from '../plugins/idempotency.ts';
import type { StoreAnswer } from '../services/idempotency/answer.ts';
import { createUssdSession } from '../services/ussd/create-session.ts';
import { processUssdChoice } from '../services/ussd/process-choice.ts';
import type { UssdState } from '../services/ussd/types.ts';
import type { RouteDeps } from './deps.ts';

/** POST /ussd/session and POST /ussd/process: thin; the moves live in services/ussd. */
export async function ussdRoutes(app: FastifyInstance, { ctx }: RouteDeps) {
  const countMove = (state: UssdState) => ctx.metrics.ussdMoves.inc({ state });

  app.post(
    '/ussd/session',
    { schema: { body: ussdSessionRequestSchema }, preHandler: requireIdempotencyKey },
    async (request, reply) => {
      const { customerId } = request.body as UssdSessionRequest;
      const organizationId = request.auth!.organizationId;
      const firstRead = async (db: Queryable, store: StoreAnswer, read: Read) => {
        const result = await createUssdSession({
          ctx,
          db,
          input: { organizationId, customerId },
          log: request.log,
          store,
          read,
        });
        countMove(result.state);
        return result;
      };
      return respondIdempotently(ctx, request, reply, { firstRead });
    },
  );

  app.post(
    '/ussd/process',
    { schema: { body: ussdProcessRequestSchema }, preHandler: requireIdempotencyKey },
    async (request, reply) => {
      const { sessionId, choice } = request.body as UssdProcessRequest;
      const organizationId = request.auth!.organizationId;
      let queuedPayments = false;
      const firstRead = async (db: Queryable, store: StoreAnswer, read: Read) => {
        const result = await processUssdChoice({
          ctx,
          db,
          input: { organizationId, sessionId, choice },
          log: request.log,
          store,
          read,
        });
        // Counted as the move is written (the reply is sent right after).
        countMove(result.state);
        queuedPayments = result.payments.length > 0;
        return result;
      };
      await respondIdempotently(ctx, request, reply, { firstRead });
      // Committed with its provider requests: let this instance's worker send them at once. Only
      // then: a pass costs the worker several statements, and most moves queue nothing.
      if (queuedPayments) ctx.paymentWorker?.nudge();
      return reply;
    },
  );
}
