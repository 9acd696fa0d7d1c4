import { randomBytes } from 'node:crypto';
import type { TestApp } from '@partner-api/testkit/app.ts';
import { adminInject } from '@partner-api/testkit/helpers.ts';
import { sql } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { one } from '../../src/db/query.ts';
import { type Browser, csrfOf, visit as visitAs } from './session-kit.ts';

/** A browser as the console sees it: its cookies, kept from each Set-Cookie. */
export type FormBrowser = {
  get(url: string): Promise<LightMyRequestResponse>;
  /** A form post; `csrf` is the session's token unless the form gives one. */
  post(url: string, form?: Record<string, string>): Promise<LightMyRequestResponse>;
  csrf: string;
};

export { csrfOf } from './session-kit.ts';

/** Adds an operator of `role` with a random name and signs it in through the console's forms. */
export async function signedIn(
  t: TestApp,
  role: 'viewer' | 'operator',
): Promise<FormBrowser & { id: string }> {
  const name = `${role}-${randomBytes(4).toString('hex')}`;
  const added = (await adminInject(t, 'POST', '/admin/operators', { name, role })).json() as {
    id: string;
    credential: string;
  };
  const cookies: Browser = { cookies: new Map() };
  const visit = (method: 'GET' | 'POST', url: string, form?: Record<string, string>) =>
    visitAs(t, cookies, method, url, form);
  const form = await visit('GET', '/console/sign-in');
  const res = await visit('POST', '/console/sign-in', {
    csrf: csrfOf(form),
    name,
    credential: added.credential,
  });
  if (res.statusCode !== 303) throw new Error(`sign-in answered ${res.statusCode}`);
  const browser = {
    id: added.id,
    csrf: csrfOf(await visit('GET', '/console')),
    get: (url: string) => visit('GET', url),
    post: (url: string, fields: Record<string, string> = {}) =>
      visit('POST', url, { csrf: browser.csrf, ...fields }),
  };
  return browser;
}

/** The newest audit row of a console route written for this operator about `targetId`. */
export const auditRow = (t: TestApp, route: string, operatorId: string, targetId: string) =>
  one<{ status: number; targetId: string | null; before: unknown; after: unknown; operatorName: string }>(
    t.ctx.database.db,
    sql`select status, target_id as "targetId", before, after, operator_name as "operatorName" from audit_log
  where route = ${route} and operator_id = ${operatorId} and target_id = ${targetId}
  order by at desc, id desc limit 1`,
  );

/** The `<tr>` of a table whose cells include `text` exactly (undefined when none). */
export const rowWith = (html: string, text: string) =>
  html.match(/<tr[^>]*>[\s\S]*?<\/tr>/g)?.find((row) => row.includes(`>${text}<`));

/** Whether a page carries one of the app's configured secrets (the admin token, JWT and callback secrets). */
export const carriesSecret = (t: TestApp, body: string) =>
  Object.values(t.ctx.secrets).some((s) => body.includes(s.split('\n')[1] ?? s));
