import { randomBytes } from 'node:crypto';
import type { TestApp } from '@partner-api/testkit/app.ts';
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

/** A browser as the console's inject tests play it: the cookies it holds. */
export type Browser = { cookies: Map<string, string> };

/** A request as a browser sends it to the admin app: its cookies, and whatever Set-Cookie answers are kept. */
export async function visitAs(
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
  });
  for (const header of [res.headers['set-cookie'] ?? []].flat()) {
    const [pair] = header.split(';');
    const [name, value] = pair!.split('=') as [string, string];
    if (value && !/Max-Age=0/.test(header)) browser.cookies.set(name, value);
    else browser.cookies.delete(name);
  }
  return res;
}

/** The CSRF token of the first form on a page. */
export const csrfOf = (res: LightMyRequestResponse) =>
  /name="csrf" value="([^"]+)"/.exec(res.body)?.[1] ?? '';
