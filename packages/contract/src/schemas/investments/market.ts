/** The investments API's schemas (docs/investments.md): investment types, instruments and their prices (read-only). */
import { z } from 'zod';
import { CUID_PATTERN } from '../../ids.ts';
import { CUSTOMER_LIMIT_MAX, CUSTOMER_PAGE_MAX, paginationSchema, queryInteger } from '../customers.ts';

/**
 * The investment types the platform admits: an instrument of another type is not in the catalogue.
 * A type joins this list with the order rules it needs (a money market fund trades outside the
 * NSE's session, at a daily price): the table already takes any code (docs/market.md, Instruments).
 */
export const INVESTMENT_TYPES = ['STOCK'] as const;
export type InvestmentTypeId = (typeof INVESTMENT_TYPES)[number];

/** Each type's name and description, as GET /investment-types answers them. */
export const INVESTMENT_TYPE_DETAILS: Record<InvestmentTypeId, { name: string; description: string }> = {
  STOCK: {
    name: 'Stocks',
    description:
      'Shares listed on a securities exchange, bought by amount during its trading session and held in ' +
      'fractions or whole units per instrument.',
  },
};

/** An instrument's trading status: ACTIVE instruments are offered for orders (the USSD lists them). */
export const TRADING_STATUSES = ['ACTIVE', 'INACTIVE'] as const;
export type TradingStatus = (typeof TRADING_STATUSES)[number];

/** A decimal in string form, as every amount and price of the API ('28.5000', '100.00'). */
const decimal = z.string().regex(/^-?[0-9]+(\.[0-9]+)?$/);

export const investmentTypeSchema = z.object({
  /** The type's code, also each instrument's `investmentType`. */
  id: z.enum(INVESTMENT_TYPES),
  name: z.string(),
  description: z.string(),
  /** Instruments of this type whose trading status is ACTIVE. */
  activeInstruments: z.number().int(),
});
export type InvestmentType = z.infer<typeof investmentTypeSchema>;
/** GET /investment-types takes no parameters; unknown ones are refused, as on every list. */
export const investmentTypeListQuerySchema = z.strictObject({});
export const investmentTypeListResponseSchema = z.object({ data: z.array(investmentTypeSchema) });

/** The instrument's latest applied price; `fresh`: an order placed now executes at it. */
export const latestPriceSchema = z.object({
  value: decimal,
  currency: z.string(),
  /** When the price was true; null only for a price recorded before as-of times were kept. */
  asOf: z.string().datetime().nullable(),
  fresh: z.boolean(),
});
export type LatestPrice = z.infer<typeof latestPriceSchema>;

export const instrumentSchema = z.object({
  id: z.string().regex(CUID_PATTERN),
  symbol: z.string(),
  name: z.string(),
  investmentType: z.enum(INVESTMENT_TYPES),
  isin: z.string().nullable(),
  /** ISO 10383 MIC of the market it trades on (XNAI: the Nairobi Securities Exchange). */
  market: z.string(),
  currency: z.string(),
  tradingStatus: z.enum(TRADING_STATUSES),
  /** The smallest buy, in `currency`: the instrument's own, else the platform's default (100). */
  minOrderAmount: decimal,
  /** Whether a customer may hold fractions of a unit; false: a buy gets whole units only. */
  fractional: z.boolean(),
  latestPrice: latestPriceSchema,
  createdAt: z.string().datetime(),
  updatedAt: z.string().datetime(),
});
export type Instrument = z.infer<typeof instrumentSchema>;

export const instrumentResponseSchema = z.object({ data: instrumentSchema });
export const instrumentListResponseSchema = z.object({
  data: z.array(instrumentSchema),
  pagination: paginationSchema,
});
export type InstrumentList = z.infer<typeof instrumentListResponseSchema>;

/** GET /instruments: the customers list's paging; unknown parameters are refused. */
export const instrumentListQuerySchema = z.strictObject({
  page: queryInteger('page', 1, CUSTOMER_PAGE_MAX, 1),
  limit: queryInteger('limit', 1, CUSTOMER_LIMIT_MAX, 10),
  investmentType: z
    .enum(INVESTMENT_TYPES, { error: `investmentType must be one of ${INVESTMENT_TYPES.join(', ')}` })
    .optional(),
  tradingStatus: z
    .enum(TRADING_STATUSES, { error: `tradingStatus must be one of ${TRADING_STATUSES.join(', ')}` })
    .optional(),
  search: z
    .string({ error: 'search must be a single string' })
    .trim()
    .max(100, 'search must be at most 100 characters')
    .optional(),
});
export type InstrumentListQuery = z.output<typeof instrumentListQuerySchema>;

export const instrumentIdParamsSchema = z.strictObject({
  instrumentId: z.string().regex(CUID_PATTERN, 'Invalid instrument ID format'),
});

/** A calendar date, YYYY-MM-DD, that exists; the operator's daily bars take the same (admin/market.ts). */
export const marketDateSchema = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'date must be YYYY-MM-DD')
  .refine(
    (d) =>
      !Number.isNaN(Date.parse(`${d}T00:00:00Z`)) && new Date(`${d}T00:00:00Z`).toISOString().startsWith(d),
    'date must be a real date',
  );
/** A daily bar's date: a real date between 1970 and 9998 (both included). */
export const dailyDateSchema = marketDateSchema.refine(
  (d) => d >= '1970-01-01' && d < '9999-01-01',
  'must be a date between 1970 and 9999',
);
/** Without `from`, the 30 days that end on `to`; a range is at most 366 days. */
export const DAILY_DEFAULT_DAYS = 30;
export const DAILY_MAX_DAYS = 366;

/** GET /instruments/{instrumentId}/prices: dates in the instrument's market time zone, both included. */
export const instrumentPricesQuerySchema = z.strictObject({
  from: dailyDateSchema.optional(),
  to: dailyDateSchema.optional(),
});
export type InstrumentPricesQuery = z.output<typeof instrumentPricesQuerySchema>;

/** One market-local day of applied prices: first, highest, lowest and last, and how many. */
export const dailyBarSchema = z.object({
  date: z.string(),
  open: decimal,
  high: decimal,
  low: decimal,
  close: decimal,
  count: z.number().int(),
});
export type DailyBar = z.infer<typeof dailyBarSchema>;

export const instrumentPricesSchema = z.object({
  instrumentId: z.string().regex(CUID_PATTERN),
  symbol: z.string(),
  market: z.string(),
  /** The market's time zone: the one `from`, `to` and each bar's date are in. */
  timeZone: z.string(),
  currency: z.string(),
  latest: latestPriceSchema,
  from: z.string(),
  to: z.string(),
  /** Oldest first; a day without an applied price (weekend, holiday, feed down) has no bar. */
  daily: z.array(dailyBarSchema),
});
export type InstrumentPrices = z.infer<typeof instrumentPricesSchema>;
export const instrumentPricesResponseSchema = z.object({ data: instrumentPricesSchema });

export const InstrumentMessage = {
  notFound: 'Instrument not found',
} as const;
