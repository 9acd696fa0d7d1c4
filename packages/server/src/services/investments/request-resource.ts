import type { InvestmentRequest } from '@partner-api/contract';
import { sql } from 'drizzle-orm';
import type { Queryable } from '../../db/client.ts';
import { dateOf, one } from '../../db/query.ts';

/*
 * The request resource (docs/investments.md, Requests): an order with its execution and its payment
 * transactions, read by the API and by REQUEST.* events (orders/order-events.ts) alike.
 */

export type RequestRow = {
  id: string;
  customerId: string;
  instrumentId: string;
  side: InvestmentRequest['side'];
  status: InvestmentRequest['status'];
  amount: string;
  currency: string;
  quantity: string | null;
  price: string | null;
  createdAt: string;
  updatedAt: string;
  execution: {
    units: string;
    price: string;
    priceAsOf: string | null;
    executedAt: string;
    settlementDate: string;
    status: 'FILLED' | 'SETTLED';
  } | null;
  transactions: InvestmentRequest['transactions'];
};

const iso = (text: string) => dateOf(text).toISOString();

/** A request's columns, its execution and its transactions (oldest first), of orders aliased `o`. */
export const REQUEST_COLUMNS = sql`o.id, o.customer_id as "customerId", o.stock_id as "instrumentId", o.side, o.status,
  o.amount::text as amount, o.currency, o.quantity::text as quantity, o.price::text as price,
  o.created_at::text as "createdAt", o.updated_at::text as "updatedAt",
  (select json_build_object('units', e.units::text, 'price', e.price::text, 'priceAsOf', e.price_as_of::text,
      'executedAt', e.executed_at::text, 'settlementDate', e.settlement_date, 'status', e.status)
    from executions e where e.order_id = o.id) as execution,
  coalesce((select json_agg(json_build_object('id', t.id, 'type', t.type, 'status', t.status,
      'amount', t.amount::text, 'currency', t.currency) order by t.created_at, t.id)
    from transactions t where t.order_id = o.id), '[]') as transactions`;

export function presentRequest(row: RequestRow): InvestmentRequest {
  const { execution } = row;
  return {
    ...row,
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
    execution: execution && {
      ...execution,
      priceAsOf: execution.priceAsOf === null ? null : iso(execution.priceAsOf),
      executedAt: iso(execution.executedAt),
    },
  };
}

/** One request of the organization; undefined when it has none of that id. */
export async function getRequest(
  db: Queryable,
  organizationId: string,
  id: string,
): Promise<InvestmentRequest | undefined> {
  const row = await one<RequestRow>(
    db,
    sql`select ${REQUEST_COLUMNS} from orders o where o.id = ${id} and o.organization_id = ${organizationId}`,
  );
  return row && presentRequest(row);
}
