import {
  type AccountCreate,
  type AccountListQuery,
  AccountMessage,
  type AccountUpdate,
  accountCreateSchema,
  accountIdParamsSchema,
  accountListQuerySchema,
  accountUpdateSchema,
  ErrorLabel,
  ErrorMessage,
  type PortfolioQuery,
  portfolioQuerySchema,
} from '@partner-api/contract';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError, validationFailed } from '../../lib/errors.ts';
import { requireIdempotencyKey, respondIdempotently } from '../../plugins/idempotency.ts';
import {
  accountUpdated,
  customerWithAccount,
  getAccount,
  listAccounts,
  openAccount,
  setAccountLanguage,
  setCustomerLanguage,
} from '../../services/investments/accounts.ts';
import { accountAssets, accountPortfolio } from '../../services/investments/positions.ts';
import { instantOf, localTime, NSE, nextDate } from '../../services/market/calendar.ts';
import type { RouteDeps } from '../deps.ts';

/** Another organization's account is answered exactly like a nonexistent one. */
const accountNotFound = () => new AppError(404, ErrorLabel.notFound, AccountMessage.notFound);

const organizationOf = (request: FastifyRequest) => request.auth!.organizationId;

type ById = { Params: { accountId: string } };

/** The investments API (docs/investments.md): accounts, their assets and portfolio valuation. */
export async function accountsRoutes(app: FastifyInstance, { ctx }: RouteDeps) {
  const db = ctx.database.db;

  // Opens the customer's account: 201; one it already has (opened here or by an order): 200 with it.
  app.post<{ Body: AccountCreate }>(
    '/accounts',
    { schema: { body: accountCreateSchema }, preHandler: requireIdempotencyKey },
    (request, reply) =>
      respondIdempotently(ctx, request, reply, {
        transaction: async (tx) => {
          const organizationId = organizationOf(request);
          const { customerId, language } = request.body;
          const found = await customerWithAccount(tx, organizationId, customerId);
          if (!found) throw new AppError(404, ErrorLabel.notFound, ErrorMessage.customerNotFound);
          if (found.account)
            return { status: 200, body: { message: AccountMessage.exists, data: found.account } };
          if (!found.isActive) throw new AppError(409, ErrorLabel.conflict, AccountMessage.customerInactive);
          // Set in the transaction that opens the account (docs/languages.md).
          if (language !== undefined) await setCustomerLanguage(tx, { organizationId, customerId }, language);
          const opened = await openAccount(tx, { organizationId, customerId }, ctx.events);
          if (opened) return { status: 201, body: { message: AccountMessage.created, data: opened } };
          // A first order opened it since the read (its transaction committed first).
          const raced = await customerWithAccount(tx, organizationId, customerId);
          return { status: 200, body: { message: AccountMessage.exists, data: raced!.account! } };
        },
      }),
  );

  app.get<{ Querystring: AccountListQuery }>(
    '/accounts',
    { schema: { querystring: accountListQuerySchema } },
    (request) => listAccounts(db, organizationOf(request), request.query),
  );

  app.get<ById>('/accounts/:accountId', { schema: { params: accountIdParamsSchema } }, async (request) => {
    const data = await getAccount(db, organizationOf(request), request.params.accountId);
    if (!data) throw accountNotFound();
    return { data };
  });

  app.get<ById>(
    '/accounts/:accountId/assets',
    { schema: { params: accountIdParamsSchema } },
    async (request) => {
      const data = await accountAssets(db, organizationOf(request), request.params.accountId);
      if (!data) throw accountNotFound();
      return { data };
    },
  );

  // The customer's language (docs/languages.md); an absent field is left as it is.
  app.patch<ById & { Body: AccountUpdate }>(
    '/accounts/:accountId',
    {
      schema: { params: accountIdParamsSchema, body: accountUpdateSchema },
      preHandler: requireIdempotencyKey,
    },
    (request, reply) =>
      respondIdempotently(ctx, request, reply, {
        transaction: async (tx) => {
          const owner = { organizationId: organizationOf(request), accountId: request.params.accountId };
          const { language } = request.body;
          if (language !== undefined && !(await setAccountLanguage(tx, owner, language, ctx.clock())))
            throw accountNotFound();
          const data = await getAccount(tx, owner.organizationId, owner.accountId);
          if (!data) throw accountNotFound();
          if (language !== undefined) await accountUpdated(tx, data, ctx.events);
          return { status: 200, body: { message: AccountMessage.updated, data } };
        },
      }),
  );

  app.get<ById & { Querystring: PortfolioQuery }>(
    '/accounts/:accountId/portfolio',
    { schema: { params: accountIdParamsSchema, querystring: portfolioQuerySchema } },
    async (request) => {
      const now = ctx.clock();
      const { asOf } = request.query;
      if (asOf !== undefined && asOf > localTime(NSE.timeZone, now).date)
        throw validationFailed([{ field: 'asOf', message: 'asOf must not be after today' }]);
      const data = await accountPortfolio(db, {
        organizationId: organizationOf(request),
        accountId: request.params.accountId,
        now,
        at: asOf === undefined ? undefined : { date: asOf, end: endOf(asOf, now) },
      });
      if (!data) throw accountNotFound();
      return { data };
    },
  );
}

/** The end of a local day in the market's time zone (its next midnight), never after `now`. */
function endOf(date: string, now: Date): Date {
  const end = instantOf(NSE.timeZone, nextDate(date), '00:00');
  return end > now ? now : end;
}
