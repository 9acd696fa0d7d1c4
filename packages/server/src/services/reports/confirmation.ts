import { NO_FEES_NOTE, type Report, type TradeConfirmationData } from '@partner-api/contract';
import { sql } from 'drizzle-orm';
import type { Tx } from '../../db/client.ts';
import { dateOf, one } from '../../db/query.ts';
import { amountString, money, parseDecimal, unspent } from '../../lib/money.ts';
import { platformOf, type ReportDeps, writeReport } from './write.ts';

type ExecutionRow = {
  executionId: string;
  orderId: string;
  organizationId: string;
  customerId: string;
  firstName: string;
  lastName: string;
  instrumentId: string;
  symbol: string;
  name: string;
  fractional: boolean;
  side: 'BUY' | 'SELL';
  units: string;
  price: string;
  priceAsOf: string | null;
  executedAt: string;
  settlementDate: string;
  orderAmount: string;
  currency: string;
};

/**
 * What the customer's money bought or the sale pays: a sell's proceeds (the order's amount); a
 * buy's amount less the unspent change a whole-units buy refunds (a fractional buy spends it all).
 */
function tradeAmount(row: ExecutionRow): string {
  if (row.side === 'SELL' || row.fractional) return amountString(money(row.orderAmount, row.currency));
  const paid = money(row.orderAmount, row.currency);
  const change = unspent(paid, parseDecimal(row.units, 'units'), parseDecimal(row.price, 'price'));
  return amountString({ amount: paid.amount.minus(change.amount), currency: row.currency });
}

/**
 * The TRADE_CONFIRMATION of an order's execution (orders/life.ts, recordExecution), in the
 * execution's own transaction: written once, whatever else retries (its subject is the execution).
 * Returns the report, or undefined when it already existed.
 */
export async function writeTradeConfirmation(
  tx: Tx,
  orderId: string,
  deps: ReportDeps,
): Promise<Report | undefined> {
  const row = await one<ExecutionRow>(
    tx,
    sql`select e.id as "executionId", e.order_id as "orderId", o.organization_id as "organizationId",
  o.customer_id as "customerId", c.first_name as "firstName", c.last_name as "lastName",
  s.id as "instrumentId", s.symbol, s.name, s.fractional, e.side, e.units::text as units,
  e.price::text as price, e.price_as_of::text as "priceAsOf", e.executed_at::text as "executedAt",
  e.settlement_date::text as "settlementDate", o.amount::text as "orderAmount", o.currency
from executions e join orders o on o.id = e.order_id join customers c on c.id = o.customer_id
join stocks s on s.id = e.stock_id
where e.order_id = ${orderId}`,
  );
  if (!row) throw new Error(`trade confirmation: order ${orderId} has no execution`);
  const executedAt = dateOf(row.executedAt);
  const data: TradeConfirmationData = {
    executionId: row.executionId,
    orderId: row.orderId,
    customer: { id: row.customerId, firstName: row.firstName, lastName: row.lastName },
    instrument: { id: row.instrumentId, symbol: row.symbol, name: row.name, currency: row.currency },
    side: row.side,
    units: row.units,
    price: row.price,
    priceAsOf: row.priceAsOf === null ? null : dateOf(row.priceAsOf).toISOString(),
    amount: tradeAmount(row),
    currency: row.currency,
    fees: [],
    feesTotal: amountString(money('0', row.currency)),
    feesNote: NO_FEES_NOTE,
    executedAt: executedAt.toISOString(),
    settlementDate: row.settlementDate,
    platform: platformOf(deps.config),
  };
  return writeReport(tx, deps, {
    organizationId: row.organizationId,
    customerId: row.customerId,
    type: 'TRADE_CONFIRMATION',
    subject: row.executionId,
    data,
    createdAt: executedAt,
  });
}
