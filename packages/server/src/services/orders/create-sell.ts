import { createId } from '@partner-api/contract';
import { and, eq, gte, sql } from 'drizzle-orm';
import type { Tx } from '../../db/client.ts';
import { holdings, orders, stocks } from '../../db/schema.ts';
import { amountString, parseDecimal, proceeds } from '../../lib/money.ts';
import { createTransaction } from '../payments/create-transaction.ts';
import type { PlacedOrder } from './create-buy.ts';

/**
 * A sell order of whole units, EXECUTED at once at the current price: the holding is decremented
 * (only if it still holds the units: the guarded update is the check) and the proceeds are paid out
 * by a disbursement (OUTGOING, PENDING) requested after commit, to the customer's number (`msisdn`,
 * read by the caller in the same transaction).
 */
export async function createSellOrder(
  tx: Tx,
  input: {
    organizationId: string;
    customerId: string;
    msisdn: string | null;
    stockId: string;
    /** Whole units, e.g. '3'. */
    quantity: string;
  },
): Promise<PlacedOrder> {
  const { msisdn } = input;
  if (!msisdn) throw new Error('sell order: the customer has no number to pay out to');
  const [stock] = await tx
    .select()
    .from(stocks)
    .where(and(eq(stocks.id, input.stockId), eq(stocks.isActive, true)));
  if (!stock) throw new Error(`sell order: stock ${input.stockId} is not listed`);
  const quantity = input.quantity;
  const sold = await tx
    .update(holdings)
    .set({ units: sql`${holdings.units} - ${quantity}::numeric`, updatedAt: new Date() })
    .where(
      and(
        eq(holdings.customerId, input.customerId),
        eq(holdings.stockId, stock.id),
        gte(holdings.units, quantity),
      ),
    )
    .returning({ units: holdings.units });
  if (sold.length === 0) throw new Error('sell order: the holding no longer has these units');
  const orderId = createId();
  const payout = proceeds(
    parseDecimal(quantity, 'quantity', 0),
    parseDecimal(stock.price, 'price'),
    stock.currency,
  );
  await tx.insert(orders).values({
    id: orderId,
    organizationId: input.organizationId,
    customerId: input.customerId,
    stockId: stock.id,
    side: 'SELL',
    status: 'EXECUTED',
    amount: amountString(payout),
    currency: payout.currency,
    quantity,
    price: stock.price,
  });
  const disbursement = await createTransaction({
    tx,
    input: { organizationId: input.organizationId, orderId, type: 'OUTGOING', amount: payout, msisdn },
  });
  return { orderId, payments: [disbursement] };
}
