/**
 * Property-based tests of the operator's admin API (its own listener, bearer ADMIN_TOKEN): every
 * route under random bodies, query strings and path ids. For each answer: a status that route may
 * give, one of the public API's three error shapes with the status's label, no 500 but the
 * body-parsing rules' bare one, no stack or SQL, no secret (the admin token, the service's keys, a
 * client secret anywhere but the 201 that creates it, a stored hash), and nothing written by a
 * refused request (a digest of every table the admin API can touch, before and after). Without the
 * token, or with a wrong one, every route answers 401 and writes nothing.
 *
 * On PostgreSQL the suite runs in a database of its own: the admin API writes global tables
 * (organizations, the stocks catalog) that other suites share, and its snapshot must see only its
 * own writes. PROPERTY_RUNS (default 60 per property) and PROPERTY_SEED make a run reproducible.
 */
import { generateKeyPairSync } from 'node:crypto';
import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { ownDatabase } from '@partner-api/testkit/database.ts';
import { createOrderWithTransactions } from '@partner-api/testkit/orders.ts';
import { listRoutes, urlOf } from '@partner-api/testkit/routes.ts';
import { sql } from 'drizzle-orm';
import fc from 'fast-check';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { upsertStocks } from '../../src/services/stocks/upsert.ts';
import {
  bounded,
  contentType,
  encode,
  type Field,
  field,
  huge,
  objectBody,
  pathId,
  printable,
  propertyOptions,
  queryString,
  rawBody,
  scalar,
  sometimes,
  text,
  weird,
} from './arbitraries.ts';
import { judge, type Snapshot, StatusTally, tally, writeProblems } from './oracle.ts';

const assertOptions = propertyOptions(60);
// Some inputs create credentials (an scrypt each) on a loaded 2-core CI machine.
vi.setConfig({ testTimeout: 240_000, hookTimeout: 120_000 });

/** The statuses each admin route may answer (no rate limit, no allowlist: no 429, no 403). */
const ROUTES = {
  'organizations.create': [201, 400, 401],
  'organizations.list': [200, 401],
  'organizations.patch': [200, 400, 401, 404],
  'credentials.create': [201, 400, 401, 404],
  'credentials.list': [200, 400, 401],
  'credentials.signingKey': [200, 400, 401, 404],
  'credentials.patch': [200, 400, 401, 404],
  'stocks.upsert': [200, 400, 401],
  'orders.list': [200, 400, 401],
  'sms.list': [200, 400, 401],
  'transactions.settle': [200, 400, 401, 404, 409],
  'transactions.show': [200, 400, 401, 404],
  'payments.stuck': [200, 400, 401],
  'payments.reconcile': [200, 400, 401],
  'payments.resolve': [200, 400, 401, 404, 409],
  'markets.session': [200, 400, 401],
  'holidays.list': [200, 400, 401],
  'holidays.set': [200, 400, 401],
  'holidays.remove': [204, 400, 401, 404],
  'prices.edit': [201, 400, 401, 404],
  'prices.held': [200, 401],
  'prices.confirm': [200, 400, 401, 404],
  'prices.reject': [200, 400, 401, 404],
  'prices.series': [200, 400, 401],
  'prices.daily': [200, 400, 401, 404],
  'book.position': [200, 400, 401, 404],
  'book.show': [200, 400, 401],
  'ledger.check': [200, 400, 401],
  'reports.statements': [200, 400, 401],
  'reports.correct': [201, 400, 401, 404, 409],
  'operators.create': [201, 400, 401, 409],
  'operators.list': [200, 401],
  'operators.deactivate': [200, 400, 401, 404],
  'audit.list': [200, 400, 401],
  metrics: [200, 401],
} as const satisfies Record<string, readonly number[]>;
type Route = keyof typeof ROUTES;

