import { afterAll, beforeAll, describe } from 'vitest';
import { buildTestApp, STORES, type TestApp } from '../support/app.ts';
import { authSuite, type RouteCase } from '../support/auth-suite.ts';
import { type Partner, signedInject } from '../support/partner.ts';

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

/** Every authenticated route of the spec; each must pass the shared suite. */
export const AUTHENTICATED_ROUTES: RouteCase[] = [
  { name: 'GET /v1/oauth/me', mutating: false, build: async () => ({ method: 'GET', url: '/v1/oauth/me' }) },
  {
    name: 'POST /v1/oauth/revoke',
    mutating: false,
    build: async () => ({ method: 'POST', url: '/v1/oauth/revoke' }),
  },
  {
    name: 'GET /v1/customers',
    mutating: false,
    build: async () => ({ method: 'GET', url: '/v1/customers?page=1&limit=5' }),
  },
  {
    name: 'POST /v1/customers',
    mutating: true,
    build: async () => ({
      method: 'POST',
      url: '/v1/customers',
      body: { firstName: 'Ada', lastName: 'Lovelace' },
    }),
    alter: (body) => ({ ...body, lastName: 'King' }),
  },
  {
    name: 'GET /v1/customers/{id}',
    mutating: false,
    build: async (t, p) => ({ method: 'GET', url: `/v1/customers/${await newCustomer(t, p)}` }),
  },
  {
    name: 'PATCH /v1/customers/{id}',
    mutating: true,
    build: async (t, p) => ({
      method: 'PATCH',
      url: `/v1/customers/${await newCustomer(t, p)}`,
      body: { lastName: 'Byron' },
    }),
    alter: () => ({ lastName: 'King' }),
  },
  {
    name: 'GET /v1/payment/status/{orderId}',
    mutating: false,
    build: async () => ({ method: 'GET', url: '/v1/payment/status/cabcdefghijklmnopqrstuvwx' }),
  },
  {
    name: 'POST /v1/ussd/session',
    mutating: true,
    build: async (t, p) => ({
      method: 'POST',
      url: '/v1/ussd/session',
      body: { customerId: await newCustomer(t, p) },
    }),
    alter: () => ({ customerId: 'cabcdefghijklmnopqrstuvwx' }),
  },
  {
    name: 'POST /v1/ussd/process',
    mutating: true,
    build: async (t, p) => ({
      method: 'POST',
      url: '/v1/ussd/process',
      body: { sessionId: await newSession(t, p), choice: '1' },
    }),
    alter: (body) => ({ ...body, choice: '2' }),
  },
];

describe.each(STORES)('authentication pipeline on %s', (store) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp(store);
  });
  afterAll(() => t.close());
  for (const route of AUTHENTICATED_ROUTES) authSuite(() => t, route);
});
