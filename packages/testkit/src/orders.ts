import { randomBytes } from 'node:crypto';
import {
  createId,
  type PaymentProvider,
  type TransactionStatus,
  type TransactionType,
} from '@partner-api/contract';
import type { Queryable } from '../../server/src/db/client.ts';
import { customers, orders, stocks, transactions } from '../../server/src/db/schema.ts';

export type TransactionSeed = {
  type: TransactionType;
  amount: string;
  status?: TransactionStatus;
  provider?: PaymentProvider;
  currency?: string;
  /** Defaults to one second after the previous seed, so "latest" is unambiguous. */
  createdAt?: Date;
};

export type SeededOrder = { orderId: string; customerId: string; transactionIds: string[] };

/**
 * An order of the organization with the given transactions, written directly with drizzle (the
 * USSD flows that create them for real belong to another issue). Each call makes its own customer
 * and stock, so tests stay independent.
 */
export async function createOrderWithTransactions(
  db: Queryable,
  organizationId: string,
  seeds: TransactionSeed[] = [],
): Promise<SeededOrder> {
  const customerId = createId();
  await db.insert(customers).values({
    id: customerId,
    organizationId,
    firstName: 'Order',
    lastName: 'Fixture',
    msisdn: '254711000000',
  });
  const stockId = createId();
  await db.insert(stocks).values({
    id: stockId,
    symbol: `T${randomBytes(5).toString('hex').toUpperCase()}`,
    name: 'Test Stock',
    price: '10.0000',
  });
  const orderId = createId();
  const amount = seeds[0]?.amount ?? '1000.00';
  await db.insert(orders).values({
    id: orderId,
    organizationId,
    customerId,
    stockId,
    side: 'BUY',
    status: 'PENDING_PAYMENT',
    amount,
  });
  const start = Date.now() - 60_000;
  const transactionIds: string[] = [];
  for (const [index, seed] of seeds.entries()) {
    const id = createId();
    transactionIds.push(id);
    const createdAt = seed.createdAt ?? new Date(start + index * 1000);
    await db.insert(transactions).values({
      id,
      organizationId,
      orderId,
      type: seed.type,
      amount: seed.amount,
      currency: seed.currency ?? 'KES',
      status: seed.status ?? 'PENDING',
      provider: seed.provider ?? 'MPESA',
      msisdn: '254711000000',
      createdAt,
      updatedAt: createdAt,
    });
  }
  return { orderId, customerId, transactionIds };
}
