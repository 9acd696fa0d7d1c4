/** The investments API's schemas (docs/investments.md): requests (orders): buy by amount, sell by units, list, get, cancel. */
import { z } from 'zod';
import { CUID_PATTERN } from '../../ids.ts';
import { CUSTOMER_LIMIT_MAX, CUSTOMER_PAGE_MAX, paginationSchema, queryInteger } from '../customers.ts';
import { TRANSACTION_STATUSES, TRANSACTION_TYPES } from '../payments.ts';

export const REQUEST_SIDES = ['BUY', 'SELL'] as const;
export const REQUEST_STATUSES = ['PENDING_PAYMENT', 'PAID', 'EXECUTED', 'FAILED', 'CANCELLED'] as const;
export const EXECUTION_STATUSES = ['FILLED', 'SETTLED'] as const;
export type RequestSide = (typeof REQUEST_SIDES)[number];
export type RequestStatus = (typeof REQUEST_STATUSES)[number];

/** The largest buy, as on the USSD amount screen (services/ussd/machine.ts, MAX_BUY_AMOUNT). */
export const REQUEST_MAX_AMOUNT = 1_000_000;

const WHOLE = /^[0-9]+$/;
const cuidField = (field: string) =>
  z
    .string({
      error: (issue) => (issue.input === undefined ? `${field} is required` : `${field} must be a string`),
    })
    .regex(CUID_PATTERN, `${field} must be a valid ID`);
/** A whole number as a decimal string ('1000'), from 1 to `max` when given. */
const wholeString = (field: string, what: string, max?: number) =>
  z
    .string({ error: `${field} must be a string of digits, e.g. '1000'` })
    .regex(WHOLE, `${field} must be a whole number of ${what}, e.g. '1000'`)
    .refine((value) => Number(value) >= 1, `${field} must be at least 1`)
    .refine((value) => max === undefined || Number(value) <= max, `${field} must be at most ${max}`);

/**
 * POST /requests. A buy names the whole amount to pay (`amount`, in the instrument's currency); a
 * sell names the whole units to sell (`units`). Unknown fields are refused, each with an entry naming it.
 */
export const requestCreateSchema = z
  .strictObject({
    customerId: cuidField('customerId'),
    instrumentId: cuidField('instrumentId'),
    side: z.enum(REQUEST_SIDES, { error: 'side must be one of BUY, SELL' }),
    amount: wholeString('amount', 'the currency', REQUEST_MAX_AMOUNT).optional(),
    units: wholeString('units', 'units').optional(),
  })
  .superRefine((body, ctx) => {
    const needs = body.side === 'BUY' ? 'amount' : 'units';
    const refuses = body.side === 'BUY' ? 'units' : 'amount';
    if (body[needs] === undefined)
      ctx.addIssue({ code: 'custom', path: [needs], message: `${needs} is required for a ${body.side}` });
    if (body[refuses] !== undefined)
      ctx.addIssue({
        code: 'custom',
        path: [refuses],
        message: `${refuses} is not allowed for a ${body.side}`,
      });
  });
export type RequestCreate = z.output<typeof requestCreateSchema>;

export const requestIdParamsSchema = z.strictObject({
  requestId: z.string().regex(CUID_PATTERN, 'Invalid request ID format'),
});

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const dateField = (field: string) =>
  z
    .string({ error: `${field} must be a date (YYYY-MM-DD)` })
    .regex(DATE, `${field} must be a date (YYYY-MM-DD)`)
    .refine((value) => !Number.isNaN(Date.parse(`${value}T00:00:00Z`)), `${field} must be a real date`);

/** GET /requests. Unknown parameters are refused; dates are UTC days, both ends included. */
export const requestListQuerySchema = z
  .strictObject({
    page: queryInteger('page', 1, CUSTOMER_PAGE_MAX, 1),
    limit: queryInteger('limit', 1, CUSTOMER_LIMIT_MAX, 10),
    customerId: z
      .string({ error: 'customerId must be a single ID' })
      .regex(CUID_PATTERN, 'Invalid customer ID format')
      .optional(),
    instrumentId: z
      .string({ error: 'instrumentId must be a single ID' })
      .regex(CUID_PATTERN, 'Invalid instrument ID format')
      .optional(),
    status: z
      .enum(REQUEST_STATUSES, { error: `status must be one of ${REQUEST_STATUSES.join(', ')}` })
      .optional(),
    createdFrom: dateField('createdFrom').optional(),
    createdTo: dateField('createdTo').optional(),
  })
  .refine((q) => !q.createdFrom || !q.createdTo || q.createdFrom <= q.createdTo, {
    path: ['createdTo'],
    message: 'createdTo must not be before createdFrom',
  });
export type RequestListQuery = z.output<typeof requestListQuerySchema>;

/** What an executed request filled: units at a price (and that price's as-of time), and when it settles. */
export const requestExecutionSchema = z.object({
  units: z.string(),
  price: z.string(),
  priceAsOf: z.string().datetime().nullable(),
  executedAt: z.string().datetime(),
  /** YYYY-MM-DD, in the market's time zone. */
  settlementDate: z.string(),
  status: z.enum(EXECUTION_STATUSES),
});

/** A payment transaction of the request: its collection, payout or refund (GET /payment/status/{orderId}). */
export const requestTransactionSchema = z.object({
  id: z.string(),
  type: z.enum(TRANSACTION_TYPES),
  status: z.enum(TRANSACTION_STATUSES),
  amount: z.string(),
  currency: z.string(),
});

/**
 * A request (an order). Its id is the order id GET /payment/status/{orderId} takes. Amounts, units
 * and prices are decimal strings. `quantity` and `price`: a buy's once executed; a sell's at once.
 */
export const requestSchema = z.object({
  id: z.string().regex(CUID_PATTERN),
  customerId: z.string(),
  instrumentId: z.string(),
  side: z.enum(REQUEST_SIDES),
  status: z.enum(REQUEST_STATUSES),
  amount: z.string(),
  currency: z.string(),
  quantity: z.string().nullable(),
  price: z.string().nullable(),
  createdAt: z.string().datetime(),
  updatedAt: z.string().datetime(),
  execution: requestExecutionSchema.nullable(),
  transactions: z.array(requestTransactionSchema),
});
export type InvestmentRequest = z.infer<typeof requestSchema>;

export const RequestMessage = {
  created: 'Request created successfully',
  cancelled: 'Request cancelled successfully',
  notFound: 'Request not found',
  instrumentNotFound: 'Instrument not found',
  instrumentNotListed: 'Instrument is not listed: no orders are taken',
  customerInactive: 'Customer is not active',
  outrun: 'The holding or the market changed while the request was placed; nothing was sold. Try again.',
  notCancellable: (status: string) =>
    `Request is ${status} and can no longer be cancelled: only PENDING_PAYMENT and PAID requests can`,
} as const;

export const requestCreatedResponseSchema = z.object({
  message: z.literal(RequestMessage.created),
  data: requestSchema,
});
export const requestCancelledResponseSchema = z.object({
  message: z.literal(RequestMessage.cancelled),
  data: requestSchema,
});
export const requestResponseSchema = z.object({ data: requestSchema });
export const requestListResponseSchema = z.object({
  data: z.array(requestSchema),
  pagination: paginationSchema,
});
export type RequestList = z.infer<typeof requestListResponseSchema>;
