import {
  type CustomerCreate,
  type CustomerListQuery,
  CustomerMessage,
  type CustomerUpdate,
  customerCreateSchema,
  customerIdParamsSchema,
  customerListQuerySchema,
  customerUpdateSchema,
  ErrorLabel,
  ErrorMessage,
} from '@partner-api/contract';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../lib/errors.ts';
import { requireIdempotencyKey, respondIdempotently } from '../plugins/idempotency.ts';
import { newCustomer } from '../services/customers/create.ts';
import { customerReader } from '../services/customers/get.ts';
import { listCustomers } from '../services/customers/list.ts';
import { updateCustomer } from '../services/customers/update.ts';
import type { RouteDeps } from './deps.ts';

/** Another organization's customer is answered exactly like a nonexistent one. */
const customerNotFound = () => new AppError(404, ErrorLabel.notFound, ErrorMessage.customerNotFound);

const organizationOf = (request: FastifyRequest) => request.auth!.organizationId;

type ById = { Params: { id: string } };

/** The Customers resource; every query is scoped to the token's organization. */
export async function customerRoutes(app: FastifyInstance, { ctx }: RouteDeps) {
  const db = ctx.database.db;
  const getCustomer = customerReader(db);

  app.post<{ Body: CustomerCreate }>(
    '/customers',
    { schema: { body: customerCreateSchema }, preHandler: requireIdempotencyKey },
    (request, reply) => {
      const organizationId = organizationOf(request);
      const { customer, insertFrom } = newCustomer(organizationId, request.body);
      const body = { message: CustomerMessage.created, data: customer };
      // The key's record, the row and its CUSTOMER.CREATED in one statement (plugins/idempotency.ts).
      const event = ctx.events.enabled
        ? { organizationId, event: 'CUSTOMER.CREATED' as const, data: customer }
        : undefined;
      return respondIdempotently(ctx, request, reply, { created: { status: 201, body, insertFrom, event } });
    },
  );

  app.get<{ Querystring: CustomerListQuery }>(
    '/customers',
    { schema: { querystring: customerListQuerySchema } },
    (request) => listCustomers({ db, organizationId: organizationOf(request), query: request.query }),
  );

  app.get<ById>('/customers/:id', { schema: { params: customerIdParamsSchema } }, async (request) => {
    const data = await getCustomer({ organizationId: organizationOf(request), id: request.params.id });
    if (!data) throw customerNotFound();
    return { data };
  });

  app.patch<ById & { Body: CustomerUpdate }>(
    '/customers/:id',
    {
      schema: { params: customerIdParamsSchema, body: customerUpdateSchema },
      preHandler: requireIdempotencyKey,
    },
    (request, reply) =>
      respondIdempotently(ctx, request, reply, {
        firstRead: async (db, store, read) => {
          const result = await updateCustomer({
            db,
            organizationId: organizationOf(request),
            id: request.params.id,
            input: request.body,
            events: ctx.events,
            answer: (data) => ({ status: 200, body: { message: CustomerMessage.updated, data } }),
            store,
            read,
          });
          // Thrown before anything is written: the 404 is stored with the key and replayed as 404.
          if (!result) throw customerNotFound();
          return result;
        },
      }),
  );
}
