import {
  type RequestCreate,
  type RequestListQuery,
  RequestMessage,
  requestCreateSchema,
  requestIdParamsSchema,
  requestListQuerySchema,
} from '@partner-api/contract';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { requireIdempotencyKey, respondIdempotently } from '../../plugins/idempotency.ts';
import { getRequest } from '../../services/investments/request-resource.ts';
import {
  cancelRequest,
  createRequest,
  listRequests,
  requestNotFound,
} from '../../services/investments/requests.ts';
import type { RouteDeps } from '../deps.ts';

const organizationOf = (request: FastifyRequest) => request.auth!.organizationId;

type ById = { Params: { requestId: string } };

/** The investments API (docs/investments.md): requests (orders): buy by amount, sell by units, list, get, cancel. */
export async function requestsRoutes(app: FastifyInstance, { ctx }: RouteDeps) {
  const db = ctx.database.db;

  app.post<{ Body: RequestCreate }>(
    '/requests',
    { schema: { body: requestCreateSchema }, preHandler: requireIdempotencyKey },
    async (request, reply) => {
      let queued = false;
      await respondIdempotently(ctx, request, reply, {
        transaction: async (tx) => {
          const placed = await createRequest(tx, ctx, organizationOf(request), request.body);
          queued = placed.payments.length > 0;
          return { status: 201, body: { message: RequestMessage.created, data: placed.request } };
        },
      });
      // Committed with its provider request: this instance's worker sends the prompt (or payout) now.
      if (queued) ctx.paymentWorker?.nudge();
      return reply;
    },
  );

  app.get<{ Querystring: RequestListQuery }>(
    '/requests',
    { schema: { querystring: requestListQuerySchema } },
    (request) => listRequests(db, organizationOf(request), request.query),
  );

  app.get<ById>('/requests/:requestId', { schema: { params: requestIdParamsSchema } }, async (request) => {
    const data = await getRequest(db, organizationOf(request), request.params.requestId);
    if (!data) throw requestNotFound();
    return { data };
  });

  app.post<ById>(
    '/requests/:requestId/cancel',
    { schema: { params: requestIdParamsSchema }, preHandler: requireIdempotencyKey },
    async (request, reply) => {
      let queued = false;
      await respondIdempotently(ctx, request, reply, {
        transaction: async (tx) => {
          const cancelled = await cancelRequest(tx, ctx, organizationOf(request), request.params.requestId);
          queued = cancelled.payments.length > 0;
          return { status: 200, body: { message: RequestMessage.cancelled, data: cancelled.request } };
        },
      });
      // A PAID request's refund is queued with the cancellation.
      if (queued) ctx.paymentWorker?.nudge();
      return reply;
    },
  );
}
