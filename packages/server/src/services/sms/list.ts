import { type SQL, sql } from 'drizzle-orm';
import type { Queryable } from '../../db/client.ts';
import { dateOf, rows } from '../../db/query.ts';
import type { SmsState } from './store.ts';

export const SMS_STATES = [
  'QUEUED',
  'SENDING',
  'SENT',
  'DELIVERED',
  'UNDELIVERED',
  'REFUSED',
  'FAILED',
] as const;

export type SmsFilter = {
  state?: SmsState;
  organizationId?: string;
  customerId?: string;
  msisdn?: string;
  /** The number's last 4 digits (the console shows and takes no more of a number). */
  msisdnEnding?: string;
  limit: number;
  /** Rows to skip, newest first (the console's pages). */
  offset?: number;
};

type Row = {
  id: string;
  organizationId: string;
  customerId: string;
  msisdn: string;
  kind: string;
  eventKey: string;
  language: string;
  text: string;
  state: SmsState;
  attempts: number;
  unconfirmedSends: number;
  gatewayMessageId: string | null;
  statusCode: number | null;
  gatewayStatus: string | null;
  deliveryStatus: string | null;
  failureReason: string | null;
  lastError: string | null;
  createdAt: string;
  sentAt: string | null;
  deliveredAt: string | null;
};

/** Whether the operator must look at it: the gateway refused it, it failed, or it was not delivered. */
export const needsAttention = (state: SmsState) =>
  state === 'REFUSED' || state === 'FAILED' || state === 'UNDELIVERED';

/** The filter's conditions but the state's. */
function smsWhere(filter: Omit<SmsFilter, 'state' | 'limit' | 'offset'>): SQL[] {
  const where: SQL[] = [];
  if (filter.organizationId) where.push(sql`organization_id = ${filter.organizationId}`);
  if (filter.customerId) where.push(sql`customer_id = ${filter.customerId}`);
  if (filter.msisdn) where.push(sql`msisdn = ${filter.msisdn}`);
  if (filter.msisdnEnding) where.push(sql`right(msisdn, 4) = ${filter.msisdnEnding}`);
  return where;
}

/** How many SMS are in each state under the filter (the state's aside); every state is present. */
export async function countSmsByState(
  db: Queryable,
  filter: Omit<SmsFilter, 'state' | 'limit' | 'offset'>,
): Promise<Record<SmsState, number>> {
  const where = smsWhere(filter);
  const clause = where.length > 0 ? sql`where ${sql.join(where, sql` and `)}` : sql``;
  const found = await rows<{ state: SmsState; count: number }>(
    db,
    sql`select state, count(*)::int as count from sms_messages ${clause} group by state`,
  );
  const counts = Object.fromEntries(SMS_STATES.map((state) => [state, 0])) as Record<SmsState, number>;
  for (const row of found) counts[row.state] = row.count;
  return counts;
}

/** The operator's view of investor SMS (GET /admin/sms), newest first, filtered. */
export async function listSms(db: Queryable, filter: SmsFilter) {
  const where = smsWhere(filter);
  if (filter.state) where.push(sql`state = ${filter.state}`);
  const clause = where.length > 0 ? sql`where ${sql.join(where, sql` and `)}` : sql``;
  const found = await rows<Row>(
    db,
    sql`select id, organization_id as "organizationId", customer_id as "customerId", msisdn, kind,
  event_key as "eventKey", language, text, state, attempts, unconfirmed_sends as "unconfirmedSends",
  gateway_message_id as "gatewayMessageId", status_code as "statusCode", gateway_status as "gatewayStatus",
  delivery_status as "deliveryStatus", failure_reason as "failureReason", last_error as "lastError",
  created_at::text as "createdAt", sent_at::text as "sentAt", delivered_at::text as "deliveredAt"
  from sms_messages ${clause} order by created_at desc, id desc limit ${filter.limit} offset ${filter.offset ?? 0}`,
  );
  return found.map((row) => ({
    ...row,
    attention: needsAttention(row.state),
    createdAt: dateOf(row.createdAt),
    sentAt: dateOf(row.sentAt),
    deliveredAt: dateOf(row.deliveredAt),
  }));
}

/**
 * The SMS sent to a customer's number (the sandbox handset's inbox), newest first: every one the
 * gateway took, whichever customer record of the organization caused it.
 */
export async function smsOfNumber(db: Queryable, organizationId: string, customerId: string, limit = 20) {
  const found = await rows<{ id: string; text: string; state: SmsState; sentAt: string }>(
    db,
    sql`select m.id, m.text, m.state, m.sent_at::text as "sentAt" from sms_messages m
  join customers c on c.id = ${customerId} and c.organization_id = ${organizationId}
  where m.organization_id = ${organizationId} and m.msisdn = c.msisdn and m.sent_at is not null
  order by m.sent_at desc, m.id desc limit ${limit}`,
  );
  return found.map((row) => ({ ...row, sentAt: dateOf(row.sentAt) }));
}
