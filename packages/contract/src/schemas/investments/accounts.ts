/** The investments API's schemas (docs/investments.md): accounts, their assets and portfolio valuation. */
import { z } from 'zod';
import { CUID_PATTERN } from '../../ids.ts';
import { CUSTOMER_LIMIT_MAX, CUSTOMER_PAGE_MAX, paginationSchema, queryInteger } from '../customers.ts';

export const ACCOUNT_STATUSES = ['ACTIVE', 'CLOSED'] as const;
export type AccountStatus = (typeof ACCOUNT_STATUSES)[number];

/** The currency an account is valued in: every instrument today trades on the NSE, in KES. */
export const ACCOUNT_CURRENCY = 'KES';

/** The languages of the investor's screens and SMS (the server's src/i18n; docs/languages.md). */
export const ACCOUNT_LANGUAGES = ['en', 'sw'] as const;
export type AccountLanguage = (typeof ACCOUNT_LANGUAGES)[number];

const cuid = (message: string) => z.string({ error: message }).regex(CUID_PATTERN, message);

/** The customer's language; null: the organization's default (set by the operator). */
const language = z
  .enum(ACCOUNT_LANGUAGES, { error: `language must be one of ${ACCOUNT_LANGUAGES.join(', ')}, or null` })
  .nullable();

/** POST /accounts. Unknown fields are refused, each with an entry naming it. */
export const accountCreateSchema = z.strictObject({
  customerId: cuid('Invalid customer ID format'),
  /** Set with the account it opens; an account that exists already is answered unchanged. */
  language: language.optional(),
});
export type AccountCreate = z.output<typeof accountCreateSchema>;

/** PATCH /accounts/{accountId}: what a partner may change; an absent field is left as it is. */
export const accountUpdateSchema = z.strictObject({
  language: language.optional(),
});
export type AccountUpdate = z.output<typeof accountUpdateSchema>;

export const accountIdParamsSchema = z.strictObject({
  accountId: cuid('Invalid account ID format'),
});

/** GET /accounts: the customers list's page and limit; filters customerId and status. */
export const accountListQuerySchema = z.strictObject({
  page: queryInteger('page', 1, CUSTOMER_PAGE_MAX, 1),
  limit: queryInteger('limit', 1, CUSTOMER_LIMIT_MAX, 10),
  customerId: cuid('Invalid customer ID format').optional(),
  status: z
    .enum(ACCOUNT_STATUSES, { error: `status must be one of ${ACCOUNT_STATUSES.join(', ')}` })
    .optional(),
});
export type AccountListQuery = z.output<typeof accountListQuerySchema>;

const DATE_PATTERN = /^\d{4}-\d{2}-\d{2}$/;

/** A calendar date that exists (2026-02-30 does not). */
const isCalendarDate = (value: string) => {
  const day = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(day.getTime()) && day.toISOString().slice(0, 10) === value;
};

/** GET /accounts/{accountId}/portfolio: `asOf`, a past day in the market's time zone; absent: now. */
export const portfolioQuerySchema = z.strictObject({
  asOf: z
    .string({ error: 'asOf must be a date (YYYY-MM-DD)' })
    .regex(DATE_PATTERN, 'asOf must be a date (YYYY-MM-DD)')
    .refine(isCalendarDate, 'asOf must be a date (YYYY-MM-DD)')
    .optional(),
});
export type PortfolioQuery = z.output<typeof portfolioQuerySchema>;

/** Decimal strings: money to the cent, prices and average costs to 4 decimals, units to 4 decimals. */
const amount = z.string().regex(/^-?\d+\.\d{2}$/);
const decimal4 = z.string().regex(/^-?\d+\.\d{4}$/);

export const accountSchema = z.object({
  id: z.string().regex(CUID_PATTERN),
  organizationId: z.string(),
  customerId: z.string().regex(CUID_PATTERN),
  status: z.enum(ACCOUNT_STATUSES),
  /** null: the account holds every investment type (one account per customer). */
  investmentType: z.string().nullable(),
  currency: z.string(),
  /** The language of the customer's USSD screens and SMS; null: the organization's default. */
  language: z.enum(ACCOUNT_LANGUAGES).nullable(),
  createdAt: z.string().datetime(),
  updatedAt: z.string().datetime(),
});
export type Account = z.infer<typeof accountSchema>;

export const AccountMessage = {
  created: 'Account created successfully',
  exists: 'Account already exists',
  updated: 'Account updated successfully',
  notFound: 'Account not found',
  customerInactive: 'Customer is not active',
} as const;

export const accountCreatedResponseSchema = z.object({
  message: z.enum([AccountMessage.created, AccountMessage.exists]),
  data: accountSchema,
});
export const accountResponseSchema = z.object({ data: accountSchema });
export const accountUpdatedResponseSchema = z.object({
  message: z.literal(AccountMessage.updated),
  data: accountSchema,
});
export const accountListResponseSchema = z.object({
  data: z.array(accountSchema),
  pagination: paginationSchema,
});
export type AccountList = { data: Account[]; pagination: z.infer<typeof paginationSchema> };

/** One position of an account: an instrument the customer holds units of. */
export const assetSchema = z.object({
  instrumentId: z.string(),
  symbol: z.string(),
  name: z.string(),
  investmentType: z.string(),
  currency: z.string(),
  units: decimal4,
  /** units − pendingSettlement − locked: what a sell may take. */
  available: decimal4,
  /** Held for an open sell: '0.0000' today (a sell executes as it is placed). */
  locked: decimal4,
  /** Bought by executions not yet settled. */
  pendingSettlement: decimal4,
  /** Σ(units × price) ÷ Σ units of the instrument's BUY executions; null with none. */
  averageCost: decimal4.nullable(),
  /** units × averageCost, to the cent (half up); null with no average cost. */
  cost: amount.nullable(),
  price: decimal4,
  priceAsOf: z.string().datetime().nullable(),
  /** units × price, to the cent (half up). */
  value: amount,
  /** value − cost; null with no cost. */
  unrealisedGain: amount.nullable(),
});
export type Asset = z.infer<typeof assetSchema>;
export const assetListResponseSchema = z.object({ data: z.array(assetSchema) });

export const portfolioPositionSchema = z.object({
  instrumentId: z.string(),
  symbol: z.string(),
  investmentType: z.string(),
  units: decimal4,
  /** The last applied price on or before the valuation time; null when the instrument had none. */
  price: decimal4.nullable(),
  priceAsOf: z.string().datetime().nullable(),
  value: amount.nullable(),
  cost: amount.nullable(),
});

const valuationSchema = z.object({ value: amount, cost: amount, unrealisedGain: amount });

export const portfolioSchema = z.object({
  accountId: z.string().regex(CUID_PATTERN),
  customerId: z.string().regex(CUID_PATTERN),
  currency: z.string(),
  /** The day asked for (YYYY-MM-DD), or null for now. */
  date: z.string().nullable(),
  /** The valuation time: now, or the end of `date` in the market's time zone. */
  valuedAt: z.string().datetime(),
  ...valuationSchema.shape,
  byInvestmentType: z.array(valuationSchema.extend({ investmentType: z.string() })),
  positions: z.array(portfolioPositionSchema),
});
export type Portfolio = z.infer<typeof portfolioSchema>;
export type PortfolioPosition = z.infer<typeof portfolioPositionSchema>;
export const portfolioResponseSchema = z.object({ data: portfolioSchema });
