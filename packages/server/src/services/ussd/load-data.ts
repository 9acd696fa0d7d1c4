import { and, asc, desc, eq, gt, inArray, sql } from 'drizzle-orm';
import type { Tx } from '../../db/client.ts';
import { holdings, orders, organizations, stocks } from '../../db/schema.ts';
import { listActiveStocks } from '../stocks/upsert.ts';
import type { UssdData, UssdOpenOrder } from './types.ts';

/** Orders the customer can still cancel, listed under "Open requests". */
export const OPEN_ORDER_STATUSES = ['PENDING_PAYMENT', 'PAID'] as const;

/** The snapshot the pure machine reads, loaded inside the move's transaction after the session lock. */
export async function loadUssdData(
  tx: Tx,
  customer: { id: string; organizationId: string; msisdn: string | null },
): Promise<UssdData> {
  const [organization] = await tx
    .select({ name: organizations.name })
    .from(organizations)
    .where(eq(organizations.id, customer.organizationId));
  const catalog = await listActiveStocks(tx);
  const held = await tx
    .select({
      stockId: holdings.stockId,
      symbol: stocks.symbol,
      units: holdings.units,
      value: sql<string>`round(${holdings.units} * ${stocks.price}, 2)::text`,
    })
    .from(holdings)
    .innerJoin(stocks, eq(stocks.id, holdings.stockId))
    .where(and(eq(holdings.customerId, customer.id), gt(holdings.units, '0')))
    .orderBy(asc(stocks.symbol));
  const open = await tx
    .select({
      id: orders.id,
      side: orders.side,
      symbol: stocks.symbol,
      amount: orders.amount,
      status: orders.status,
    })
    .from(orders)
    .innerJoin(stocks, eq(stocks.id, orders.stockId))
    // The organization leads orders_org_customer_idx: without it this is a scan of every order.
    .where(
      and(
        eq(orders.organizationId, customer.organizationId),
        eq(orders.customerId, customer.id),
        inArray(orders.status, [...OPEN_ORDER_STATUSES]),
      ),
    )
    .orderBy(desc(orders.createdAt), desc(orders.id));
  return {
    organizationName: organization?.name ?? '',
    customer: { id: customer.id, hasMsisdn: Boolean(customer.msisdn) },
    stocks: catalog.map(({ id, symbol, name, price, currency }) => ({ id, symbol, name, price, currency })),
    holdings: held.map((h) => ({ ...h, units: Number(h.units) })),
    openOrders: open satisfies UssdOpenOrder[],
  };
}
