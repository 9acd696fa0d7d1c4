import type { TestApp } from '@partner-api/testkit/app.ts';
import { sql } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { JSON_BODY_LIMIT } from '../../src/plugins/body-parsing.ts';

/**
 * What every answer of the service may be, endpoint by endpoint: the spec's statuses ("Any
 * authenticated call may also return 401, 403 (allowlist), 429 or 500") plus our decisions (201 on
 * create; 404 for an organization that is gone on /oauth/me, docs/decisions.md; 200 on callbacks,
 * docs/ussd-and-payments.md). 500 is not in the table: it is allowed only by the body-parsing rules
 * (see `bodyUnparseable`).
 */
export const ALLOWED: Record<Endpoint, readonly number[]> = {
  token: [200, 400, 401, 429],
  me: [200, 401, 403, 404, 429],
  revoke: [200, 400, 401, 403, 429],
  'customers.create': [201, 400, 401, 403, 409, 422, 429],
  'customers.list': [200, 400, 401, 403, 429],
  'customers.get': [200, 400, 401, 403, 404, 429],
  'customers.patch': [200, 400, 401, 403, 404, 409, 422, 429],
  'payment.status': [200, 400, 401, 403, 404, 429],
  'webhooks.key': [200, 429],
  'ussd.session': [200, 201, 400, 401, 403, 404, 409, 422, 429],
  'ussd.process': [200, 400, 401, 403, 404, 409, 422, 429],
  callback: [200, 400, 401, 404, 429],
};
export type Endpoint =
  | 'token'
  | 'me'
  | 'revoke'
  | 'customers.create'
  | 'customers.list'
  | 'customers.get'
  | 'customers.patch'
  | 'payment.status'
  | 'webhooks.key'
  | 'ussd.session'
  | 'ussd.process'
  | 'callback';

/** The error labels the spec's Errors table gives each status. */
const LABELS: Record<number, readonly string[]> = {
  400: ['Validation failed', 'Bad Request', 'Invalid request'],
  401: ['Unauthorized'],
  403: ['Forbidden', 'SESSION_FORBIDDEN'],
  404: ['Not found', 'Transaction not found', 'Not Found', 'CUSTOMER_NOT_FOUND', 'SESSION_NOT_FOUND'],
  409: ['Conflict'],
  422: ['Unprocessable Entity'],
  429: ['Too Many Requests'],
  500: ['Internal Server Error'],
  503: ['Service Unavailable'],
};

/** Answers the router gives before any endpoint is known (a URL that matches no route, or is malformed). */
export function isRouterAnswer(status: number, body: unknown): boolean {
  const b = body as Record<string, unknown>;
  return (
    (status === 404 && b?.error === 'Not Found' && Object.keys(b).length === 1) ||
    (status === 400 && b?.error === 'Bad Request' && b?.message === 'Malformed request URL')
  );
}

/** Body-parsing rule 1: an application/json body over 100 kB, or not a JSON object/array, answers 500. */
export function bodyUnparseable(payload: string | undefined): boolean {
  if (payload === undefined || payload.length === 0) return false;
  if (Buffer.byteLength(payload) > JSON_BODY_LIMIT) return true;
  try {
    const value: unknown = JSON.parse(payload);
    return value === null || typeof value !== 'object';
  } catch {
    return true;
  }
}

const isString = (v: unknown): v is string => typeof v === 'string';

/** The three shapes, exactly: {error, details[{field, message}]}, {error, message}, {error}. */
export function errorShapeProblems(body: unknown): string[] {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return ['body is not an object'];
  const b = body as Record<string, unknown>;
  const keys = Object.keys(b).sort().join(',');
  if (!isString(b.error)) return ['error is not a string'];
  if (keys === 'error') return [];
  if (keys === 'error,message') return isString(b.message) ? [] : ['message is not a string'];
  if (keys === 'details,error') {
    if (!Array.isArray(b.details) || b.details.length === 0) return ['details is not a non-empty array'];
    for (const d of b.details) {
      if (d === null || typeof d !== 'object') return ['a detail is not an object'];
      const entry = d as Record<string, unknown>;
      if (Object.keys(entry).sort().join(',') !== 'field,message')
        return [`detail keys ${Object.keys(entry)}`];
      if (!isString(entry.field) || !isString(entry.message)) return ['detail field/message not strings'];
    }
    return [];
  }
  return [`unexpected keys ${keys}`];
}

