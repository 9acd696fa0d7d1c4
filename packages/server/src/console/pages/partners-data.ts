import { type SQL, sql } from 'drizzle-orm';
import type { Queryable } from '../../db/client.ts';
import { one, rows } from '../../db/query.ts';
import { type CredentialRow, credentialColumns } from '../../services/credentials/update.ts';
import { type OrganizationRow, organizationColumns } from '../../services/organizations/present.ts';

/** How many organizations the list shows (newest first; the search narrows it). */
export const ORGANIZATIONS_SHOWN = 50;
/** How many of an organization's deliveries its page shows (newest first). */
export const DELIVERIES_SHOWN = 25;

/** One row of the Partners list: the organization and what its partner depends on. */
export type PartnerSummary = {
  id: string;
  name: string;
  isActive: boolean;
  language: string;
  smsEnabled: boolean;
  activeCredentials: number;
  credentials: number;
  webhookStatus: 'ACTIVE' | 'DEACTIVED' | null;
  failingSince: string | null;
};

/** The newest organizations, or those whose name contains `search` (or whose id is it). */
export async function listPartners(db: Queryable, search: string): Promise<PartnerSummary[]> {
  const filter = search
    ? sql`where o.name ilike ${`%${search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`} or o.id = ${search}`
    : sql``;
  return rows<PartnerSummary>(
    db,
    sql`select o.id, o.name, o.is_active as "isActive", o.language, o.sms_enabled as "smsEnabled",
  coalesce(c.active, 0)::int as "activeCredentials", coalesce(c.total, 0)::int as credentials,
  w.status as "webhookStatus", w.failing_since::text as "failingSince"
  from organizations o
  left join (select organization_id, count(*) filter (where is_active) as active, count(*) as total
    from credentials group by organization_id) c on c.organization_id = o.id
  left join webhooks w on w.organization_id = o.id
  ${filter}
  order by o.created_at desc, o.id desc limit ${ORGANIZATIONS_SHOWN}`,
  );
}

export const findOrganization = (db: Queryable, id: string) =>
  one<OrganizationRow>(db, sql`select ${organizationColumns} from organizations where id = ${id}`);

/**
 * One credential of the organization as the admin API presents it (never the secret hash nor the
 * key), locked for the change when `q` is the change's transaction: the audit's "before".
 */
export const lockCredential = (tx: Queryable, organizationId: string, id: string) =>
  one<CredentialRow>(
    tx,
    sql`select ${credentialColumns} from credentials where id = ${id} and organization_id = ${organizationId} for update`,
  );

/** A delivery with its event, and its latest attempt's status and error. */
export type DeliveryRow = {
  id: string;
  eventId: string;
  event: string;
  state: 'PENDING' | 'DELIVERED' | 'FAILED';
  attempts: number;
  nextAttemptAt: string;
  deliveredAt: string | null;
  lastError: string | null;
  createdAt: string;
  lastStatus: number | null;
  lastAttemptError: string | null;
  lastAttemptAt: string | null;
};

function deliveries(db: Queryable, where: SQL, limit: number) {
  return rows<DeliveryRow>(
    db,
    sql`select d.id, d.event_id as "eventId", e.event, d.state, d.attempts,
  d.next_attempt_at::text as "nextAttemptAt", d.delivered_at::text as "deliveredAt", d.last_error as "lastError",
  d.created_at::text as "createdAt", a.http_status as "lastStatus", a.error as "lastAttemptError",
  a.at::text as "lastAttemptAt"
  from webhook_deliveries d join webhook_events e on e.id = d.event_id
  left join lateral (select x.http_status, x.error, x.at from webhook_attempts x where x.delivery_id = d.id
    order by x.at desc, x.id desc limit 1) a on true
  where ${where}
  order by d.created_at desc, d.id desc limit ${limit}`,
  );
}

/** The organization's newest deliveries. */
export const listDeliveries = (db: Queryable, organizationId: string) =>
  deliveries(db, sql`d.organization_id = ${organizationId}`, DELIVERIES_SHOWN);

/** One delivery of the organization, or undefined (another organization's delivery is not found). */
export const findDelivery = async (db: Queryable, organizationId: string, id: string) =>
  (await deliveries(db, sql`d.organization_id = ${organizationId} and d.id = ${id}`, 1))[0];

export type AttemptRow = { at: string; httpStatus: number | null; latencyMs: number; error: string | null };

/** Every attempt of a delivery, oldest first. */
export const listAttempts = (db: Queryable, deliveryId: string) =>
  rows<AttemptRow>(
    db,
    sql`select at::text as at, http_status as "httpStatus", latency_ms as "latencyMs", error
  from webhook_attempts where delivery_id = ${deliveryId} order by at, id`,
  );
