import { randomBytes } from 'node:crypto';
import type { TestApp } from '@partner-api/testkit/app.ts';
import { adminInject } from '@partner-api/testkit/helpers.ts';
import type { LightMyRequestResponse } from 'fastify';

/** Secret-looking provider settings: no console page may show them. */
export const PROVIDER_SECRETS = {
  MPESA_CONSUMER_KEY: `consumer-key-${randomBytes(6).toString('hex')}`,
  MPESA_CONSUMER_SECRET: `consumer-secret-${randomBytes(6).toString('hex')}`,
  MPESA_SHORTCODE: '174379',
  MPESA_PASSKEY: `passkey-${randomBytes(6).toString('hex')}`,
  MPESA_B2C_SHORTCODE: '600000',
  MPESA_INITIATOR_NAME: 'apiop',
  MPESA_SECURITY_CREDENTIAL: `security-credential-${randomBytes(6).toString('hex')}`,
  MPESA_CALLBACK_TOKEN: randomBytes(24).toString('hex'),
};

/** A browser as the console sees it: its cookies. */
export type Browser = { cookies: Map<string, string> };
export type Account = { id: string; name: string; credential: string };

/** The CSRF token of the first form on a page. */
export const csrfOf = (res: LightMyRequestResponse) =>
  /name="csrf" value="([^"]+)"/.exec(res.body)?.[1] ?? '';

/** An operator account made through the admin API. */
export async function addOperator(t: TestApp, name: string, role: 'viewer' | 'operator'): Promise<Account> {
  const res = await adminInject(t, 'POST', '/admin/operators', { name, role });
  return { name, ...(res.json() as { id: string; credential: string }) };
}

/**
 * Requests to the console on the admin app as a browser makes them (cookies kept from Set-Cookie,
 * forms url-encoded), on the app `app()` answers when called; every answer is kept in `pages` for the no-secret checks.
 */
export function consoleClient(app: () => TestApp) {
  const pages: LightMyRequestResponse[] = [];
  async function visit(browser: Browser, method: 'GET' | 'POST', url: string, form?: Record<string, string>) {
    const res = await app().admin.inject({
      method,
      url,
      headers: {
        cookie: [...browser.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
        ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      payload: form ? new URLSearchParams(form).toString() : undefined,
    });
    for (const header of [res.headers['set-cookie'] ?? []].flat()) {
      const [pair] = header.split(';');
      const [name, value] = pair!.split('=') as [string, string];
      if (value && !/Max-Age=0/.test(header)) browser.cookies.set(name, value);
      else browser.cookies.delete(name);
    }
    pages.push(res);
    return res;
  }
  async function signIn(name: string, credential: string) {
    const browser: Browser = { cookies: new Map() };
    const form = await visit(browser, 'GET', '/console/sign-in');
    const res = await visit(browser, 'POST', '/console/sign-in', { csrf: csrfOf(form), name, credential });
    return { browser, res };
  }
  /** Signs in and answers the browser with the session's CSRF token (read from the Overview). */
  async function session(account: Account) {
    const { browser } = await signIn(account.name, account.credential);
    const csrf = csrfOf(await visit(browser, 'GET', '/console'));
    return { browser, csrf };
  }
  return { pages, visit, signIn, session };
}