/** Stack frames, file paths, SQL or driver text must never reach a body. */
const LEAK =
  /(\bat [\w$.<>]+ \(|\.ts:\d+|\.js:\d+|node_modules|\bselect\b[^"]*\bfrom\b|\binsert into\b|\bupdate [a-z_]+ set\b|violates|syntax error|\brelation "|duplicate key|ZodError|TypeError|ReferenceError|drizzle|postgres|pglite|stack)/i;

/** The body text with caller-chosen field names taken out (a validation entry names the unknown field). */
export function leakProblems(body: unknown, text: string): string[] {
  let scrubbed = text;
  const details = (body as { details?: { field?: unknown }[] } | undefined)?.details;
  if (Array.isArray(details)) {
    for (const d of details)
      if (isString(d?.field)) scrubbed = scrubbed.split(JSON.stringify(d.field)).join('""');
  }
  const match = LEAK.exec(scrubbed);
  return match ? [`leak: ${match[0]}`] : [];
}

export type Verdict = { problems: string[]; body: unknown };

/**
 * Judges one answer: status allowed for the endpoint (or a router answer when the URL was not the
 * endpoint's), 500 only for an unparseable body and then bare, the error shape and label of every
 * 4xx/5xx, no leak, and a sane X-Request-Id.
 */
export function judge(
  endpoint: Endpoint | { name: string; allowed: readonly number[] },
  res: LightMyRequestResponse | { statusCode: number; body: string; headers: Record<string, unknown> },
  sent: { payload?: string; routable?: boolean },
): Verdict {
  const problems: string[] = [];
  let body: unknown;
  try {
    body = JSON.parse(res.body);
  } catch {
    problems.push(`body is not JSON: ${res.body.slice(0, 80)}`);
  }
  const status = res.statusCode;
  // An endpoint of this table, or another API's (the admin API) with its own statuses.
  const { name, allowed } =
    typeof endpoint === 'string' ? { name: endpoint, allowed: ALLOWED[endpoint] } : endpoint;
  const routerAnswer = isRouterAnswer(status, body);
  if (status === 500) {
    if (!bodyUnparseable(sent.payload)) problems.push('500 for a body the parser accepts');
    if (res.body !== '{"error":"Internal Server Error"}') problems.push('500 body is not the bare label');
  } else if (!allowed.includes(status) && !(routerAnswer && sent.routable === false)) {
    problems.push(`status ${status} not allowed for ${name}`);
  }
  if (status >= 400) {
    problems.push(...errorShapeProblems(body));
    const label = (body as { error?: unknown } | undefined)?.error;
    if (!LABELS[status]?.includes(label as string)) problems.push(`label ${String(label)} for ${status}`);
    // Error bodies only: a success body may echo what the caller stored (a customer named "select ... from").
    problems.push(...leakProblems(body, res.body));
  }
  const requestId = res.headers['x-request-id'];
  if (typeof requestId !== 'string' || !/^[A-Za-z0-9._:-]{1,128}$/.test(requestId)) {
    problems.push(`X-Request-Id ${String(requestId)}`);
  }
  return { problems, body };
}

export type Snapshot = Record<string, string | number>;

/**
 * Everything a request of the organization could have written, in one statement: row counts and a
 * digest of the rows of customers, orders, transactions and USSD sessions, the credential's
 * idempotency records, and whether the given token id was revoked.
 */
export async function snapshot(
  t: TestApp,
  organizationId: string,
  credentialId: string,
  jti = '',
): Promise<Snapshot> {
  const result = await t.ctx.database.db.execute(sql`
    select
      (select count(*)::int from customers where organization_id = ${organizationId}) as customers,
      (select count(*)::int from orders where organization_id = ${organizationId}) as orders,
      (select count(*)::int from transactions where organization_id = ${organizationId}) as transactions,
      (select count(*)::int from ussd_sessions where organization_id = ${organizationId}) as sessions,
      (select count(*)::int from idempotency_keys where credential_id = ${credentialId}) as idempotency_keys,
      (select count(*)::int from revoked_tokens where jti = ${jti}) as revoked,
      (select md5(coalesce(string_agg(c::text, '|' order by c.id), '')) from customers c
        where c.organization_id = ${organizationId}) as customers_rows,
      (select md5(coalesce(string_agg(o::text, '|' order by o.id), '')) from orders o
        where o.organization_id = ${organizationId}) as orders_rows,
      (select md5(coalesce(string_agg(x::text, '|' order by x.id), '')) from transactions x
        where x.organization_id = ${organizationId}) as transactions_rows,
      (select md5(coalesce(string_agg(s::text, '|' order by s.id), '')) from ussd_sessions s
        where s.organization_id = ${organizationId}) as sessions_rows,
      (select md5(coalesce(string_agg(h::text, '|' order by h.customer_id, h.stock_id), '')) from holdings h
        where h.organization_id = ${organizationId}) as holdings_rows
  `);
  const rows = (result as unknown as { rows: Snapshot[] }).rows;
  return { ...rows[0]! };
}

/**
 * Labels of 4xx answers produced inside the handler: stored with their idempotency key (only
 * rejections before the handler are not: docs/decisions.md, Request pipeline).
 */
const HANDLER_REFUSALS = new Set([
  'Not found',
  'CUSTOMER_NOT_FOUND',
  'SESSION_NOT_FOUND',
  'SESSION_FORBIDDEN',
]);
const HANDLER_400_MESSAGES = new Set(['USSD session has expired', 'USSD session is no longer active']);

/**
 * Nothing written by a refused request. The one write allowed: the idempotency record of a refusal
 * the handler itself produced (a 404 replays as 404), never a domain row.
 */
export function writeProblems(before: Snapshot, after: Snapshot, status: number, body: unknown): string[] {
  if (status < 400) return [];
  const b = body as { error?: string; message?: string } | undefined;
  const storedRefusal =
    HANDLER_REFUSALS.has(b?.error ?? '') || (status === 400 && HANDLER_400_MESSAGES.has(b?.message ?? ''));
  const problems: string[] = [];
  for (const key of Object.keys(before)) {
    if (before[key] === after[key]) continue;
    if (key === 'idempotency_keys' && storedRefusal && Number(after[key]) === Number(before[key]) + 1)
      continue;
    problems.push(`${status} wrote ${key}: ${before[key]} → ${after[key]}`);
  }
  return problems;
}

/** Inputs tried across the reliability suites of this process (reported by each suite's afterAll). */
export const tally = { inputs: 0 };

/** Statuses seen per endpoint, printed by each property suite after its run. */
export class StatusTally {
  readonly seen: Record<string, Record<number, number>> = {};
  count(endpoint: string, status: number): void {
    const counts = this.seen[endpoint] ?? {};
    this.seen[endpoint] = counts;
    counts[status] = (counts[status] ?? 0) + 1;
  }
  toString(): string {
    return Object.entries(this.seen)
      .map(
        ([endpoint, counts]) =>
          `  ${endpoint}: ${Object.entries(counts)
            .map(([s, n]) => `${s}×${n}`)
            .join(' ')}`,
      )
      .join('\n');
  }
}
