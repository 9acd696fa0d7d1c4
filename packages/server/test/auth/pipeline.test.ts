import { afterAll, beforeAll, describe } from 'vitest';
import { STORES, type TestApp, buildTestApp } from '../support/app.ts';
import { type RouteCase, authSuite } from '../support/auth-suite.ts';

/** Every authenticated route of the spec; each must pass the shared suite. */
export const AUTHENTICATED_ROUTES: RouteCase[] = [
  { name: 'GET /v1/oauth/me', mutating: false, build: async () => ({ method: 'GET', url: '/v1/oauth/me' }) },
  { name: 'POST /v1/oauth/revoke', mutating: false, build: async () => ({ method: 'POST', url: '/v1/oauth/revoke' }) },
];

describe.each(STORES)('authentication pipeline on %s', (store) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp(store);
  });
  afterAll(() => t.close());
  for (const route of AUTHENTICATED_ROUTES) authSuite(() => t, route);
});
