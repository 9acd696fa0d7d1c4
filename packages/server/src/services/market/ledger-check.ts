import { sql } from 'drizzle-orm';
import type { Queryable } from '../../db/client.ts';
import { rows } from '../../db/query.ts';

/** One difference the check found; none: the book balances. */
export type LedgerDifference =
  | { kind: 'HOLDING'; customerId: string; symbol: string; holding: string; ledger: string }
  | { kind: 'BUY_WITHOUT_COLLECTION'; orderId: string; collections: number }
  | { kind: 'SELL_WITHOUT_PAYOUT'; orderId: string; payouts: number }
  | { kind: 'EXECUTION_MISSING'; orderId: string };

/**
 * `partner-api ledger check`: every holding equals the sum of its ledger entries; every executed buy
 * has exactly one successful collection of its amount; every executed sell has exactly one payout
 * that is pending or paid (a failed one is owed: listed until the operator resolves it); every executed order has its
 * execution. Optionally one organization's.
 */
export async function checkLedger(db: Queryable, organizationId?: string): Promise<LedgerDifference[]> {
  const org = (column: string) => (organizationId ? sql` and ${sql.raw(column)} = ${organizationId}` : sql``);
  const holdings = await rows<{ customerId: string; symbol: string; holding: string; ledger: string }>(
    db,
    sql`with h as (
  select customer_id, stock_id, units from holdings where true${org('organization_id')}
), l as (
  select customer_id, stock_id, sum(units) as units from ledger_entries where true${org('organization_id')}
  group by customer_id, stock_id
)
select coalesce(h.customer_id, l.customer_id) as "customerId", s.symbol,
  coalesce(h.units, 0)::text as holding, coalesce(l.units, 0)::text as ledger
from h full join l on l.customer_id = h.customer_id and l.stock_id = h.stock_id
join stocks s on s.id = coalesce(h.stock_id, l.stock_id)
where coalesce(h.units, 0) <> coalesce(l.units, 0)
order by 1, 2`,
  );
  const orders = await rows<{ orderId: string; side: string; money: number; executions: number }>(
    db,
    sql`select o.id as "orderId", o.side,
  (select count(*)::int from transactions t where t.order_id = o.id
    and ((o.side = 'BUY' and t.type = 'INCOMING' and t.status = 'SUCCESS' and t.amount = o.amount)
      or (o.side = 'SELL' and t.type = 'OUTGOING' and t.status in ('PENDING', 'SUCCESS')))) as money,
  (select count(*)::int from executions e where e.order_id = o.id) as executions
from orders o where o.status = 'EXECUTED'${org('o.organization_id')}
order by o.created_at, o.id`,
  );
  const differences: LedgerDifference[] = holdings.map((h) => ({ kind: 'HOLDING' as const, ...h }));
  for (const o of orders) {
    if (o.side === 'BUY' && o.money !== 1)
      differences.push({ kind: 'BUY_WITHOUT_COLLECTION', orderId: o.orderId, collections: o.money });
    if (o.side === 'SELL' && o.money !== 1)
      differences.push({ kind: 'SELL_WITHOUT_PAYOUT', orderId: o.orderId, payouts: o.money });
    if (o.executions !== 1) differences.push({ kind: 'EXECUTION_MISSING', orderId: o.orderId });
  }
  return differences;
}
