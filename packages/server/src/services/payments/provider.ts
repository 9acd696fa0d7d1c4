import type { transactions } from '../../db/schema.ts';

type TransactionRow = typeof transactions.$inferSelect;

/** One of our transactions, as a move creates it (its provider request is queued with it). */
export type TransactionRef = Pick<
  TransactionRow,
  'id' | 'type' | 'amount' | 'currency' | 'msisdn' | 'provider'
>;

/** Minimal logger (pino's shape) so services stay free of HTTP types. */
export type Log = {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
};
