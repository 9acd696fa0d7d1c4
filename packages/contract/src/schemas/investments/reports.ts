/**
 * The content (`data`) of each report type (docs/investments.md, Reports). Amounts, units and prices
 * are decimal strings as everywhere in the API; dates are YYYY-MM-DD in the market's time zone (EAT).
 */
import { z } from 'zod';
import { CUID_PATTERN } from '../../ids.ts';
import { TRANSACTION_LEDGERS, transactionSchema } from './ledger.ts';

const id = z.string().regex(CUID_PATTERN);
const decimal = z.string().regex(/^-?\d+(\.\d+)?$/);
const date = z.string().regex(/^\d{4}-\d{2}-\d{2}$/);

/** Who issues the report: the operator's settings PLATFORM_NAME and PLATFORM_LICENCE. */
export const reportPlatformSchema = z.object({ name: z.string(), licence: z.string() });

export const reportCustomerSchema = z.object({ id, firstName: z.string(), lastName: z.string() });

export const reportInstrumentSchema = z.object({
  id,
  symbol: z.string(),
  name: z.string(),
  currency: z.string(),
});

/** What the platform charges on a trade: nothing today, so `fees` is empty and `feesTotal` 0. */
export const NO_FEES_NOTE = 'No fees or commissions are charged on this trade.';

/** TRADE_CONFIRMATION: one per execution of a buy or a sell, written in the execution's transaction. */
export const tradeConfirmationDataSchema = z.object({
  executionId: id,
  orderId: id,
  customer: reportCustomerSchema,
  instrument: reportInstrumentSchema,
  side: z.enum(['BUY', 'SELL']),
  units: decimal,
  price: decimal,
  /** When the price executed at was quoted; null when the catalog had no time for it. */
  priceAsOf: z.string().datetime().nullable(),
  /** Units × price in the instrument's currency: what a buy spent (its unspent change refunded), what a sell pays out. */
  amount: decimal,
  currency: z.string(),
  fees: z.array(z.object({ type: z.string(), amount: decimal })),
  feesTotal: decimal,
  feesNote: z.string(),
  executedAt: z.string().datetime(),
  settlementDate: date,
  platform: reportPlatformSchema,
});
export type TradeConfirmationData = z.infer<typeof tradeConfirmationDataSchema>;

/** A holding on a date, valued at the last applied price on or before it (null without one). */
export const statementPositionSchema = z.object({
  instrument: reportInstrumentSchema,
  units: decimal,
  price: decimal.nullable(),
  priceAsOf: z.string().datetime().nullable(),
  value: decimal.nullable(),
});

export const statementValueSchema = z.object({ currency: z.string(), value: decimal });

/** One movement of the month, as GET /transactions answers it, with its instrument's symbol. */
export const statementTransactionSchema = z.object({
  id,
  ledger: z.enum(TRANSACTION_LEDGERS),
  type: transactionSchema.shape.type,
  bookingDate: date,
  instrumentId: id,
  symbol: z.string(),
  amount: decimal.nullable(),
  currency: z.string().nullable(),
  units: decimal.nullable(),
  price: decimal.nullable(),
  orderId: id.nullable(),
});

export const monthlyStatementDataSchema = z.object({
  /** YYYY-MM, and its first and last days (inclusive), in the market's time zone. */
  period: z.object({ month: z.string().regex(/^\d{4}-\d{2}$/), from: date, to: date, timeZone: z.string() }),
  customer: reportCustomerSchema,
  accountId: id.nullable(),
  /** At the start of `from` and at the end of `to`: positions with units other than 0. */
  opening: z.object({ positions: z.array(statementPositionSchema), values: z.array(statementValueSchema) }),
  closing: z.object({ positions: z.array(statementPositionSchema), values: z.array(statementValueSchema) }),
  /** Every money and units ledger entry booked in the month, oldest first. */
  transactions: z.array(statementTransactionSchema),
  totals: z.object({
    /** Per currency: the sum of the month's money entries (+ collected, − paid out or refunded). */
    money: z.array(
      z.object({
        currency: z.string(),
        collected: decimal,
        paidOut: decimal,
        refunded: decimal,
        net: decimal,
      }),
    ),
    /** Per instrument: the sum of the month's units entries. */
    units: z.array(
      z.object({ instrumentId: id, symbol: z.string(), bought: decimal, sold: decimal, net: decimal }),
    ),
    transactions: z.number().int(),
  }),
  platform: reportPlatformSchema,
});
export type MonthlyStatementData = z.infer<typeof monthlyStatementDataSchema>;

/** POST /admin/reports/statements and `partner-api reports generate`: a past month, YYYY-MM. */
export const MONTH_PATTERN = /^\d{4}-(0[1-9]|1[0-2])$/;