/** Each admin route: its name in ROUTES, its method and path (compared with the admin app's own routes). */
const ADMIN_ROUTES: [Route, InjectOptions['method'], string][] = [
  ['organizations.create', 'POST', '/admin/organizations'],
  ['organizations.list', 'GET', '/admin/organizations'],
  ['organizations.patch', 'PATCH', '/admin/organizations/{org}'],
  ['credentials.create', 'POST', '/admin/organizations/{org}/credentials'],
  ['credentials.list', 'GET', '/admin/credentials'],
  ['credentials.signingKey', 'PUT', '/admin/credentials/{credential}/signing-key'],
  ['credentials.patch', 'PATCH', '/admin/credentials/{credential}'],
  ['stocks.upsert', 'POST', '/admin/stocks'],
  ['orders.list', 'GET', '/admin/orders'],
  ['sms.list', 'GET', '/admin/sms'],
  ['transactions.settle', 'POST', '/admin/transactions/{transaction}/settle'],
  ['transactions.show', 'GET', '/admin/transactions/{transaction}'],
  ['payments.stuck', 'GET', '/admin/payments/stuck'],
  ['payments.reconcile', 'POST', '/admin/payments/reconcile'],
  ['payments.resolve', 'POST', '/admin/payments/{transaction}/resolve'],
  ['markets.session', 'GET', '/admin/markets/{market}/session'],
  ['holidays.list', 'GET', '/admin/markets/{market}/holidays'],
  ['holidays.set', 'PUT', '/admin/markets/{market}/holidays/{date}'],
  ['holidays.remove', 'DELETE', '/admin/markets/{market}/holidays/{date}'],
  ['prices.edit', 'POST', '/admin/prices'],
  ['prices.held', 'GET', '/admin/prices/held'],
  ['prices.confirm', 'POST', '/admin/prices/{price}/confirm'],
  ['prices.reject', 'POST', '/admin/prices/{price}/reject'],
  ['prices.series', 'GET', '/admin/instruments/{symbol}/prices'],
  ['prices.daily', 'GET', '/admin/instruments/{symbol}/prices/daily'],
  ['book.position', 'PUT', '/admin/book/positions/{symbol}/{date}'],
  ['book.show', 'GET', '/admin/book'],
  ['ledger.check', 'GET', '/admin/ledger/check'],
  ['reports.statements', 'POST', '/admin/reports/statements'],
  ['reports.correct', 'POST', '/admin/reports/{report}/corrections'],
  ['operators.create', 'POST', '/admin/operators'],
  ['operators.list', 'GET', '/admin/operators'],
  ['operators.deactivate', 'POST', '/admin/operators/{operator}/deactivate'],
  ['audit.list', 'GET', '/admin/audit'],
  ['metrics', 'GET', '/metrics'],
];

/** Every table an admin route writes or reads; counts and a digest of the rows. */
const TABLES = [
  'organizations',
  'credentials',
  'stocks',
  'orders',
  'transactions',
  'holdings',
  'customers',
  'prices',
  'market_holidays',
  'executions',
  'pooled_positions',
  'ledger_entries',
  'sms_messages',
  'operators',
];
const SNAPSHOT_SQL = sql.raw(
  `select ${TABLES.map(
    (table) =>
      `(select count(*)::int from ${table}) as ${table}, ` +
      `(select md5(coalesce(string_agg(r::text, '|' order by r::text), '')) from ${table} r) as ${table}_rows`,
  ).join(', ')}`,
);

// ---------- arbitraries ----------

const SAMPLE_KEY = generateKeyPairSync('ed25519').publicKey;
const RSA_PEM = generateKeyPairSync('rsa', { modulusLength: 1024 })
  .publicKey.export({ format: 'pem', type: 'spki' })
  .toString();
const freshPem = fc
  .constant(null)
  .map(() => generateKeyPairSync('ed25519').publicKey.export({ format: 'pem', type: 'spki' }).toString());
const validKey = fc.oneof(
  freshPem,
  fc.constant(SAMPLE_KEY.export({ format: 'jwk' }) as Record<string, unknown>),
  fc.constant(JSON.stringify(SAMPLE_KEY.export({ format: 'jwk' }))),
);
const anyKey = fc.oneof(
  validKey,
  fc.constantFrom(
    RSA_PEM,
    '-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----',
    '{"kty":"OKP","crv":"Ed25519"}',
    '{"kty":"OKP","crv":"X25519","x":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}',
    '{',
  ),
  fc.dictionary(fc.constantFrom('kty', 'crv', 'x', 'd', 'n', 'e'), scalar, { maxKeys: 4 }),
);
const validKeyId = fc.oneof(fc.constantFrom('acme-2026-01', ' k '), bounded(200));

const IPS = ['203.0.113.0/24', '10.0.0.1', '::1', '2001:db8::/32', '0.0.0.0/0', '198.51.100.7/32'];
const validIps = fc.array(fc.constantFrom(...IPS), { maxLength: 3 });
const anyIps = fc.oneof(
  validIps,
  fc.array(
    fc.oneof(fc.constantFrom(...IPS), fc.constantFrom('10.0.0.1/33', '1.2.3', '::1/129', '256.0.0.1'), text),
    { maxLength: 3 },
  ),
  fc.integer({ min: 101, max: 120 }).map((n) => Array.from({ length: n }, () => '10.0.0.1')),
);

