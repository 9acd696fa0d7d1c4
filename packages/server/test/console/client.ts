import { randomBytes } from 'node:crypto';
import type { TestApp } from '@partner-api/testkit/app.ts';
import { adminInject } from '@partner-api/testkit/helpers.ts';
import type { LightMyRequestResponse } from 'fastify';
import { type Browser, csrfOf, visit as visitAs } from './session-kit.ts';

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

export type Account = { id: string; name: string; credential: string };
export { type Browser, csrfOf } from './session-kit.ts';

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
    const res = await visitAs(app(), browser, method, url, form);
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
