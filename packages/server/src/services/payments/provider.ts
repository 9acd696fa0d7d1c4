import type { transactions } from '../../db/schema.ts';

type TransactionRow = typeof transactions.$inferSelect;

/** What a provider needs to move money for one of our transactions. */
export type TransactionRef = Pick<
  TransactionRow,
  'id' | 'type' | 'amount' | 'currency' | 'msisdn' | 'provider'
>;

/**
 * The mobile-money provider: a collection (C2B, INCOMING) prompts the customer to pay, a
 * disbursement (B2C, OUTGOING) pays the customer. Both answer asynchronously through
 * POST /v1/webhooks/callback; a call here only asks.
 */
export interface PaymentProvider {
  collect(transaction: TransactionRef): Promise<void>;
  disburse(transaction: TransactionRef): Promise<void>;
}

/** Minimal logger (pino's shape) so services stay free of HTTP types. */
export type Log = {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
};

/**
 * Asks the provider to move the money of transactions that were just committed. Called after the
 * commit, never inside the transaction: a provider must not be asked for a payment that was rolled
 * back. A provider failure leaves the transaction PENDING (it can be settled by a later callback or
 * by the operator), so it is logged, not thrown.
 */
export function requestPayments(
  provider: PaymentProvider | undefined,
  refs: TransactionRef[],
  log: Log,
): void {
  if (!provider) return;
  for (const ref of refs) {
    const ask = ref.type === 'INCOMING' ? provider.collect(ref) : provider.disburse(ref);
    ask.catch((err: unknown) =>
      log.error({ err, transactionId: ref.id }, 'payment provider refused the request; left PENDING'),
    );
  }
}
