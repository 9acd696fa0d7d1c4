import { z } from 'zod';

/** The values the spec leaves "not shown" (docs/ussd-and-payments.md, Payments). */
export const TRANSACTION_TYPES = ['INCOMING', 'OUTGOING'] as const;
export const TRANSACTION_STATUSES = ['PENDING', 'SUCCESS', 'FAILED', 'CANCELLED'] as const;
export const PAYMENT_PROVIDERS = ['MPESA', 'AIRTEL_MONEY', 'MTN_MOMO'] as const;
export type TransactionType = (typeof TRANSACTION_TYPES)[number];
export type TransactionStatus = (typeof TRANSACTION_STATUSES)[number];
export type PaymentProvider = (typeof PAYMENT_PROVIDERS)[number];

/** A payment (INCOMING, C2B collection) or disbursement (OUTGOING, B2C) inside the status response. */
export const paymentTransactionSchema = z.object({
  id: z.string(),
  type: z.enum(TRANSACTION_TYPES),
  /** Decimal amount in string form, e.g. '1000.00'. */
  amount: z.string(),
  currency: z.string(),
  status: z.enum(TRANSACTION_STATUSES),
  provider: z.enum(PAYMENT_PROVIDERS),
});
export type PaymentTransaction = z.infer<typeof paymentTransactionSchema>;

/** `payment` and `disbursement` are absent (not null) when that transaction does not exist. */
export const paymentStatusSchema = z.object({
  orderId: z.string(),
  payment: paymentTransactionSchema.optional(),
  disbursement: paymentTransactionSchema.optional(),
});
export type PaymentStatus = z.infer<typeof paymentStatusSchema>;

export const PaymentMessage = { statusRetrieved: 'Transaction status retrieved successfully' } as const;

export const paymentStatusResponseSchema = z.object({
  message: z.literal(PaymentMessage.statusRetrieved),
  data: paymentStatusSchema,
});
