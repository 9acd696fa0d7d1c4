import type { Customer, CustomerUpdate } from '@partner-api/contract';
import { type SQL, sql } from 'drizzle-orm';
import type { Queryable, Tx } from '../../db/client.ts';
import { assignments, dateOf, one, type Read, run } from '../../db/query.ts';
import type { HandlerResult, StoreAnswer } from '../idempotency/answer.ts';
import type { EventOutbox } from '../webhooks/outbox.ts';
import { type CustomerRow, customerColumns, presentCustomer } from './present.ts';

/** The column each field of a patch writes. */
const COLUMNS: { [K in keyof Required<CustomerUpdate>]: SQL } = {
  firstName: sql`first_name`,
  lastName: sql`last_name`,
  msisdn: sql`msisdn`,
  isActive: sql`is_active`,
  identificationNumber: sql`identification_number`,
  identificationType: sql`identification_type`,
  referenceId: sql`reference_id`,
};

type Patch = {
  db: Queryable;
  organizationId: string;
  id: string;
  input: CustomerUpdate;
  events: EventOutbox;
  /** The request's answer for the updated customer. */
  answer: (customer: Customer) => HandlerResult;
  /** Stores that answer with the update (the idempotent route). */
  store?: StoreAnswer;
  /** The first read, with the request's claim folded in (plugins/idempotency.ts, `firstRead`). */
  read: Read;
};

/**
 * Applies the fields present in the patch (null clears a nullable one); undefined when the customer
 * is not the organization's. An empty patch changes nothing, updatedAt included, and answers the
 * customer. A change writes CUSTOMER.UPDATED (data: the customer as GET answers it) with the row and
 * the stored answer.
 *
 * Round trips (docs/performance.md, "Fewer statements, one connection"): the customer is read with
 * its version (`xmin`), unlocked, in the statement that claims the request's key (`read`); the
 * patched customer, its event and the answer are computed from it; then one autocommit statement
 * writes the row, the event and the stored answer, only if the row is still that version. When
 * another write got there first, the patch runs again in a transaction on the row as it is then
 * (`patchLocked`).
 */
export async function updateCustomer(patch: Patch): Promise<HandlerResult | undefined> {
  const { db, organizationId, id, input, events, answer, store, read } = patch;
  const row = await read<CustomerRow & { version: string }>(
    sql`select ${customerColumns}, xmin::text as version from customers
  where id = ${id} and organization_id = ${organizationId}`,
  );
  if (!row) return undefined;
  const { version, ...current } = row;
  const set = assignments(input, COLUMNS);
  if (set.length === 0) return answer(presentCustomer(current));

  // The server's clock, but never at or before the version it patches: an instance whose clock lags
  // the one that wrote last still moves updatedAt forward (stored in microseconds, read in ms).
  const now = new Date(Math.max(Date.now(), dateOf(current.updatedAt).getTime() + 1));
  const customer = presentCustomer({ ...current, ...fieldsOf(input), updatedAt: now.toISOString() });
  const result = answer(customer);
  const written = sql`exists (select 1 from patched)`;
  const event = events.enabled
    ? sql`, ${events.emission({ organizationId, event: 'CUSTOMER.UPDATED', data: customer }, sql`from patched`)}`
    : sql``;
  const stored = store?.(result, written);
  const saved = await one<{ saved: boolean }>(
    db,
    sql`with patched as (
  update customers set ${sql.join(set, sql`, `)}, updated_at = ${now.toISOString()}::timestamptz
  where id = ${id} and organization_id = ${organizationId} and xmin::text = ${version} returning 1
)${event}${stored ? sql`, stored as (${stored})` : sql``}
select ${written} as saved`,
  );
  if (saved?.saved) {
    if (events.enabled) events.emitted('CUSTOMER.UPDATED');
    return result;
  }
  return db.transaction((tx) => patchLocked({ ...patch, db: tx }, set));
}

/** The patch on the row as it is now, in a transaction: the update, then its event and answer. */
async function patchLocked(patch: Patch & { db: Tx }, set: SQL[]): Promise<HandlerResult | undefined> {
  const { db, organizationId, id, events, answer, store } = patch;
  const row = await one<CustomerRow>(
    db,
    sql`update customers set ${sql.join(set, sql`, `)}, updated_at = now()
  where id = ${id} and organization_id = ${organizationId}
  returning ${customerColumns}`,
  );
  if (!row) return undefined;
  const customer = presentCustomer(row);
  const result = answer(customer);
  await events.emit(db, { organizationId, event: 'CUSTOMER.UPDATED', data: customer });
  // Stored in this transaction: the work's `db` is not this transaction, so the plugin's own store
  // after the work would commit apart from the update.
  const stored = store?.(result);
  if (stored) await run(db, stored);
  return result;
}

/** The patch's fields that were sent (null included), under the row's names. */
function fieldsOf(input: CustomerUpdate): Partial<CustomerRow> {
  return Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined));
}
