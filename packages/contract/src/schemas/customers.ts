import { z } from 'zod';
import { CUID_PATTERN } from '../ids.ts';

export const IDENTIFICATION_TYPES = [
  'SSN',
  'PASSPORT',
  'DRIVER_LICENSE',
  'NATIONAL_ID',
  'TAX_ID',
  'OTHER',
] as const;
export type IdentificationType = (typeof IDENTIFICATION_TYPES)[number];

export const MSISDN_PATTERN = /^[0-9]{7,15}$/;

const MSISDN_MESSAGE = 'msisdn must be 7 to 15 digits';
const IDENTIFICATION_TYPE_MESSAGE = `identificationType must be one of ${IDENTIFICATION_TYPES.join(', ')}`;

/** 'x is required' when absent, 'x cannot be null' for null, otherwise the type the field wants. */
const typeMessage = (field: string, wants: string) => (issue: { input?: unknown }) => {
  if (issue.input === undefined) return `${field} is required`;
  if (issue.input === null) return `${field} cannot be null`;
  return `${field} must be ${wants}`;
};

/**
 * Display names: trimmed before the bounds (1..100) are checked and before storage
 * (docs/decisions.md, Codes and defaults).
 */
const name = (field: string) =>
  z
    .string({ error: typeMessage(field, 'a string') })
    .trim()
    .min(1, `${field} must not be empty`)
    .max(100, `${field} must be at most 100 characters`);

/** Identifiers are the partner's own values and are stored verbatim; blank ones are refused. */
const identifier = (field: string, max: number) =>
  z
    .string({ error: typeMessage(field, 'a string') })
    .min(1, `${field} must not be empty`)
    .max(max, `${field} must be at most ${max} characters`)
    .refine((value) => value.trim().length > 0, `${field} must not be blank`)
    .nullable();

const msisdn = z
  .string({ error: typeMessage('msisdn', 'a string of 7 to 15 digits') })
  .regex(MSISDN_PATTERN, MSISDN_MESSAGE);

const identificationType = z.enum(IDENTIFICATION_TYPES, { error: IDENTIFICATION_TYPE_MESSAGE });

const optionalFields = {
  msisdn: msisdn.nullable().optional(),
  isActive: z.boolean({ error: typeMessage('isActive', 'true or false') }).optional(),
  identificationNumber: identifier('identificationNumber', 50).optional(),
  identificationType: identificationType.nullable().optional(),
  referenceId: identifier('referenceId', 100).optional(),
};

/** POST /customers. Unknown fields are refused, each with an entry naming it. */
export const customerCreateSchema = z.strictObject({
  firstName: name('firstName'),
  lastName: name('lastName'),
  ...optionalFields,
});
export type CustomerCreate = z.output<typeof customerCreateSchema>;

/** PATCH /customers/{id}: any subset; null clears msisdn, identificationNumber, identificationType, referenceId. */
export const customerUpdateSchema = z.strictObject({
  firstName: name('firstName').optional(),
  lastName: name('lastName').optional(),
  ...optionalFields,
});
export type CustomerUpdate = z.output<typeof customerUpdateSchema>;

export const customerIdParamsSchema = z.strictObject({
  id: z.string().regex(CUID_PATTERN, 'Invalid customer ID format'),
});

/** A query-string integer: digits only, then bounds, one message per failure. */
export const queryInteger = (field: string, min: number, max: number, fallback: number) =>
  z
    .string({ error: `${field} must be a whole number` })
    .regex(/^[0-9]+$/, `${field} must be a whole number`)
    .transform(Number)
    // int() last: the digits-only regex makes it pass unless the value is past the bounds anyway, and
    // its type lets the OpenAPI document describe the parameter as an integer.
    .pipe(
      z
        .number()
        .min(min, `${field} must be at least ${min}`)
        .max(max, `${field} must be at most ${max}`)
        .int(`${field} must be a whole number`),
    )
    .default(fallback);

export const CUSTOMER_PAGE_MAX = 1_000_000_000;
export const CUSTOMER_LIMIT_MAX = 100;

/** GET /customers. Unknown parameters are refused: a mistyped filter must not silently list everyone. */
export const customerListQuerySchema = z.strictObject({
  page: queryInteger('page', 1, CUSTOMER_PAGE_MAX, 1),
  limit: queryInteger('limit', 1, CUSTOMER_LIMIT_MAX, 10),
  isActive: z
    .enum(['true', 'false'], { error: "isActive must be 'true' or 'false'" })
    .transform((value) => value === 'true')
    // The piped output type lets the OpenAPI document describe the parameter as a boolean.
    .pipe(z.boolean())
    .optional(),
  identificationType: identificationType.optional(),
  search: z
    .string({ error: 'search must be a single string' })
    .trim()
    .max(100, 'search must be at most 100 characters')
    .optional(),
  msisdn: z.string({ error: MSISDN_MESSAGE }).regex(MSISDN_PATTERN, MSISDN_MESSAGE).optional(),
});
export type CustomerListQuery = z.output<typeof customerListQuerySchema>;

/** The spec's Pagination object: totalPages = ceil(total / limit), 0 when nothing matches. */
export const paginationSchema = z.object({
  page: z.number().int(),
  limit: z.number().int(),
  total: z.number().int(),
  totalPages: z.number().int(),
});
export type Pagination = z.infer<typeof paginationSchema>;

export const customerSchema = z.object({
  id: z.string().regex(CUID_PATTERN),
  organizationId: z.string(),
  firstName: z.string(),
  lastName: z.string(),
  msisdn: z.string().nullable(),
  isActive: z.boolean(),
  identificationNumber: z.string().nullable(),
  identificationType: z.enum(IDENTIFICATION_TYPES).nullable(),
  referenceId: z.string().nullable(),
  createdAt: z.string().datetime(),
  updatedAt: z.string().datetime(),
});
export type Customer = z.infer<typeof customerSchema>;

export const CustomerMessage = {
  created: 'Customer created successfully',
  updated: 'Customer updated successfully',
} as const;

export const customerCreatedResponseSchema = z.object({
  message: z.literal(CustomerMessage.created),
  data: customerSchema,
});
export const customerUpdatedResponseSchema = z.object({
  message: z.literal(CustomerMessage.updated),
  data: customerSchema,
});
export const customerResponseSchema = z.object({ data: customerSchema });
export const customerListResponseSchema = z.object({
  data: z.array(customerSchema),
  pagination: paginationSchema,
});
export type CustomerList = { data: Customer[]; pagination: Pagination };
