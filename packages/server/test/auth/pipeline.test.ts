import { ErrorMessage } from '@partner-api/contract';
import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { authSuite, type RouteCase } from '@partner-api/testkit/auth-suite.ts';
import { type Partner, signedInject } from '@partner-api/testkit/partner.ts';
import { authenticatedRoutes, listRoutes, urlOf } from '@partner-api/testkit/routes.ts';
import { afterAll, beforeAll, expect, it } from 'vitest';

async function newCustomer(t: TestApp, p: Partner): Promise<string> {
  const res = await signedInject(t.app, p, {
    method: 'POST',
    url: '/v1/customers',
    body: { firstName: 'Auth', lastName: 'Suite', msisdn: '254712345678' },
  });
  if (res.statusCode !== 201) throw new Error(`customer create failed: ${res.body}`);
  return res.json().data.id;
}

async function newSession(t: TestApp, p: Partner): Promise<string> {
  const res = await signedInject(t.app, p, {
    method: 'POST',
    url: '/v1/ussd/session',
    body: { customerId: await newCustomer(t, p) },
  });
  if (res.statusCode !== 201) throw new Error(`session create failed: ${res.body}`);
  return res.json().data.sessionId;
}

/**
 * A valid request to each authenticated route, keyed "METHOD /v1/path/{param}" as the OpenAPI
 * document names it. Idempotent routes also say how to change the payload (for the 422 rule).
 */
const REQUEST_BUILDERS: Record<string, Pick<RouteCase, 'build' | 'alter'>> = {
  'GET /v1/oauth/me': { build: async () => ({ method: 'GET', url: '/v1/oauth/me' }) },
  'POST /v1/oauth/revoke': { build: async () => ({ method: 'POST', url: '/v1/oauth/revoke' }) },
  'GET /v1/customers': { build: async () => ({ method: 'GET', url: '/v1/customers?page=1&limit=5' }) },
  'POST /v1/customers': {
    build: async () => ({
      method: 'POST',
      url: '/v1/customers',
      body: { firstName: 'Ada', lastName: 'Lovelace' },
    }),
    alter: (body) => ({ ...body, lastName: 'King' }),
  },
  'GET /v1/customers/{id}': {
    build: async (t, p) => ({ method: 'GET', url: `/v1/customers/${await newCustomer(t, p)}` }),
  },
  'PATCH /v1/customers/{id}': {
    build: async (t, p) => ({
      method: 'PATCH',
      url: `/v1/customers/${await newCustomer(t, p)}`,
      body: { lastName: 'Byron' },
    }),
    alter: () => ({ lastName: 'King' }),
  },
  'GET /v1/payment/status/{orderId}': {
    build: async () => ({ method: 'GET', url: '/v1/payment/status/cabcdefghijklmnopqrstuvwx' }),
  },
  'POST /v1/ussd/session': {
    build: async (t, p) => ({
      method: 'POST',
      url: '/v1/ussd/session',
      body: { customerId: await newCustomer(t, p) },
    }),
    alter: () => ({ customerId: 'cabcdefghijklmnopqrstuvwx' }),
  },
  'POST /v1/ussd/process': {
    build: async (t, p) => ({
      method: 'POST',
      url: '/v1/ussd/process',
      body: { sessionId: await newSession(t, p), choice: '1' },
    }),
    alter: (body) => ({ ...body, choice: '2' }),
  },
};

// The routes come from the app itself: one app is built to read them before the suites are declared.
const ROUTES = await (async () => {
  const t = await buildTestApp('pglite');
  try {
    return authenticatedRoutes(t.app);
  } finally {
    await t.close();
  }
})();

/** A route without a request builder still gets a test: one that fails and names it. */
const missingBuilder = (name: string): Pick<RouteCase, 'build'> => ({
  build: async () => {
    throw new Error(`${name} is authenticated but has no request builder in REQUEST_BUILDERS`);
  },
});

describeStores('authentication pipeline on %s', (store) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp(store);
  });
  afterAll(() => t.close());

  it('every authenticated route of the app has a request builder, and every builder a route', () => {
    const names = authenticatedRoutes(t.app).map((r) => r.name);
    expect(names.length).toBeGreaterThan(0);
    const unbuilt = names.filter((name) => !(name in REQUEST_BUILDERS));
    expect(unbuilt, 'authenticated routes without a request builder').toEqual([]);
    const stale = Object.keys(REQUEST_BUILDERS).filter((name) => !names.includes(name));
    expect(stale, 'request builders of routes the app does not have').toEqual([]);
    const idempotent = authenticatedRoutes(t.app).filter((r) => r.idempotent);
    const unaltered = idempotent.filter((r) => !REQUEST_BUILDERS[r.name]?.alter).map((r) => r.name);
    expect(unaltered, 'idempotent routes whose builder has no alter').toEqual([]);
  });

  it('every other /v1 route of the app serves a caller without a token (so none escapes the suite)', async () => {
    const authenticated = new Set(authenticatedRoutes(t.app).map((r) => r.name));
    const others = listRoutes(t.app).filter(
      (route) => route.includes(' /v1/') && !authenticated.has(route.replace(/:([A-Za-z0-9_]+)/g, '{$1}')),
    );
    expect(others.length).toBeGreaterThan(0);
    for (const route of others) {
      const [method, pattern] = route.split(' ') as ['GET', string];
      const res = await t.app.inject({ method, url: urlOf(pattern, 'cabcdefghijklmnopqrstuvwx') });
      expect(res.statusCode === 401 && res.json().message === ErrorMessage.tokenRequired, route).toBe(false);
    }
  });

  for (const route of ROUTES) {
    authSuite(() => t, {
      name: route.name,
      mutating: route.idempotent,
      ...(REQUEST_BUILDERS[route.name] ?? missingBuilder(route.name)),
    });
  }
});
