import { desc, eq, inArray } from 'drizzle-orm';
import type { Queryable } from '../../db/client.ts';
import { orders, stocks, transactions } from '../../db/schema.ts';

/** The operator's view: orders newest first, each with the stock symbol and all its transactions. */
export async function listOrdersForAdmin(db: Queryable, filter: { organizationId?: string; limit: number }) {
  const rows = await db
    .select({ order: orders, symbol: stocks.symbol })
    .from(orders)
    .innerJoin(stocks, eq(stocks.id, orders.stockId))
    .where(filter.organizationId ? eq(orders.organizationId, filter.organizationId) : undefined)
    .orderBy(desc(orders.createdAt), desc(orders.id))
    .limit(filter.limit);
  const ids = rows.map((r) => r.order.id);
  const moves =
    ids.length === 0
      ? []
      : await db
          .select()
          .from(transactions)
          .where(inArray(transactions.orderId, ids))
          .orderBy(transactions.createdAt, transactions.id);
  return rows.map(({ order, symbol }) => ({
    ...order,
    symbol,
    transactions: moves.filter((t) => t.orderId === order.id),
  }));
}
