import {
  ErrorLabel,
  type WebhookCreate,
  type WebhookEventsQuery,
  WebhookMessage,
  type WebhookUpdate,
  webhookCreateSchema,
  webhookEventIdParamsSchema,
  webhookEventsQuerySchema,
  webhookUpdateSchema,
} from '@partner-api/contract';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Tx } from '../db/client.ts';
import { AppError, validationFailed } from '../lib/errors.ts';
import { requireIdempotencyKey, respondIdempotently } from '../plugins/idempotency.ts';
import type { HandlerResult } from '../services/idempotency/answer.ts';
import { listEvents, type Refusal, resendEvent, sendTestEvent } from '../services/webhooks/history.ts';
import { presentWebhook } from '../services/webhooks/present.ts';
import {
  checkWebhookInput,
  createWebhook,
  findWebhook,
  updateWebhook,
  type WebhookInput,
} from '../services/webhooks/registration.ts';
import { systemLookup } from '../services/webhooks/target.ts';
import type { RouteDeps } from './deps.ts';

const webhookNotFound = () => new AppError(404, ErrorLabel.notFound, WebhookMessage.notFound);

/** The answer to a refused test or resend: the same 404s and 409 everywhere. */
function refused(refusal: Refusal): AppError {
  switch (refusal) {
    case 'no-webhook':
      return webhookNotFound();
    case 'deactivated':
      return new AppError(409, ErrorLabel.conflict, WebhookMessage.deactivated);
    case 'no-event':
      return new AppError(404, ErrorLabel.notFound, WebhookMessage.eventNotFound);
  }
}

const organizationOf = (request: FastifyRequest) => request.auth!.organizationId;

/**
 * The webhook configuration API (docs/webhooks.md, Endpoints), registered only with
 * WEBHOOKS_PREVIEW. One webhook per organization; every query is scoped to the token's
 * organization. Mutations are signed and idempotent like every other route. The URL check resolves
 * the host (DNS) after the key is claimed and before the transaction opens: no connection waits
 * on DNS, and its 400 is stored with the key and replayed like any other answer.
 */
export async function webhookRoutes(app: FastifyInstance, { ctx }: RouteDeps) {
  const db = ctx.database.db;
  const targetRule = {
    allowPrivate: ctx.config.WEBHOOKS_ALLOW_PRIVATE_TARGETS,
    // Read at each check: a test may set its resolver table after the app is built.
    lookup: (host: string) => (ctx.webhookLookup ?? systemLookup)(host),
  };

  /** Checks the input, then runs `write` in the request's transaction with the stored answer. */
  const mutate = async (
    request: FastifyRequest,
    reply: FastifyReply,
    input: WebhookInput,
    write: (tx: Tx, value: WebhookInput) => Promise<HandlerResult>,
  ) => {
    const checked = await checkWebhookInput(input, targetRule);
    return respondIdempotently(ctx, request, reply, {
      transaction: (tx) => {
        if (!checked.ok) throw validationFailed(checked.details);
        return write(tx, checked.value);
      },
    });
  };

  app.post<{ Body: WebhookCreate }>(
    '/webhooks',
    { schema: { body: webhookCreateSchema }, preHandler: requireIdempotencyKey },
    (request, reply) =>
      mutate(request, reply, request.body, async (tx, value) => {
        const data = await createWebhook(tx, ctx.events, organizationOf(request), {
          url: value.url!,
          subscriptions: value.subscriptions!,
        });
        if (!data) throw new AppError(409, ErrorLabel.conflict, WebhookMessage.alreadyExists);
        return { status: 201, body: { data } };
      }),
  );

  app.put<{ Body: WebhookUpdate }>(
    '/webhooks',
    { schema: { body: webhookUpdateSchema }, preHandler: requireIdempotencyKey },
    (request, reply) =>
      mutate(request, reply, request.body, async (tx, value) => {
        const data = await updateWebhook(tx, ctx.events, organizationOf(request), value);
        if (!data) throw webhookNotFound();
        return { status: 200, body: { data } };
      }),
  );

  app.get('/webhooks', async (request) => {
    const row = await findWebhook(db, organizationOf(request));
    if (!row) throw webhookNotFound();
    return { data: presentWebhook(row) };
  });

  app.post('/webhooks/test', { preHandler: requireIdempotencyKey }, (request, reply) =>
    respondIdempotently(ctx, request, reply, {
      transaction: async (tx) => {
        const sent = await sendTestEvent(tx, ctx.events, organizationOf(request));
        if (typeof sent === 'string') throw refused(sent);
        return { status: 202, body: { data: { eventId: sent.eventId, event: 'WEBHOOK.CREATED' } } };
      },
    }),
  );

  app.get<{ Querystring: WebhookEventsQuery }>(
    '/webhooks/events',
    { schema: { querystring: webhookEventsQuerySchema } },
    (request) => listEvents(db, organizationOf(request), request.query),
  );

  app.post<{ Params: { eventId: string } }>(
    '/webhooks/events/:eventId/resend',
    { schema: { params: webhookEventIdParamsSchema }, preHandler: requireIdempotencyKey },
    (request, reply) =>
      respondIdempotently(ctx, request, reply, {
        transaction: async (tx) => {
          const eventId = request.params.eventId.toLowerCase();
          const sent = await resendEvent(tx, organizationOf(request), eventId);
          if (typeof sent === 'string') throw refused(sent);
          return { status: 202, body: { data: sent } };
        },
      }),
  );
}