/** Dates as the operator sends them, and every JavaScript date from -271821 to +275760 (ISO or millis). */
const validDate = fc.option(
  fc
    .date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true })
    .map((d) => d.toISOString()),
  { nil: null },
);
const anyDate = fc.oneof(
  validDate,
  fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
  fc.integer({ min: -8_640_000_000_000_000, max: 8_640_000_000_000_000 }),
  fc.constantFrom(
    '9999-12-31T23:59:59.999Z',
    '+010000-01-01T00:00:00.000Z',
    '+275760-09-13T00:00:00.000Z',
    '-271821-04-20T00:00:00.000Z',
    '0000-01-01',
    '-004714-11-23T00:00:00Z',
    '2026-02-30',
    'tomorrow',
    '',
  ),
);

const optional = (max: number) =>
  field(fc.option(bounded(max), { nil: null }), fc.oneof(fc.string({ maxLength: max + 10 }), huge));
const organizationFields: Record<string, Field> = {
  name: field(fc.oneof(fc.constantFrom('Acme Telco', ' Ñandú Bank ', '李'), bounded(200)), fc.string()),
  description: optional(1000),
  website: optional(500),
  email: optional(320),
  phone: optional(40),
  address: optional(500),
};
const credentialFields: Record<string, Field> = {
  name: field(bounded(200), fc.string({ maxLength: 210 })),
  publicKey: field(validKey, anyKey),
  keyId: field(validKeyId, fc.string({ maxLength: 210 })),
  trustedIps: field(validIps, anyIps),
  expiresAt: field(validDate, anyDate),
};
const settleFields: Record<string, Field> = {
  status: field(
    fc.constantFrom('SUCCESS', 'FAILED'),
    fc.constantFrom('SUCCESS', 'FAILED', 'PENDING', 'success'),
  ),
  reason: field(bounded(500), fc.string({ maxLength: 510 })),
};
const stockFields: Record<string, Field> = {
  symbol: field(
    fc.stringMatching(/^Q[A-Z0-9]{1,6}(\.[A-Z0-9]{1,3})?$/),
    fc.oneof(fc.stringMatching(/^ ?[a-zA-Z0-9.]{0,14} ?$/), fc.constantFrom('ß', 'ı', 'ǆ')),
  ),
  name: field(bounded(120), fc.string({ maxLength: 130 })),
  price: field(
    fc.oneof(
      fc.constantFrom('1', '25.5', '0.0001', '99999999999999.9999'),
      fc.integer({ min: 1, max: 1_000_000 }),
    ),
    fc.oneof(
      fc.double(),
      fc.constantFrom('0', '-1', '1e3', '1.23456', '100000000000000', '0.00001', ' 1', '１'),
    ),
  ),
  currency: field(fc.constantFrom('KES', 'usd', ' ugx '), fc.string({ maxLength: 5 })),
  isActive: field(fc.boolean()),
};
/** A body with every field valid (most random bodies of the wide routes are refused). */
const validRecord = (fields: Record<string, Field>, required: string[]) =>
  fc.record(Object.fromEntries(Object.entries(fields).map(([k, f]) => [k, f.valid])), {
    requiredKeys: required,
  });
/** The stocks import takes an array of stocks: arrays of stock bodies, a bare object, or any raw body. */
const stocksBody = fc.oneof(
  {
    weight: 6,
    arbitrary: fc
      .array(objectBody(stockFields, ['symbol', 'name', 'price']), { maxLength: 4 })
      .map((a) => JSON.stringify(a)),
  },
  {
    weight: 4,
    arbitrary: fc
      .array(validRecord(stockFields, ['symbol', 'name', 'price']), { minLength: 1, maxLength: 3 })
      .map((a) => JSON.stringify(a)),
  },
  {
    weight: 1,
    arbitrary: fc.constant(
      JSON.stringify(Array.from({ length: 1001 }, (_, i) => ({ symbol: `QB${i}`, name: 'n', price: 1 }))),
    ),
  },
  { weight: 3, arbitrary: rawBody(stockFields) },
);
/** A JSON text with one key given twice (JSON.parse keeps the last). */
const duplicateKeys = (fields: Record<string, Field>) =>
  fc.tuple(fc.constantFrom(...Object.keys(fields)), scalar, objectBody(fields)).map(([key, first, body]) => {
    const json = JSON.stringify(body);
    const dup = `${JSON.stringify(key)}:${JSON.stringify(first)}`;
    return json === '{}' ? `{${dup}}` : `{${dup},${json.slice(1)}`;
  });
