/** The investments API's schemas (docs/investments.md): transactions (the money and units ledgers) and reports. */
import { z } from 'zod';
import { CUID_PATTERN } from '../../ids.ts';
import { CUSTOMER_LIMIT_MAX, CUSTOMER_PAGE_MAX, paginationSchema, queryInteger } from '../customers.ts';
import { TRANSACTION_STATUSES } from '../payments.ts';

/** Money movements (the payment transactions of orders) and unit movements (the units ledger). */
export const MONEY_TRANSACTION_TYPES = ['COLLECTION', 'PAYOUT', 'REFUND'] as const;
export const UNITS_TRANSACTION_TYPES = ['BUY', 'SELL', 'OPENING', 'REVERSAL'] as const;
export const LEDGER_TRANSACTION_TYPES = [...MONEY_TRANSACTION_TYPES, ...UNITS_TRANSACTION_TYPES] as const;
export type LedgerTransactionType = (typeof LEDGER_TRANSACTION_TYPES)[number];

/** Which ledger a transaction is from. */
export const TRANSACTION_LEDGERS = ['MONEY', 'UNITS'] as const;

export const TRANSACTION_REFERENCE_TYPES = ['REQUEST', 'PAYMENT', 'EXECUTION'] as const;

/** The reports a later producer writes; the list grows with it. */
export const REPORT_TYPES = ['TRADE_CONFIRMATION', 'MONTHLY_STATEMENT'] as const;
export type ReportType = (typeof REPORT_TYPES)[number];

const DATE_PATTERN = /^\d{4}-\d{2}-\d{2}$/;
const isCalendarDate = (value: string) => {
  const date = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === value;
};
/** A query date: YYYY-MM-DD, a real calendar date. */
const queryDate = (field: string) =>
  z
    .string({ error: `${field} must be a date (YYYY-MM-DD)` })
    .regex(DATE_PATTERN, `${field} must be a date (YYYY-MM-DD)`)
    .refine(isCalendarDate, `${field} must be a date (YYYY-MM-DD)`);

const customerIdFilter = z
  .string({ error: 'Invalid customer ID format' })
  .regex(CUID_PATTERN, 'Invalid customer ID format');

/** The customers list's paging parameters and limits. */
const paging = {
  page: queryInteger('page', 1, CUSTOMER_PAGE_MAX, 1),
  limit: queryInteger('limit', 1, CUSTOMER_LIMIT_MAX, 10),
};

/** `{ data: [...], pagination }`, as GET /customers answers. */
const listOf = <Item extends z.ZodType>(item: Item) =>
  z.object({ data: z.array(item), pagination: paginationSchema });

export const TransactionValidationMessage = {
  toBeforeFrom: 'to must not be before from',
} as const;

/** GET /transactions. Unknown parameters are refused, as on GET /customers. */
export const transactionListQuerySchema = z
  .strictObject({
    ...paging,
    customerId: customerIdFilter.optional(),
    requestId: z
      .string({ error: 'Invalid request ID format' })
      .regex(CUID_PATTERN, 'Invalid request ID format')
      .optional(),
    type: z
      .enum(LEDGER_TRANSACTION_TYPES, { error: `type must be one of ${LEDGER_TRANSACTION_TYPES.join(', ')}` })
      .optional(),
    ledger: z
      .enum(TRANSACTION_LEDGERS, { error: `ledger must be one of ${TRANSACTION_LEDGERS.join(', ')}` })
      .optional(),
    from: queryDate('from').optional(),
    to: queryDate('to').optional(),
  })
  .refine((query) => !query.from || !query.to || query.from <= query.to, {
    path: ['to'],
    message: TransactionValidationMessage.toBeforeFrom,
  });
export type TransactionListQuery = z.output<typeof transactionListQuerySchema>;

export const transactionIdParamsSchema = z.strictObject({
  transactionId: z.string().regex(CUID_PATTERN, 'Invalid transaction ID format'),
});

export const transactionReferenceSchema = z.object({
  type: z.enum(TRANSACTION_REFERENCE_TYPES),
  id: z.string().regex(CUID_PATTERN),
});

/** The execution behind a unit movement of a buy or a sell. */
export const transactionExecutionSchema = z.object({
  id: z.string().regex(CUID_PATTERN),
  /** Decimal string: the price executed at, in the instrument's currency. */
  price: z.string(),
  priceAsOf: z.string().datetime().nullable(),
  executedAt: z.string().datetime(),
  /** YYYY-MM-DD in the market's time zone. */
  settlementDate: z.string(),
  status: z.enum(['FILLED', 'SETTLED']),
});

export const transactionSchema = z.object({
  /** A money movement: the payment transaction's id (the subject of TRANSACTION.* events); units: the entry's. */
  id: z.string().regex(CUID_PATTERN),
  customerId: z.string().regex(CUID_PATTERN),
  ledger: z.enum(TRANSACTION_LEDGERS),
  type: z.enum(LEDGER_TRANSACTION_TYPES),
  /** Money: the payment's status; a unit movement is written only when its units move: SUCCESS. */
  status: z.enum(TRANSACTION_STATUSES),
  /** Money: signed decimal string, + collected from the customer, − paid out to them; units: null. */
  amount: z.string().nullable(),
  currency: z.string().nullable(),
  /** Units: signed decimal string, + in, − out; money: null. */
  units: z.string().nullable(),
  instrumentId: z.string().regex(CUID_PATTERN),
  /** Money: the mobile-money provider; units: null. */
  provider: z.enum(['MPESA', 'AIRTEL_MONEY', 'MTN_MOMO']).nullable(),
  failureReason: z.string().nullable(),
  /** The market-local date it was booked in its ledger; null while money has not moved. */
  bookingDate: z.string().nullable(),
  /** Money: the booking date; units: the execution's settlement date (the booking date without one). */
  valueDate: z.string().nullable(),
  execution: transactionExecutionSchema.nullable(),
  references: z.array(transactionReferenceSchema),
  createdAt: z.string().datetime(),
  updatedAt: z.string().datetime(),
});
export type Transaction = z.infer<typeof transactionSchema>;

export const transactionResponseSchema = z.object({ data: transactionSchema });
export const transactionListResponseSchema = listOf(transactionSchema);
export type TransactionList = z.infer<typeof transactionListResponseSchema>;

/** GET /reports. */
export const reportListQuerySchema = z.strictObject({
  ...paging,
  customerId: customerIdFilter.optional(),
  type: z.enum(REPORT_TYPES, { error: `type must be one of ${REPORT_TYPES.join(', ')}` }).optional(),
});
export type ReportListQuery = z.output<typeof reportListQuerySchema>;

export const reportIdParamsSchema = z.strictObject({
  reportId: z.string().regex(CUID_PATTERN, 'Invalid report ID format'),
});

export const reportSchema = z.object({
  id: z.string().regex(CUID_PATTERN),
  customerId: z.string().regex(CUID_PATTERN),
  type: z.enum(REPORT_TYPES),
  /** The report this one corrects, or null. */
  replaces: z.string().regex(CUID_PATTERN).nullable(),
  createdAt: z.string().datetime(),
  /** The report's content, as its type defines it. */
  data: z.record(z.string(), z.unknown()),
});
export type Report = z.infer<typeof reportSchema>;

export const reportResponseSchema = z.object({ data: reportSchema });
export const reportListResponseSchema = listOf(reportSchema);
export type ReportList = z.infer<typeof reportListResponseSchema>;

export const LedgerMessage = {
  transactionNotFound: 'Transaction not found',
  reportNotFound: 'Report not found',
} as const;
