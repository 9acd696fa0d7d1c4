import { createId } from '@partner-api/contract';
import type { TestApp } from '@partner-api/testkit/app.ts';
import { adminInject } from '@partner-api/testkit/helpers.ts';
import { sql } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { run } from '../../src/db/query.ts';

/** A browser as inject sees it: the cookies it keeps. */
export type Browser = { cookies: Map<string, string>; ip?: string };

/** A request as a browser sends it: its cookies (and form), keeping what Set-Cookie answers. */
export async function visit(
  t: TestApp,
  browser: Browser,
  method: 'GET' | 'POST',
  url: string,
  form?: Record<string, string>,
): Promise<LightMyRequestResponse> {
  const res = await t.admin.inject({
    method,
    url,
    headers: {
      cookie: [...browser.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
      ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
    },
    payload: form ? new URLSearchParams(form).toString() : undefined,
    ...(browser.ip ? { remoteAddress: browser.ip } : {}),
  });
  for (const header of [res.headers['set-cookie'] ?? []].flat()) {
    const [pair] = header.split(';');
    const [name, value] = pair!.split('=') as [string, string];
    if (value && !/Max-Age=0/.test(header)) browser.cookies.set(name, value);
    else browser.cookies.delete(name);
  }
  return res;
}

export const csrfOf = (res: LightMyRequestResponse) =>
  /name="csrf" value="([^"]+)"/.exec(res.body)?.[1] ?? '';

/** The sign-in form fetched and posted; the answer of the post. */
export async function signIn(
  t: TestApp,
  name: string,
  credential: string,
  browser: Browser = { cookies: new Map() },
) {
  const form = await visit(t, browser, 'GET', '/console/sign-in');
  const res = await visit(t, browser, 'POST', '/console/sign-in', { csrf: csrfOf(form), name, credential });
  return { browser, res };
}

/** A new operator of `role` and a browser signed in as them. */
export async function signedIn(t: TestApp, role: 'viewer' | 'operator') {
  const name = `${role}-${Math.random().toString(36).slice(2, 10)}`;
  const created = (await adminInject(t, 'POST', '/admin/operators', { name, role })).json() as {
    id: string;
    credential: string;
  };
  const { browser, res } = await signIn(t, name, created.credential);
  if (res.statusCode !== 303) throw new Error(`sign-in answered ${res.statusCode}`);
  return { browser, name, id: created.id, credential: created.credential };
}

export type SeededSms = {
  msisdn: string;
  kind?: string;
  language?: string;
  state: string;
  attempts?: number;
  statusCode?: number;
  gatewayStatus?: string;
  failureReason?: string;
  createdAt: Date;
  deliveredAt?: Date;
};

/** An organization (by the admin API) with one customer per number and the given SMS rows. */
export async function seedSms(t: TestApp, organizationName: string, messages: SeededSms[]) {
  const org = (await adminInject(t, 'POST', '/admin/organizations', { name: organizationName })).json() as {
    id: string;
  };
  const db = t.ctx.database.db;
  const customers = new Map<string, string>();
  for (const [i, m] of messages.entries()) {
    let customerId = customers.get(m.msisdn);
    if (!customerId) {
      customerId = createId();
      customers.set(m.msisdn, customerId);
      await run(
        db,
        sql`insert into customers (id, organization_id, first_name, last_name, msisdn)
  values (${customerId}, ${org.id}, 'Test', 'Investor', ${m.msisdn})`,
      );
    }
    await run(
      db,
      sql`insert into sms_messages (id, organization_id, customer_id, msisdn, kind, event_key, language, text, state,
  attempts, status_code, gateway_status, failure_reason, created_at, updated_at, delivered_at)
  values (${createId()}, ${org.id}, ${customerId}, ${m.msisdn}, ${m.kind ?? 'TRADE_BUY'}, ${`seed:${createId()}:${i}`},
  ${m.language ?? 'en'}, ${'Bought 10 SCOM.'}, ${m.state}, ${m.attempts ?? 1}, ${m.statusCode ?? null},
  ${m.gatewayStatus ?? null}, ${m.failureReason ?? null}, ${m.createdAt.toISOString()}, ${m.createdAt.toISOString()},
  ${m.deliveredAt?.toISOString() ?? null})`,
    );
  }
  return { organizationId: org.id };
}
