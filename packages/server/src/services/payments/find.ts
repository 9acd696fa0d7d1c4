import { type SQL, sql } from 'drizzle-orm';
import type { Queryable } from '../../db/client.ts';
import { one, rows } from '../../db/query.ts';
import { darajaMsisdn } from './providers/mpesa/adapter.ts';

/** A transaction as the console lists it: with its organization's name and what it is for. */
export type FoundPayment = {
  id: string;
  organizationId: string;
  organizationName: string;
  orderId: string;
  /** collection (INCOMING), refund (OUTGOING of a buy order) or payout (OUTGOING of a sell order). */
  kind: 'collection' | 'refund' | 'payout';
  provider: string;
  amount: string;
  currency: string;
  status: string;
  msisdn: string;
  providerReference: string | null;
  /** Its provider request's state (null: none, e.g. a transaction made before the pipeline). */
  requestState: string | null;
  adapter: string | null;
  providerIds: Record<string, string> | null;
  lastError: string | null;
  createdAt: string;
};

const SELECT = sql`select t.id, t.organization_id as "organizationId", g.name as "organizationName",
  t.order_id as "orderId",
  case when t.type = 'INCOMING' then 'collection' when o.side = 'BUY' then 'refund' else 'payout' end as kind,
  t.provider, t.amount::text as amount, t.currency, t.status, t.msisdn,
  t.provider_reference as "providerReference", r.state as "requestState", r.adapter,
  r.provider_ids as "providerIds", r.last_error as "lastError", t.created_at::text as "createdAt"
  from transactions t join organizations g on g.id = t.organization_id
  join orders o on o.id = t.order_id
  left join provider_requests r on r.transaction_id = t.id`;

const present = (row: FoundPayment): FoundPayment => ({
  ...row,
  createdAt: new Date(row.createdAt).toISOString(),
});

/**
 * The numbers a desk person may type for one phone: as typed, in the international form the
 * providers use (`07…`, `2547…`, `+2547…` are one Kenyan number, darajaMsisdn) and the local one.
 * Empty when `text` is not a phone number.
 */
export function phoneForms(text: string): string[] {
  const compact = text.replace(/[\s().-]/g, '');
  if (!/^\+?\d{7,15}$/.test(compact)) return [];
  const digits = compact.replace(/^\+/, '');
  const international = darajaMsisdn(compact) ?? digits;
  const local = /^254\d{9}$/.test(international) ? `0${international.slice(3)}` : undefined;
  return [...new Set([digits, international, ...(local ? [local] : [])])];
}

/**
 * Every organization's transactions that `key` names: its id, its order's id, the provider's
 * reference (the transaction's receipt, or any id the provider gave its request), or the
 * customer's phone number in any form phoneForms knows. Newest first.
 */
export async function findPayments(db: Queryable, key: string, limit = 100): Promise<FoundPayment[]> {
  const phones = phoneForms(key);
  const byPhone: SQL = phones.length
    ? sql` or t.msisdn in (${sql.join(
        phones.map((p) => sql`${p}`),
        sql`, `,
      )})`
    : sql``;
  const found = await rows<FoundPayment>(
    db,
    sql`${SELECT} where t.id = ${key} or t.order_id = ${key} or t.provider_reference = ${key}
  or exists (select 1 from jsonb_each_text(coalesce(r.provider_ids, '{}'::jsonb)) p where p.value = ${key})${byPhone}
  order by t.created_at desc, t.id desc limit ${limit}`,
  );
  return found.map(present);
}

/** One transaction as findPayments lists it, or undefined. */
export async function findPayment(db: Queryable, id: string): Promise<FoundPayment | undefined> {
  const found = await one<FoundPayment>(db, sql`${SELECT} where t.id = ${id}`);
  return found && present(found);
}
