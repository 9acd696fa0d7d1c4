import { createId } from '@partner-api/contract';
import { sql } from 'drizzle-orm';
import type { Queryable, Tx } from '../../db/client.ts';
import { one, run } from '../../db/query.ts';
import { localTime, NSE, rulesOf, settlementDate } from '../market/calendar.ts';
import { holidaySet } from '../market/holidays.ts';

/**
 * Records what an order executed (in the transaction that executed it): units, the price and its
 * as-of time, the execution time and the settlement date, T+N trading days of the instrument's
 * market counted from the execution's local date (docs/market.md, "Executions").
 */
export async function recordExecution(
  tx: Tx,
  input: {
    organizationId: string;
    orderId: string;
    stockId: string;
    side: 'BUY' | 'SELL';
    units: string;
    price: string;
    executedAt: Date;
  },
): Promise<{ settlementDate: string }> {
  const stock = await one<{ market: string; priceAsOf: string | null }>(
    tx,
    sql`select market, price_as_of::text as "priceAsOf" from stocks where id = ${input.stockId}`,
  );
  const rules = rulesOf(stock?.market ?? 'XNAI');
  const settles = settlementDate(rules, input.executedAt, await holidaySet(tx, rules.mic));
  await run(
    tx,
    sql`insert into executions (id, organization_id, order_id, stock_id, side, units, price, price_as_of,
    executed_at, settlement_date, status)
  values (${createId()}, ${input.organizationId}, ${input.orderId}, ${input.stockId}, ${input.side},
    ${input.units}::numeric, ${input.price}::numeric, ${stock?.priceAsOf ?? null}::timestamptz,
    ${input.executedAt.toISOString()}::timestamptz, ${settles}, 'FILLED')
  on conflict (order_id) do nothing`,
  );
  // The units ledger: the same movement, signed (docs/market.md, "The ledger").
  await run(
    tx,
    sql`insert into ledger_entries (id, organization_id, customer_id, stock_id, order_id, kind, units)
  select ${createId()}, o.organization_id, o.customer_id, o.stock_id, o.id, ${input.side},
    ${input.side === 'BUY' ? sql`${input.units}::numeric` : sql`-${input.units}::numeric`}
  from orders o where o.id = ${input.orderId}`,
  );
  return { settlementDate: settles };
}

/** Marks SETTLED every FILLED execution whose settlement date has come (in the NSE's time zone). */
export async function settleDueExecutions(db: Queryable, now: Date): Promise<number> {
  const today = localTime(NSE.timeZone, now).date;
  return run(
    db,
    sql`update executions set status = 'SETTLED', settled_at = ${now.toISOString()}::timestamptz
  where status = 'FILLED' and settlement_date <= ${today}`,
  );
}