const bodyOf = (fields: Record<string, Field>, required: string[] = [], together: string[] = required) =>
  fc.oneof(
    { weight: 7, arbitrary: rawBody(fields, required) },
    { weight: 2, arbitrary: validRecord(fields, together).map((b) => JSON.stringify(b)) },
    { weight: 1, arbitrary: duplicateKeys(fields) },
  );

/** Header changes besides the token: junk or duplicated content type and request id, unknown headers. */
const extraHeaders = fc.oneof(
  { weight: 6, arbitrary: fc.constant({}) },
  {
    weight: 1,
    arbitrary: fc.record(
      {
        'content-type': fc.constant(['application/json', 'text/plain']),
        'x-request-id': fc.oneof(printable, fc.constant(['a', 'b'])),
        'x-unknown-header': fc.oneof(printable, fc.constant('x'.repeat(8000))),
      },
      { requiredKeys: [] },
    ),
  },
);

// ---------- the suite ----------

describeStores('every admin route under random input, on %s', (store) => {
  let t: TestApp;
  let database: Awaited<ReturnType<typeof ownDatabase>>;
  const ids = {
    orgs: [] as string[],
    credentials: [] as string[],
    pending: [] as string[],
    order: '',
    stock: '',
  };
  /** Client secrets handed out so far: none may appear in any later answer. */
  const clientSecrets: string[] = [];
  let inputs = 0;
  const statuses = new StatusTally();

  const token = () => t.ctx.secrets.adminToken;
  const authorized = (extra: Record<string, unknown> = {}) => ({
    authorization: `Bearer ${token()}`,
    ...extra,
  });

  beforeAll(async () => {
    database = await ownDatabase(store, 'admin_properties');
    t = await buildTestApp(store, database.env);
    for (const name of ['Org A', 'Org B']) {
      const org = await t.admin.inject({
        method: 'POST',
        url: '/admin/organizations',
        headers: authorized(),
        payload: { name },
      });
      expect(org.statusCode, org.body).toBe(201);
      ids.orgs.push(org.json().id);
      const credential = await t.admin.inject({
        method: 'POST',
        url: `/admin/organizations/${org.json().id}/credentials`,
        headers: authorized(),
        payload: { name: 'prod' },
      });
      expect(credential.statusCode, credential.body).toBe(201);
      ids.credentials.push(credential.json().id);
      clientSecrets.push(credential.json().clientSecret);
    }
    // Pending collections of BUY orders of organization A: settling them is the 200 of the settle route.
    for (let i = 0; i < 12; i += 1) {
      const seeded = await createOrderWithTransactions(t.ctx.database.db, ids.orgs[0]!, [
        { type: 'INCOMING', amount: '1000.00' },
      ]);
      ids.pending.push(...seeded.transactionIds);
      ids.order = seeded.orderId;
    }
  });

  afterAll(async () => {
    tally.inputs += inputs;
    process.stdout.write(
      `[reliability] ${store}: admin inputs tried: ${inputs}; statuses seen:\n${statuses}\n`,
    );
    await t?.close();
    await database?.drop();
  });

  /** Requests run one at a time and nothing else writes to this store: the snapshot after one is the one before the next. */
  let lastSnapshot: Snapshot | undefined;
  async function tables(fresh = false): Promise<Snapshot> {
    if (!fresh && lastSnapshot) return lastSnapshot;
    const result = await t.ctx.database.db.execute(SNAPSHOT_SQL);
    lastSnapshot = { ...(result as unknown as { rows: Snapshot[] }).rows[0]! };
    return lastSnapshot;
  }

  /** Secrets that no answer may carry (a new client secret only in the 201 that creates it). */
  function secretProblems(route: Route, res: LightMyRequestResponse): string[] {
    const text = `${JSON.stringify(res.headers)}\n${res.body}`;
    const { adminToken, jwtSecret, providerCallbackSecret, webhookSigningKey } = t.ctx.secrets;
    const problems: string[] = [];
    const pemBody = webhookSigningKey.split('\n')[1] ?? webhookSigningKey;
    for (const [name, secret] of Object.entries({ adminToken, jwtSecret, providerCallbackSecret, pemBody }))
      if (text.includes(secret)) problems.push(`leaks ${name}`);
    for (const secret of clientSecrets) if (text.includes(secret)) problems.push('leaks a client secret');
    if (/secretHash|secret_hash|scrypt\$/.test(text)) problems.push('leaks a secret hash');
    if (route === 'credentials.create' && res.statusCode === 201) {
      const created = res.json() as { clientSecret?: unknown };
      if (typeof created.clientSecret !== 'string') problems.push('201 without its client secret');
      else clientSecrets.push(created.clientSecret);
    }
    if (route === 'operators.create' && res.statusCode === 201) {
      const created = res.json() as { credential?: unknown };
      if (typeof created.credential !== 'string') problems.push('201 without its credential');
      else clientSecrets.push(created.credential);
    }
    return problems;
  }

  /** Sends, judges, and compares every table around a refused request. */
  async function check(
    route: Route,
    request: InjectOptions,
    routable = true,
  ): Promise<LightMyRequestResponse> {
    inputs += 1;
    const before = await tables();
    const res = await t.admin.inject(request);
    const after = await tables(true);
    const payload = typeof request.payload === 'string' ? request.payload : undefined;
    const verdict = judge({ name: route, allowed: ROUTES[route] }, res, { payload, routable });
    statuses.count(route, res.statusCode);
    const problems = [
      ...verdict.problems,
      ...writeProblems(before, after, res.statusCode, verdict.body),
      ...secretProblems(route, res),
    ];
    if (problems.length > 0) {
      throw new Error(
        `${route}: ${problems.join('; ')}\n  ${request.method} ${String(request.url).slice(0, 200)}\n  headers ${JSON.stringify(request.headers).replaceAll(token(), '<admin token>').slice(0, 300)}\n  payload ${String(payload).slice(0, 300)}\n  → ${res.statusCode} ${res.body.slice(0, 300)}`,
      );
    }
    return res;
  }

  const run = <T>(property: fc.IAsyncProperty<T>) => fc.assert(property, assertOptions);
  const at = (prefix: string, known: string[], suffix = '') =>
    pathId(known).map((p) => ({ url: `${prefix}${p.segment}${suffix}`, routable: p.routable }));

  /** A route with a body: random body, content type and extra headers, sent with the admin token. */
  function withBody(
    route: Route,
    method: 'POST' | 'PUT' | 'PATCH',
    target: fc.Arbitrary<{ url: string; routable: boolean }>,
    body: fc.Arbitrary<string | undefined>,
  ) {
    return run(
      fc.asyncProperty(
        fc.record({ target, body, contentType, extra: extraHeaders }),
        async ({ target: { url, routable }, body: payload, contentType: type, extra }) => {
          const headers = authorized(type === undefined ? extra : { 'content-type': type, ...extra });
          await check(
            route,
            { method, url, headers: headers as InjectOptions['headers'], payload },
            routable,
          );
        },
      ),
    );
  }

  /** A GET route: random query string, sometimes a body, sent with the admin token. */
  function reading(route: Route, path: string, query: fc.Arbitrary<string>) {
    return run(
      fc.asyncProperty(
        fc.record({ query, body: sometimes(rawBody({})), extra: extraHeaders }),
        async ({ query: q, body, extra }) => {
          const headers = authorized(body ? { 'content-type': 'application/json', ...extra } : extra);
          const url = `${path}${q ? `?${q}` : ''}`;
          await check(route, {
            method: 'GET',
            url,
            headers: headers as InjectOptions['headers'],
            payload: body ?? undefined,
          });
        },
      ),
    );
  }

  const organizationQuery = (keys: string[]) =>
    fc.oneof(
      queryString(keys),
      fc
        .tuple(fc.constantFrom(...ids.orgs, 'c000000000000000000000000'), fc.integer({ min: -1, max: 1001 }))
        .map(([org, limit]) => `organizationId=${org}&limit=${limit}`),
      fc.constantFrom(...ids.orgs).map((org) => `organizationId=${org}&organizationId=${org}`),
    );

  it('POST /admin/organizations', () =>
    withBody(
      'organizations.create',
      'POST',
      fc.constant({ url: '/admin/organizations', routable: true }),
      bodyOf(organizationFields, ['name']),
    ));

  it('GET /admin/organizations', () =>
    reading('organizations.list', '/admin/organizations', queryString(['name', 'page'])));

  it('PATCH /admin/organizations/{id}', () =>
    withBody(
      'organizations.patch',
      'PATCH',
      at('/admin/organizations/', [ids.orgs[0]!, ids.orgs[1]!, ids.credentials[0]!, ids.order]),
      bodyOf({ ...organizationFields, isActive: field(fc.boolean()) }),
    ));

  it('POST /admin/organizations/{id}/credentials', () =>
    withBody(
      'credentials.create',
      'POST',
      at('/admin/organizations/', [ids.orgs[0]!, ids.orgs[1]!, ids.credentials[0]!], '/credentials'),
      bodyOf(credentialFields, ['name'], ['name', 'publicKey', 'keyId']),
    ));

  it('GET /admin/credentials', () =>
    reading('credentials.list', '/admin/credentials', organizationQuery(['organizationId'])));

  it('PUT /admin/credentials/{id}/signing-key', () =>
    withBody(
      'credentials.signingKey',
      'PUT',
      at('/admin/credentials/', [ids.credentials[0]!, ids.credentials[1]!, ids.orgs[0]!], '/signing-key'),
      bodyOf({ publicKey: credentialFields.publicKey!, keyId: credentialFields.keyId! }, [
        'publicKey',
        'keyId',
      ]),
    ));

  it('PATCH /admin/credentials/{id}', () =>
    withBody(
      'credentials.patch',
      'PATCH',
      at('/admin/credentials/', [ids.credentials[0]!, ids.credentials[1]!, ids.orgs[0]!]),
      bodyOf({
        trustedIps: credentialFields.trustedIps!,
        isActive: field(fc.boolean()),
        expiresAt: credentialFields.expiresAt!,
      }),
    ));

  it('POST /admin/stocks', () =>
    withBody(
      'stocks.upsert',
      'POST',
      fc.constant({ url: '/admin/stocks', routable: true }),
      fc.oneof({ weight: 9, arbitrary: stocksBody }, { weight: 1, arbitrary: duplicateKeys(stockFields) }),
    ));

  it('GET /admin/instruments/{symbol}/prices/daily', async () => {
    await upsertStocks(t.ctx.database.db, [
      { symbol: 'QDAILY', name: 'Daily Bars', price: '10', currency: 'KES' },
    ]);
    lastSnapshot = undefined;
    const day = fc
      .date({ min: new Date('1900-01-01'), max: new Date('9999-12-31'), noInvalidDate: true })
      .map((d) => d.toISOString().slice(0, 10));
    const query = fc.oneof(
      queryString(['from', 'to']),
      fc.tuple(day, day).map(([from, to]) => `from=${from}&to=${to}`),
      day.map((to) => `to=${to}`),
    );
    await run(
      fc.asyncProperty(
        fc.record({ symbol: fc.constantFrom('QDAILY', 'qdaily', 'NOPE'), query }),
        async ({ symbol, query: q }) => {
          await check('prices.daily', {
            method: 'GET',
            url: `/admin/instruments/${symbol}/prices/daily?${q}`,
            headers: authorized(),
          });
        },
      ),
    );
  });

  it('GET /admin/orders', () =>
    reading('orders.list', '/admin/orders', organizationQuery(['organizationId', 'limit'])));

  it('GET /admin/sms', () =>
    reading(
      'sms.list',
      '/admin/sms',
      fc.oneof(
        organizationQuery(['organizationId', 'customerId', 'state', 'msisdn', 'limit']),
        fc
          .tuple(
            fc.constantFrom('QUEUED', 'SENDING', 'SENT', 'DELIVERED', 'REFUSED', 'FAILED', 'sent', ''),
            fc.constantFrom('254712000001', '2547', 'x'.repeat(20), '+254712000001'),
          )
          .map(([state, msisdn]) => `state=${state}&msisdn=${encodeURIComponent(msisdn)}`),
      ),
    ));

  it('POST /admin/transactions/{id}/settle', () =>
    withBody(
      'transactions.settle',
      'POST',
      at('/admin/transactions/', [...ids.pending, ids.order, ids.orgs[0]!], '/settle'),
      bodyOf(settleFields, ['status']),
    ));

  it('POST /admin/operators', () =>
    withBody(
      'operators.create',
      'POST',
      fc.constant({ url: '/admin/operators', routable: true }),
      bodyOf(
        {
          name: field(
            fc.oneof(fc.constantFrom('ada', ' Ñandú ', '李'), bounded(100)),
            fc.string({ maxLength: 110 }),
          ),
          role: field(fc.constantFrom('viewer', 'operator'), fc.constantFrom('admin', 'Viewer', '', 'root')),
        },
        ['name', 'role'],
      ),
    ));

  it('GET /admin/operators', () => reading('operators.list', '/admin/operators', queryString(['name'])));

  it('POST /admin/operators/{id}/deactivate', async () => {
    const created = await t.admin.inject({
      method: 'POST',
      url: '/admin/operators',
      headers: authorized(),
      payload: { name: `deactivated-${ids.orgs[0]}`, role: 'viewer' },
    });
    const operator = (created.json() as { id: string }).id;
    await tables(true); // the snapshot a refused deactivation is compared with includes this operator
    await withBody(
      'operators.deactivate',
      'POST',
      at('/admin/operators/', [operator, ids.orgs[0]!], '/deactivate'),
      fc.option(rawBody({}), { nil: undefined }),
    );
  });

  it('GET /admin/audit', () =>
    reading(
      'audit.list',
      '/admin/audit',
      fc.oneof(
        queryString(['actor', 'route', 'from', 'to', 'limit']),
        fc
          .tuple(
            fc.constantFrom('admin-token', 'ada', '/admin/operators', ''),
            fc.oneof(fc.integer({ min: -1, max: 1001 }).map(String), anyDate.map(String)),
          )
          .map(
            ([actor, value]) =>
              `actor=${encodeURIComponent(actor)}&limit=${value}&from=${encodeURIComponent(value)}`,
          ),
      ),
    ));

  it('the route table names every route the admin app registers, and no other', () => {
    const shape = (route: string) => urlOf(route, '{}');
    const table = ADMIN_ROUTES.map(([, method, path]) => shape(`${method} ${path}`));
    // The console's pages authenticate by session, not by token: test/console covers them.
    const registered = listRoutes(t.admin)
      .filter((route) => !route.split(' ')[1]!.startsWith('/console'))
      .map(shape);
    expect(
      registered.filter((route) => !table.includes(route)),
      'admin routes missing from ADMIN_ROUTES',
    ).toEqual([]);
    expect(
      table.filter((route) => !registered.includes(route)),
      'ADMIN_ROUTES entries the admin app lacks',
    ).toEqual([]);
  });

  it('without the admin token, or with a wrong one, every route answers 401 and writes nothing', async () => {
    type Wrong = (good: string) => string | string[] | undefined;
    const wrong: fc.Arbitrary<Wrong> = fc.oneof(
      fc.constantFrom<Wrong>(
        () => undefined,
        () => '',
        () => 'Bearer ',
        () => 'Bearer wrong-token',
        (g) => `Bearer ${g}x`,
        (g) => `Bearer ${g.slice(0, -1)}`,
        (g) => `Bearer ${g.slice(0, -1)}${g.at(-1) === '0' ? '1' : '0'}`,
        (g) => `Bearer ${g.toUpperCase()}`,
        (g) => g,
        (g) => `Basic ${g}`,
        (g) => `bearer ${g}`,
        (g) => `Bearer  ${g}`,
        (g) => `Bearer ${g} `,
        (g) => `Bearer ${g}\u0000`,
        () => `Bearer ${'x'.repeat(8000)}`,
        (g) => [`Bearer ${g}x`, `Bearer ${g}x`],
        (g) => ['Bearer wrong-token', `Bearer ${g}`],
      ),
      printable.map(
        (v): Wrong =>
          () =>
            v,
      ),
      weird
        .filter((w) => /^[\x20-\x7e]*$/.test(w))
        .map(
          (v): Wrong =>
            () =>
              `Bearer ${v}`,
        ),
    );
    await run(
      fc.asyncProperty(
        fc.record({
          route: fc.constantFrom(...ADMIN_ROUTES),
          id: fc.oneof(
            fc.constantFrom(...ids.orgs, ...ids.credentials, ...ids.pending),
            fc.string({ minLength: 1 }),
          ),
          body: fc.oneof(bodyOf(organizationFields, ['name']), bodyOf(settleFields), stocksBody),
          wrong,
          field: fc.constantFrom('authorization', 'Authorization'),
        }),
        async ({ route: [route, method, pattern], id, body, wrong: makeWrong, field: header }) => {
          const value = makeWrong(token());
          const url = pattern.replace(/\{\w+\}/, encode(id));
          const headers: Record<string, string | string[]> = { 'content-type': 'application/json' };
          if (value !== undefined) headers[header] = value;
          const res = await check(route, {
            method,
            url,
            headers,
            payload: method === 'GET' ? undefined : body,
          });
          expect(
            res.statusCode,
            `${method} ${url} ${JSON.stringify(value)?.slice(0, 100)} → ${res.body}`,
          ).toBe(401);
          expect(res.json()).toEqual({ error: 'Unauthorized', message: 'Invalid admin token' });
        },
      ),
    );
  });

  it('unknown methods and paths under /admin answer 404 with the token, 401 without', async () => {
    await run(
      fc.asyncProperty(
        fc.record({
          method: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'),
          path: fc.oneof(
            fc.constantFrom(
              '/admin/organizations/x/credentials/y',
              '/admin/stocks/x',
              '/admin',
              '/admin/',
              '/ADMIN/stocks',
              '/v1/customers',
            ),
            fc
              .array(fc.oneof(fc.string(), weird).map(encode), { minLength: 1, maxLength: 3 })
              .map((s) => `/admin/${s.join('/')}`),
          ),
          withToken: fc.boolean(),
        }),
        async ({ method, path, withToken }) => {
          inputs += 1;
          const before = await tables();
          const res = await t.admin.inject({ method, url: path, headers: withToken ? authorized() : {} });
          const after = await tables(true);
          if (!withToken) expect(res.statusCode, `${method} ${path} → ${res.body}`).toBe(401);
          const verdict = judge({ name: 'router', allowed: [401, 404] }, res, { routable: false });
          // A path that happens to be a route (GET /admin/organizations/x) may answer as that route.
          const problems =
            res.statusCode < 300 ? [] : verdict.problems.filter((p) => !p.startsWith('status'));
          if (res.statusCode >= 300 && ![400, 401, 404].includes(res.statusCode))
            problems.push(`status ${res.statusCode}`);
          problems.push(...writeProblems(before, after, res.statusCode, verdict.body));
          expect(problems, `${method} ${path} → ${res.statusCode} ${res.body}`).toEqual([]);
        },
      ),
    );
  });

  // ---------- found by these properties, pinned by example ----------

  // Fastify's own answers to a URL its router refuses: a 400 (malformed percent-encoding) or a 414
  // (an id over 100 characters) with {error, code, message, statusCode} and no X-Request-Id.
  it('a malformed URL answers the router’s 400 in a spec shape, with a request id', async () => {
    for (const url of ['/admin/credentials/%E0%A4%A', '/admin/transactions/%/settle']) {
      const res = await check(
        'credentials.patch',
        {
          method: url.endsWith('settle') ? 'POST' : 'PATCH',
          url,
          headers: authorized({ 'content-type': 'application/json' }),
          payload: '{"isActive":true}',
        },
        false,
      );
      expect([res.statusCode, res.json()]).toEqual([
        400,
        { error: 'Bad Request', message: 'Malformed request URL' },
      ]);
    }
  });

  it('an id of 1,000 characters is a validation error on id, not Fastify’s 414', async () => {
    const res = await check('organizations.patch', {
      method: 'PATCH',
      url: `/admin/organizations/${'c'.repeat(1000)}`,
      headers: authorized(),
      payload: { isActive: true },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().details.map((d: { field: string }) => d.field)).toEqual(['id']);
  });

  // PostgreSQL's timestamptz cannot hold every JavaScript date: such an expiry was a 500.
  for (const expiresAt of [
    '+275760-09-13T00:00:00.000Z',
    '-271821-04-20T00:00:00.000Z',
    -8_640_000_000_000_000,
    '0000-01-01',
  ]) {
    it(`a credential expiring at ${JSON.stringify(expiresAt)} is a validation error on expiresAt, not a 500`, async () => {
      for (const [route, method, url] of [
        ['credentials.create', 'POST', `/admin/organizations/${ids.orgs[0]}/credentials`],
        ['credentials.patch', 'PATCH', `/admin/credentials/${ids.credentials[0]}`],
      ] as const) {
        const res = await check(route, {
          method,
          url,
          headers: authorized(),
          payload: { ...(method === 'POST' ? { name: 'prod' } : {}), expiresAt },
        });
        expect([res.statusCode, res.json()]).toEqual([
          400,
          {
            error: 'Validation failed',
            details: [{ field: 'expiresAt', message: 'must be a date between 1970 and 9999' }],
          },
        ]);
      }
    });
  }
});
