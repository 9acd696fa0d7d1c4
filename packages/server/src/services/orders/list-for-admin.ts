import { sql } from 'drizzle-orm';
import type { Queryable } from '../../db/client.ts';
import { rows } from '../../db/query.ts';
import {
  type SelectedTransaction,
  TRANSACTION_COLUMNS,
  toTransactionRow,
} from '../payments/transaction-row.ts';
import { ORDER_COLUMNS, type SelectedOrder, toOrderRow } from './lock-order.ts';

/** The operator's view: orders newest first, each with the stock symbol and all its transactions. */
export async function listOrdersForAdmin(db: Queryable, filter: { organizationId?: string; limit: number }) {
  const scope = filter.organizationId ? sql`where o.organization_id = ${filter.organizationId}` : sql``;
  const listed = await rows<SelectedOrder & { symbol: string }>(
    db,
    sql`select ${ORDER_COLUMNS}, s.symbol from orders o join stocks s on s.id = o.stock_id
  ${scope} order by o.created_at desc, o.id desc limit ${filter.limit}`,
  );
  const ids = listed.map((r) => r.id);
  const moves =
    ids.length === 0
      ? []
      : await rows<SelectedTransaction>(
          db,
          sql`select ${TRANSACTION_COLUMNS} from transactions t where t.order_id in ${ids}
  order by t.created_at, t.id`,
        );
  return listed.map(({ symbol, ...order }) => ({
    ...toOrderRow(order),
    symbol,
    transactions: moves.filter((t) => t.orderId === order.id).map(toTransactionRow),
  }));
}
