import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { AppContext } from '../context.ts';
import { AppError } from '../lib/errors.ts';
import { Big, parseDecimal } from '../lib/money.ts';
import { announceInstruments } from '../services/investments/market.ts';
import { listOrdersForAdmin } from '../services/orders/list-for-admin.ts';
import { listStuck, reconcileNow, showTransaction } from '../services/payments/pipeline/operator.ts';
import { RESOLVE_ACTIONS, resolvePayment } from '../services/payments/pipeline/resolve.ts';
import { settleByHand } from '../services/payments/settle-by-hand.ts';
import { listSms, SMS_STATES } from '../services/sms/list.ts';
import { upsertStocks } from '../services/stocks/upsert.ts';
import { idParams } from './schemas.ts';

const ZERO = new Big('0');

/** A JSON number is a float: its text is exact only up to 15 significant digits. */
function exactText(value: string | number, ctx: z.RefinementCtx): string {
  if (typeof value === 'string') return value;
  const text = String(value);
  if (text.replace(/^[0.]+|\./g, '').length <= 15) return text;
  ctx.addIssue({ code: 'custom', message: 'must be sent as a string when it has more than 15 digits' });
  return z.NEVER;
}

const PRICE = /^\d{1,14}(\.\d{1,4})?$/;
export const price = z
  .union([z.string(), z.number()])
  .transform(exactText)
  .pipe(z.string().regex(PRICE, 'must be a positive decimal with up to 4 decimals'))
  // zod runs the refinement after a failed regex too: only a well-formed price is parsed.
  .refine((v) => !PRICE.test(v) || parseDecimal(v, 'price').gt(ZERO), 'must be greater than 0');

export const stockUpsertBody = z
  .array(
    z.strictObject({
      symbol: z
        .string()
        .trim()
        .toUpperCase()
        .regex(/^[A-Z0-9][A-Z0-9.]{0,11}$/, 'must be 1 to 12 letters, digits or dots'),
      name: z.string().trim().min(1).max(120),
      price,
      currency: z
        .string()
        .trim()
        .toUpperCase()
        .regex(/^[A-Z]{3}$/, 'must be a 3-letter currency code')
        .default('KES'),
      isActive: z.boolean().optional(),
    }),
  )
  .min(1)
  .max(1000);

const ordersQuery = z.strictObject({
  organizationId: z.string().min(1).max(64).optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
});

const smsQuery = z.strictObject({
  state: z.enum(SMS_STATES, { error: `state must be one of ${SMS_STATES.join(', ')}` }).optional(),
  organizationId: z.string().min(1).max(64).optional(),
  customerId: z.string().min(1).max(64).optional(),
  msisdn: z
    .string()
    .regex(/^\d{7,15}$/, 'msisdn must be 7 to 15 digits')
    .optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
});

const stuckQuery = z.strictObject({
  olderThanSeconds: z.coerce.number().int().min(0).max(31_536_000).default(300),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
});

const reconcileBody = z.strictObject({ transactionId: z.string().min(1).max(64).optional() });

const resolveBody = z.strictObject({
  action: z.enum(RESOLVE_ACTIONS, {
    error: 'action must be paid, not-paid, retry-payout or paid-another-way',
  }),
  reason: z.string().trim().min(3, 'reason: say why, in at least 3 characters').max(500),
  receipt: z.string().trim().min(1).max(100).optional(),
  operator: z.string().trim().min(1).max(100).optional(),
});

const settleBody = z.strictObject({
  status: z.enum(['SUCCESS', 'FAILED'], { error: 'status must be SUCCESS or FAILED' }),
  reason: z.string().trim().min(1).max(500).optional(),
});

/** Operator calls for the catalog, orders and (sandbox only) hand settlement. */
export function registerTradingRoutes(app: FastifyInstance, ctx: AppContext): void {
  const db = ctx.database.db;
  app.post('/admin/stocks', { schema: { body: stockUpsertBody } }, async (request) =>
    db.transaction(async (tx) => {
      const written = await upsertStocks(tx, request.body as z.output<typeof stockUpsertBody>);
      // A row the upsert inserted has its creation time as its update time (one now()).
      const announced = written.map((s) => ({
        id: s.id,
        created: s.createdAt.getTime() === s.updatedAt.getTime(),
      }));
      await announceInstruments(tx, ctx, announced);
      return written;
    }),
  );
  app.get('/admin/orders', { schema: { querystring: ordersQuery } }, async (request) =>
    listOrdersForAdmin(db, request.query as z.output<typeof ordersQuery>),
  );
  // Investor SMS (docs/sms.md, "Operator view"): refused, failed and undelivered ones carry `attention`.
  app.get('/admin/sms', { schema: { querystring: smsQuery } }, async (request) => ({
    data: await listSms(db, request.query as z.output<typeof smsQuery>),
  }));
  // The payment pipeline (docs/payments.md, Pipeline): a transaction's record, stuck work, reconcile.
  app.get('/admin/transactions/:id', { schema: { params: idParams } }, async (request) => {
    const { id } = request.params as { id: string };
    const shown = await showTransaction(db, id);
    if (!shown) throw new AppError(404, 'Not found', 'Transaction not found');
    return shown;
  });
  app.get('/admin/payments/stuck', { schema: { querystring: stuckQuery } }, async (request) => {
    const query = request.query as z.output<typeof stuckQuery>;
    return { data: await listStuck(db, { ...query, now: new Date() }) };
  });
  app.post('/admin/payments/reconcile', { schema: { body: reconcileBody } }, async (request) => {
    const body = (request.body ?? {}) as z.output<typeof reconcileBody>;
    const result = await reconcileNow(db, { transactionId: body.transactionId, now: new Date() });
    ctx.paymentWorker?.nudge();
    return result;
  });
  // An operator's decision on a payment the pipeline left to them, in both environments, audited.
  app.post(
    '/admin/payments/:id/resolve',
    { schema: { params: idParams, body: resolveBody } },
    async (request) => {
      const { id } = request.params as { id: string };
      const body = request.body as z.output<typeof resolveBody>;
      const result = await resolvePayment(
        {
          db,
          events: ctx.events,
          registry: ctx.registry,
          market: ctx.market,
          log: request.log,
          config: ctx.config,
        },
        { ...body, transactionId: id, sourceAddress: request.ip, now: new Date() },
      );
      if (result.queued) ctx.paymentWorker?.nudge();
      return { data: result };
    },
  );
  // Production has real money: nothing settles a transaction but the provider's signed callback.
  if (ctx.config.APP_ENV !== 'sandbox') return;
  app.post(
    '/admin/transactions/:id/settle',
    { schema: { params: idParams, body: settleBody } },
    async (request) => {
      const { id } = request.params as { id: string };
      const body = request.body as z.output<typeof settleBody>;
      return settleByHand({ ctx, input: { transactionId: id, ...body }, log: request.log });
    },
  );
}
