import { createId } from '@partner-api/contract';
import { type SQL, sql } from 'drizzle-orm';
import type { Queryable } from '../../db/client.ts';
import { dateOf, rows, run } from '../../db/query.ts';
import { redact } from '../payments/providers/http-exchange.ts';

/** Who made a change: the automation's ADMIN_TOKEN, or a named operator (console). */
export type AuditActor = { type: 'admin-token' } | { type: 'operator'; id: string; name: string };

export type AuditEntry = {
  actor: AuditActor;
  method: string;
  /** The route pattern, e.g. `/admin/organizations/:id`. */
  route: string;
  targetId: string | null;
  body: unknown;
  status: number;
  ip: string;
  requestId: string | null;
  at: Date;
  /** What the change found and left, read in its own transaction (console changes write these). */
  before?: unknown;
  after?: unknown;
};

/** Body fields never written to the audit log, at any depth. */
export const AUDIT_SECRET_KEYS: ReadonlySet<string> = new Set([
  'credential',
  'clientSecret',
  'secret',
  'password',
  'token',
  'csrf',
  'privateKey',
  'apiKey',
]);

/** Bodies past this many characters of JSON are recorded as their size only. */
export const AUDIT_BODY_MAX = 16_384;

/** jsonb refuses NUL and lone surrogates (in `u` mode the class matches only lone ones): such characters are kept as U+FFFD. */
function storable(value: unknown): unknown {
  if (typeof value === 'string') return value.replace(/[\0\uD800-\uDFFF]/gu, '\uFFFD');
  if (Array.isArray(value)) return value.map(storable);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [storable(k) as string, storable(v)]));
}

/** The JSON worth keeping of a request body: objects and arrays, secrets redacted; anything else null. */
export function auditBody(body: unknown, secretValues: readonly string[] = []): unknown {
  if (body === null || typeof body !== 'object' || Buffer.isBuffer(body)) return null;
  const kept = storable(redact(body, AUDIT_SECRET_KEYS, secretValues));
  const size = JSON.stringify(kept).length;
  return size > AUDIT_BODY_MAX ? { truncated: true, characters: size } : kept;
}

const jsonOrNull = (value: unknown) =>
  value === null || value === undefined ? null : JSON.stringify(auditBody(value) ?? value);

/**
 * One audit row. Pass the change's own transaction as `db` when the row must commit with the change
 * or not at all (the console's changes do); `before` and `after` are redacted as a body is.
 */
export async function writeAudit(db: Queryable, entry: AuditEntry): Promise<void> {
  const operator = entry.actor.type === 'operator' ? entry.actor : null;
  await run(
    db,
    sql`insert into audit_log (id, actor_type, operator_id, operator_name, method, route, target_id, body, before, after, status, ip, request_id, at)
  values (${createId()}, ${entry.actor.type}, ${operator?.id ?? null}, ${operator?.name ?? null}, ${entry.method},
  ${entry.route}, ${entry.targetId}, ${entry.body === null ? null : JSON.stringify(entry.body)}::jsonb,
  ${jsonOrNull(entry.before)}::jsonb, ${jsonOrNull(entry.after)}::jsonb, ${entry.status},
  ${entry.ip}, ${entry.requestId}, ${entry.at.toISOString()})`,
  );
}

export type AuditFilter = {
  /** `admin-token`, or an operator's id or name. */
  actor?: string;
  route?: string;
  from?: Date;
  to?: Date;
  /** Entries whose target id contains this text. */
  target?: string;
  limit: number;
  /** Entries to skip, newest first (the console's pages). */
  offset?: number;
};

type AuditRow = {
  id: string;
  actorType: string;
  operatorId: string | null;
  operatorName: string | null;
  method: string;
  route: string;
  targetId: string | null;
  body: unknown;
  before: unknown;
  after: unknown;
  status: number;
  ip: string;
  requestId: string | null;
  at: string;
};

/** The newest entries first. */
export async function listAudit(db: Queryable, filter: AuditFilter) {
  const where: SQL[] = [sql`true`];
  if (filter.actor === 'admin-token') where.push(sql`actor_type = 'admin-token'`);
  else if (filter.actor) where.push(sql`(operator_id = ${filter.actor} or operator_name = ${filter.actor})`);
  if (filter.route) where.push(sql`route = ${filter.route}`);
  if (filter.from) where.push(sql`at >= ${filter.from.toISOString()}`);
  if (filter.to) where.push(sql`at < ${filter.to.toISOString()}`);
  if (filter.target) where.push(sql`strpos(target_id, ${filter.target}) > 0`);
  const found = await rows<AuditRow>(
    db,
    sql`select id, actor_type as "actorType", operator_id as "operatorId", operator_name as "operatorName", method,
  route, target_id as "targetId", body, before, after, status, ip, request_id as "requestId", at::text as at
  from audit_log where ${sql.join(where, sql` and `)} order by at desc, id desc limit ${filter.limit} offset ${filter.offset ?? 0}`,
  );
  return found.map(({ actorType, operatorId, operatorName, at, ...rest }) => ({
    ...rest,
    actor:
      actorType === 'operator'
        ? { type: 'operator' as const, id: operatorId, name: operatorName }
        : { type: 'admin-token' as const },
    at: dateOf(at),
  }));
}
