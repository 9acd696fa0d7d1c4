import { sql } from 'drizzle-orm';
import type { Queryable } from '../../db/client.ts';
import { rows } from '../../db/query.ts';

/** One difference the check found; none: the book balances. */
export type LedgerDifference =
  | { kind: 'HOLDING'; customerId: string; symbol: string; holding: string; ledger: string }
  | { kind: 'BUY_WITHOUT_COLLECTION'; orderId: string; collections: number }
  | { kind: 'SELL_WITHOUT_PAYOUT'; orderId: string; payouts: number }
  | { kind: 'EXECUTION_MISSING'; orderId: string }
  | { kind: 'PENDING'; customerId: string; symbol: string; pending: string; unsettled: string }
  | { kind: 'MONEY_ENTRY'; transactionId: string; orderId: string; amount: string; entered: string | null }
  | { kind: 'MONEY_HELD'; orderId: string; status: string; held: string; expected: string };

/**
 * `partner-api ledger check` (docs/market.md, "The ledger"), optionally one organization's:
 * - units: every holding equals the sum of its units entries, and its units pending settlement equal
 *   its buys' executions not yet SETTLED;
 * - orders: every executed buy has exactly one successful collection of its amount; every executed
 *   sell has exactly one payout that is pending or paid (a failed one is owed: listed until the
 *   operator resolves it); every executed order has its execution;
 * - money: every successful transaction has its money entry of its signed amount; and what the money
 *   ledger holds for each order is what its state says: a buy's amount once PAID or EXECUTED, a
 *   sell's proceeds out once paid, and nothing for an order that ended unexecuted, except while its
 *   refund is on its way.
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
  const pending = await rows<{ customerId: string; symbol: string; pending: string; unsettled: string }>(
    db,
    sql`with u as (
  select o.customer_id, e.stock_id, sum(e.units) as units from executions e join orders o on o.id = e.order_id
  where e.status = 'FILLED' and e.side = 'BUY'${org('o.organization_id')} group by o.customer_id, e.stock_id
)
select h.customer_id as "customerId", s.symbol, h.pending_units::text as pending,
  least(h.units, coalesce(u.units, 0))::text as unsettled
from holdings h join stocks s on s.id = h.stock_id
left join u on u.customer_id = h.customer_id and u.stock_id = h.stock_id
where h.pending_units <> least(h.units, coalesce(u.units, 0))${org('h.organization_id')}
order by 1, 2`,
  );
  const entries = await rows<{
    transactionId: string;
    orderId: string;
    amount: string;
    entered: string | null;
  }>(
    db,
    sql`select t.id as "transactionId", t.order_id as "orderId",
  (case when t.type = 'INCOMING' then t.amount else -t.amount end)::text as amount, m.amount::text as entered
from transactions t left join money_entries m on m.transaction_id = t.id
where t.status = 'SUCCESS'${org('t.organization_id')}
  and (m.id is null or m.amount <> case when t.type = 'INCOMING' then t.amount else -t.amount end)
order by t.created_at, t.id`,
  );
  const held = await rows<{ orderId: string; status: string; held: string; expected: string }>(
    db,
    sql`with m as (
  select order_id, sum(amount) as amount from money_entries where true${org('organization_id')} group by order_id
), x as (
  select o.id, o.status, coalesce(m.amount, 0) as held,
    case
      when o.side = 'BUY' and o.status = 'PAID' then o.amount
      -- An executed buy keeps its amount, less the unspent part of a whole-units buy once refunded.
      when o.side = 'BUY' and o.status = 'EXECUTED' then o.amount - coalesce((select sum(t.amount)
        from transactions t where t.order_id = o.id and t.type = 'OUTGOING' and t.status = 'SUCCESS'), 0)
      when o.side = 'SELL' and exists (select 1 from transactions t where t.order_id = o.id
        and t.type = 'OUTGOING' and t.status = 'SUCCESS') then -o.amount
      else 0
    end as expected,
    exists (select 1 from transactions t where t.order_id = o.id and t.type = 'OUTGOING'
      and t.status = 'PENDING') as refunding
  from orders o left join m on m.order_id = o.id where true${org('o.organization_id')}
)
select id as "orderId", status, held::text as held, expected::text as expected from x
where held <> expected and not (refunding and held > 0 and status in ('CANCELLED', 'FAILED'))
order by id`,
  );
  const differences: LedgerDifference[] = holdings.map((h) => ({ kind: 'HOLDING' as const, ...h }));
  differences.push(...pending.map((p) => ({ kind: 'PENDING' as const, ...p })));
  differences.push(...entries.map((e) => ({ kind: 'MONEY_ENTRY' as const, ...e })));
  differences.push(...held.map((h) => ({ kind: 'MONEY_HELD' as const, ...h })));
  for (const o of orders) {
    if (o.side === 'BUY' && o.money !== 1)
      differences.push({ kind: 'BUY_WITHOUT_COLLECTION', orderId: o.orderId, collections: o.money });
    if (o.side === 'SELL' && o.money !== 1)
      differences.push({ kind: 'SELL_WITHOUT_PAYOUT', orderId: o.orderId, payouts: o.money });
    if (o.executions !== 1) differences.push({ kind: 'EXECUTION_MISSING', orderId: o.orderId });
  }
  return differences;
}
