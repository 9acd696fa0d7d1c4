/**
 * Property-based tests: every endpoint under random and malformed input. For each answer:
 * a status the spec allows for that endpoint (oracle.ts, ALLOWED), one of the three error shapes with
 * the status's label, no 500 but the body-parsing rules' bare one, no stack or SQL, a sane request
 * id, and nothing written by a refused request (a digest of the organization's rows before and after).
 *
 * Requests are signed correctly after the input is generated, so most of them get past
 * authentication and reach parsing, validation, idempotency and the handler; header mutations
 * (applied after signing) cover the authentication paths. PROPERTY_RUNS (default 100 per property)
 * and PROPERTY_SEED make a run reproducible.
 */
import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createId, signPartnerRequest } from '@partner-api/contract';
import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { BASE_URL, createPartner, type Partner } from '@partner-api/testkit/partner.ts';
import { eq, sql } from 'drizzle-orm';
import fc from 'fast-check';
import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { customers, orders, transactions } from '../../src/db/schema.ts';
import { signCallback } from '../../src/services/payments/callback-signature.ts';
import { ensureCatalog, insertCustomer } from '../ussd/support.ts';
import {
  bounded,
  contentType,
  cuidLike,
  encode,
  type Field,
  field,
  pathId,
  printable,
  propertyOptions,
  queryString,
  rawBody,
  scalar,
  sometimes,
  weird,
} from './arbitraries.ts';
import {
  type Endpoint,
  judge,
  type Snapshot,
  StatusTally,
  snapshot,
  tally,
  writeProblems,
} from './oracle.ts';

const assertOptions = propertyOptions(100);
// A hundred requests per property (some minting tokens, an scrypt each) on a loaded 2-core CI machine.
vi.setConfig({ testTimeout: 180_000 });

// ---------- arbitraries ----------

const digits = fc.stringMatching(/^[0-9]{5,17}$/);
const validName = fc.oneof(
  fc.constantFrom('Amina', 'Otieno', '  Brian  ', 'Ñandú', '李', "O'Brien"),
  bounded(100),
);
const name = fc.oneof(validName, fc.string({ maxLength: 120 }));

/** X-Idempotency-Key before signing: fresh, reused from a small pool (replays, 422s), quoted, junk or absent. */
const KEY_POOL = Array.from({ length: 4 }, () => randomUUID());
const idempotencyKey = fc.oneof(
  { weight: 12, arbitrary: fc.uuid() },
  { weight: 2, arbitrary: fc.constantFrom(...KEY_POOL) },
  { weight: 1, arbitrary: fc.uuid().map((u) => `"${u}"`) },
  { weight: 1, arbitrary: fc.uuid().map((u) => u.toUpperCase()) },
  { weight: 1, arbitrary: printable },
  { weight: 1, arbitrary: fc.constant(undefined) },
);

type HeaderValue = string | string[] | undefined;
type Change = (signed: Record<string, string>, name: string) => HeaderValue;
type Mutation = [string, (signed: Record<string, string>) => HeaderValue];
/** Header changes after signing: removed, junk, duplicated (inject passes arrays), other caller's. */
function mutations(others: { token: string; clientId: string }): fc.Arbitrary<Mutation[]> {
  const names = fc.constantFrom(
    'authorization',
    'x-client-id',
    'signature',
    'signature-input',
    'content-digest',
    'x-idempotency-key',
    'content-type',
    'x-forwarded-for',
    'x-request-id',
    'x-unknown-header',
  );
  const change: fc.Arbitrary<Change> = fc.oneof(
    fc.constant<Change>(() => undefined),
    printable.map(
      (v): Change =>
        () =>
          v,
    ),
    weird
      .filter((w) => /^[\x20-\x7e]*$/.test(w))
      .map(
        (v): Change =>
          () =>
            v,
      ),
    fc.constant<Change>((s, n) => [s[n] ?? 'x', s[n] ?? 'x']),
    printable.map(
      (v): Change =>
        (s, n) => [s[n] ?? 'x', v],
    ),
    fc.constant<Change>(() => `Bearer ${others.token}`),
    fc.constant<Change>(() => others.clientId),
    fc.constant<Change>(() => 'Bearer '),
    fc.constant<Change>(() => 'x'.repeat(8000)),
  );
  // Three inputs in five keep their headers as signed, so that they reach validation and the handler.
  return fc.oneof(
    { weight: 3, arbitrary: fc.constant<Mutation[]>([]) },
    {
      weight: 2,
      arbitrary: fc.array(
        fc.tuple(names, change).map(([n, f]): Mutation => [n, (s) => f(s, n)]),
        { minLength: 1, maxLength: 2 },
      ),
    },
  );
}

// ---------- sending ----------

type Plan = {
  method: 'GET' | 'POST' | 'PATCH';
  path: string;
  routable: boolean;
  body?: string;
  contentType?: string;
  idempotencyKey?: string;
  mutations: Mutation[];
};

function wire(partner: Partner, plan: Plan, sign = true): InjectOptions {
  const headers: Record<string, string> = {
    authorization: `Bearer ${partner.token}`,
    'x-client-id': partner.clientId,
  };
  if (plan.contentType !== undefined) headers['content-type'] = plan.contentType;
  if (plan.idempotencyKey !== undefined) headers['x-idempotency-key'] = plan.idempotencyKey;
  const signed = sign
    ? signPartnerRequest({
        method: plan.method,
        url: BASE_URL + plan.path,
        headers,
        body: plan.body,
        keyId: partner.keyId,
        privateKey: partner.privateKey,
      })
    : headers;
  const final: Record<string, string | string[]> = { ...signed };
  for (const [name, change] of plan.mutations) {
    const value = change(signed);
    if (value === undefined) delete final[name];
    else final[name] = value;
  }
  return { method: plan.method, url: plan.path, headers: final, payload: plan.body };
}

// ---------- the suite ----------

describeStores('every endpoint under random input, on %s', (store) => {
  let t: TestApp;
  let partner: Partner;
  let revoker: Partner;
  let other: Partner;
  const own = { customer: '', session: '', order: '', transaction: '' };
  const theirs = { customer: '', session: '', order: '' };
  let inputs = 0;
  const statuses = new StatusTally();

  beforeAll(async () => {
    t = await buildTestApp(store, { USSD_SESSION_TTL_SECONDS: '86400' });
    const stocks = await ensureCatalog(t);
    [partner, revoker, other] = await Promise.all([createPartner(t), createPartner(t), createPartner(t)]);
    for (const [who, ids] of [
      [partner, own],
      [other, theirs],
    ] as const) {
      ids.customer = await insertCustomer(t, who);
      const opened = await t.app.inject(
        wire(who, {
          method: 'POST',
          path: '/v1/ussd/session',
          routable: true,
          body: JSON.stringify({ customerId: ids.customer }),
          contentType: 'application/json',
          idempotencyKey: randomUUID(),
          mutations: [],
        }),
      );
      expect(opened.statusCode, opened.body).toBe(201);
      ids.session = opened.json().data.sessionId;
      ids.order = createId();
      await t.ctx.database.db.insert(orders).values({
        id: ids.order,
        organizationId: who.organizationId,
        customerId: ids.customer,
        stockId: stocks.buy,
        side: 'BUY',
        status: 'PENDING_PAYMENT',
        amount: '1000.00',
        price: '25.0000',
      });
      const transactionId = createId();
      await t.ctx.database.db.insert(transactions).values({
        id: transactionId,
        organizationId: who.organizationId,
        orderId: ids.order,
        type: 'INCOMING',
        amount: '1000.00',
        status: 'PENDING',
        provider: 'MPESA',
        msisdn: '254712345678',
      });
      if (who === partner) own.transaction = transactionId;
    }
  });

  afterAll(async () => {
    tally.inputs += inputs;
    process.stdout.write(
      `[reliability] ${store}: property inputs tried: ${inputs}; statuses seen:\n${statuses}\n`,
    );
    await t?.close();
  });

  /**
   * The organization's rows. Requests run one at a time and nothing else writes to these
   * organizations, so the snapshot taken after one request is the one before the next.
   */
  let lastSnapshot: { key: string; value: Snapshot } | undefined;
  async function snapshotOf(who: Partner, jti = '', fresh = false): Promise<Snapshot> {
    const key = `${who.credentialId} ${jti}`;
    if (!fresh && lastSnapshot?.key === key) return lastSnapshot.value;
    const value = await snapshot(t, who.organizationId, who.credentialId, jti);
    lastSnapshot = { key, value };
    return value;
  }

  /** Sends, judges, and compares the organization's rows around a refused request. */
  async function check(
    endpoint: Endpoint,
    request: InjectOptions,
    routable: boolean,
    who: Partner = partner,
    jti = '',
  ): Promise<{ status: number; body: unknown }> {
    inputs += 1;
    const before = await snapshotOf(who, jti);
    const res = await t.app.inject(request);
    const after = await snapshotOf(who, jti, true);
    const payload = typeof request.payload === 'string' ? request.payload : undefined;
    const verdict = judge(endpoint, res, { payload, routable });
    statuses.count(endpoint, res.statusCode);
    const problems = [...verdict.problems, ...writeProblems(before, after, res.statusCode, verdict.body)];
    if (res.statusCode < 300) problems.push(...successProblems(endpoint, verdict.body, who));
    if (problems.length > 0) {
      throw new Error(
        `${endpoint}: ${problems.join('; ')}\n  ${request.method} ${request.url}\n  headers ${JSON.stringify(request.headers).slice(0, 600)}\n  payload ${String(payload).slice(0, 300)}\n  → ${res.statusCode} ${res.body.slice(0, 300)}`,
      );
    }
    return { status: res.statusCode, body: verdict.body };
  }

  /** A success never shows another organization's data. */
  function successProblems(endpoint: Endpoint, body: unknown, who: Partner): string[] {
    const b = body as { data?: unknown };
    const data = b?.data as Record<string, unknown> | Record<string, unknown>[] | undefined;
    switch (endpoint) {
      case 'customers.list':
        return (data as Record<string, unknown>[]).every((c) => c.organizationId === who.organizationId)
          ? []
          : ['list shows another organization'];
      case 'customers.get':
      case 'customers.create':
      case 'customers.patch':
        return (data as Record<string, unknown>)?.organizationId === who.organizationId
          ? []
          : ['foreign customer'];
      case 'me':
        return (data as Record<string, unknown>)?.id === who.organizationId ? [] : ['foreign organization'];
      case 'payment.status':
        return (data as Record<string, unknown>)?.orderId === own.order ? [] : ['foreign order'];
      default:
        return [];
    }
  }

  const others = () => ({ token: other.token, clientId: other.clientId });
  const run = <T>(property: fc.IAsyncProperty<T>) => fc.assert(property, assertOptions);

  /** An authenticated endpoint: the plan is signed by the partner, then mutated. */
  function authenticated(endpoint: Endpoint, plans: fc.Arbitrary<Plan>) {
    return run(
      fc.asyncProperty(plans, async (plan) => {
        await check(endpoint, wire(partner, plan), plan.routable);
      }),
    );
  }

  const customerFields = {
    firstName: field(validName, name),
    lastName: field(validName, name),
    msisdn: field(fc.option(fc.stringMatching(/^[0-9]{7,15}$/), { nil: null }), digits),
    isActive: field(fc.boolean()),
    identificationNumber: field(fc.option(bounded(50), { nil: null }), fc.string({ maxLength: 60 })),
    identificationType: field(
      fc.constantFrom('SSN', 'PASSPORT', 'DRIVER_LICENSE', 'NATIONAL_ID', 'TAX_ID', 'OTHER', null),
    ),
    referenceId: field(fc.option(bounded(100), { nil: null }), fc.string({ maxLength: 110 })),
  };
  const mutating = (
    method: 'POST' | 'PATCH',
    path: fc.Arbitrary<{ segment: string; routable: boolean }> | string,
    fields: Record<string, Field>,
    required: string[] = [],
  ) =>
    fc
      .record({
        target: typeof path === 'string' ? fc.constant({ segment: path, routable: true }) : path,
        body: rawBody(fields, required),
        contentType,
        idempotencyKey,
        mutations: mutations(others()),
      })
      .map(
        ({ target, ...rest }): Plan => ({
          method,
          path: target.segment,
          routable: target.routable,
          ...rest,
        }),
      );
  const reading = (path: fc.Arbitrary<{ segment: string; routable: boolean }>) =>
    fc.record({ target: path, mutations: mutations(others()), body: sometimes(rawBody({})) }).map(
      ({ target, mutations: m, body }): Plan => ({
        method: 'GET',
        path: target.segment,
        routable: target.routable,
        body: body ?? undefined,
        contentType: body ? 'application/json' : undefined,
        mutations: m,
      }),
    );
  const at = (prefix: string, ids: string[]) =>
    pathId(ids).map((p) => ({ segment: prefix + p.segment, routable: p.routable }));

  it('POST /v1/oauth/token', async () => {
    const tokenFields = {
      clientId: field(
        fc.constant(partner.clientId),
        fc.oneof(fc.constant(partner.clientId), fc.stringMatching(/^org_[a-f0-9]{32}$/)),
      ),
      clientSecret: field(
        fc.constant(partner.clientSecret),
        fc.oneof(fc.constant(partner.clientSecret), fc.stringMatching(/^[a-f0-9]{32}_[a-f0-9]{32}$/)),
      ),
    };
    await run(
      fc.asyncProperty(
        fc.record({
          body: rawBody(tokenFields, ['clientId', 'clientSecret']),
          contentType,
          extra: mutations(others()),
        }),
        async ({ body, contentType: type, extra }) => {
          const headers: Record<string, string | string[]> =
            type === undefined ? {} : { 'content-type': type };
          for (const [n, f] of extra) {
            const v = f(headers as Record<string, string>);
            if (v === undefined) delete headers[n];
            else headers[n] = v;
          }
          await check('token', { method: 'POST', url: '/v1/oauth/token', headers, payload: body }, true);
        },
      ),
    );
  });

  it('GET /v1/oauth/me', () =>
    authenticated(
      'me',
      reading(
        queryString(['a', 'page']).map((q) => ({
          segment: `/v1/oauth/me${q ? `?${q}` : ''}`,
          routable: true,
        })),
      ),
    ));

  it('POST /v1/oauth/revoke (a fresh token after each successful revoke)', async () => {
    await run(
      fc.asyncProperty(
        fc.record({
          body: sometimes(rawBody({ token: field(scalar) })),
          contentType,
          idempotencyKey: sometimes(idempotencyKey),
          mutations: mutations(others()),
          query: sometimes(queryString(['token'])),
        }),
        async ({ body, contentType: type, idempotencyKey: key, mutations: m, query }) => {
          const plan: Plan = {
            method: 'POST',
            path: `/v1/oauth/revoke${query ? `?${query}` : ''}`,
            routable: true,
            body: body ?? undefined,
            contentType: body ? type : undefined,
            idempotencyKey: key ?? undefined,
            mutations: m,
          };
          const jti = JSON.parse(Buffer.from(revoker.token.split('.')[1]!, 'base64url').toString()).jti;
          const { status } = await check('revoke', wire(revoker, plan), true, revoker, jti);
          if (status === 200) revoker = { ...revoker, token: (await refreshToken(revoker)).token };
        },
      ),
    );
  });

  async function refreshToken(who: Partner): Promise<{ token: string }> {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/oauth/token',
      payload: { clientId: who.clientId, clientSecret: who.clientSecret },
    });
    expect(res.statusCode).toBe(200);
    return res.json();
  }

  it('POST /v1/customers', () =>
    authenticated('customers.create', mutating('POST', '/v1/customers', customerFields)));

  it('GET /v1/customers', () =>
    authenticated(
      'customers.list',
      reading(
        queryString(['page', 'limit', 'isActive', 'search', 'identificationType', 'msisdn']).map((q) => ({
          segment: `/v1/customers${q ? `?${q}` : ''}`,
          routable: true,
        })),
      ),
    ));

  it('GET /v1/customers/{id}', () =>
    authenticated('customers.get', reading(at('/v1/customers/', [own.customer, theirs.customer]))));

  it('PATCH /v1/customers/{id}', () =>
    authenticated(
      'customers.patch',
      mutating('PATCH', at('/v1/customers/', [own.customer, theirs.customer]), customerFields),
    ));

  it('GET /v1/payment/status/{orderId}', () =>
    authenticated(
      'payment.status',
      reading(at('/v1/payment/status/', [own.order, theirs.order, own.transaction])),
    ));

  it('GET /v1/webhooks/key', async () => {
    await run(
      fc.asyncProperty(
        fc.record({ query: queryString(['kid']), extra: mutations(others()), body: sometimes(rawBody({})) }),
        async ({ query, extra, body }) => {
          const headers: Record<string, string | string[]> = body
            ? { 'content-type': 'application/json' }
            : {};
          for (const [n, f] of extra) {
            const v = f({ authorization: `Bearer ${partner.token}` });
            if (v === undefined) delete headers[n];
            else headers[n] = v;
          }
          const url = `/v1/webhooks/key${query ? `?${query}` : ''}`;
          await check('webhooks.key', { method: 'GET', url, headers, payload: body ?? undefined }, true);
        },
      ),
    );
  });

  /** Earlier properties may have deactivated the customer (PATCH isActive=false): start each USSD one fresh. */
  const reactivate = async () => {
    await t.ctx.database.db.update(customers).set({ isActive: true }).where(eq(customers.id, own.customer));
    lastSnapshot = undefined;
  };

  it('POST /v1/ussd/session', async () => {
    await reactivate();
    await authenticated(
      'ussd.session',
      mutating(
        'POST',
        '/v1/ussd/session',
        {
          customerId: field(
            fc.oneof(
              { weight: 4, arbitrary: fc.constant(own.customer) },
              { weight: 1, arbitrary: fc.constant(theirs.customer) },
              { weight: 1, arbitrary: cuidLike },
            ),
          ),
        },
        ['customerId'],
      ),
    );
  });

  it('POST /v1/ussd/process', async () => {
    await reactivate();
    await authenticated(
      'ussd.process',
      mutating(
        'POST',
        '/v1/ussd/process',
        {
          sessionId: field(
            fc.oneof(
              { weight: 4, arbitrary: fc.constant(own.session) },
              { weight: 1, arbitrary: fc.constant(theirs.session) },
              { weight: 1, arbitrary: fc.stringMatching(/^ussd_[0-9a-f]{8,40}$/) },
            ),
          ),
          choice: field(
            fc.oneof(
              fc.constantFrom('1', '2', '0', '7', '8', 'SCOM', 'x'),
              fc.stringMatching(/^[A-Za-z0-9]{1,10}$/),
            ),
            fc.stringMatching(/^[A-Za-z0-9]{0,12}$/),
          ),
        },
        ['sessionId', 'choice'],
      ),
    );
  });

  it('POST /v1/webhooks/callback (signed with the provider secret, or not)', async () => {
    const callbackFields = {
      transactionId: field(
        fc.oneof({ weight: 3, arbitrary: fc.constant(own.transaction) }, { weight: 1, arbitrary: cuidLike }),
      ),
      status: field(
        fc.constantFrom('SUCCESS', 'FAILED'),
        fc.constantFrom('SUCCESS', 'FAILED', 'PENDING', 'success'),
      ),
      providerReference: field(bounded(100), fc.string({ maxLength: 110 })),
      reason: field(bounded(500), fc.string({ maxLength: 510 })),
    };
    await run(
      fc.asyncProperty(
        fc.record({
          body: rawBody(callbackFields, ['transactionId', 'status', 'providerReference']),
          contentType,
          signature: fc.oneof(
            { weight: 6, arbitrary: fc.constant('valid') },
            { weight: 1, arbitrary: fc.constant(undefined) },
            { weight: 1, arbitrary: printable },
            { weight: 1, arbitrary: fc.stringMatching(/^t=[0-9]{10},v1=[0-9a-f]{64}$/) },
            { weight: 1, arbitrary: fc.constant('duplicated') },
          ),
        }),
        async ({ body, contentType: type, signature }) => {
          const headers: Record<string, string | string[]> =
            type === undefined ? {} : { 'content-type': type };
          const valid = signCallback(t.ctx.secrets.providerCallbackSecret, body ?? '');
          if (signature === 'valid') headers['x-callback-signature'] = valid;
          else if (signature === 'duplicated') headers['x-callback-signature'] = [valid, valid];
          else if (signature !== undefined) headers['x-callback-signature'] = signature;
          await check(
            'callback',
            { method: 'POST', url: '/v1/webhooks/callback', headers, payload: body },
            true,
          );
        },
      ),
    );
  });

  it('unknown methods and paths under /v1 answer the router’s 404 (or 400 for a malformed URL)', async () => {
    await run(
      fc.asyncProperty(
        fc.record({
          method: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD'),
          path: fc.oneof(
            fc.constantFrom(
              '/v1/customers',
              '/v1/oauth/token',
              '/v1/webhooks/key',
              '/v1/ussd/session',
              '/admin/organizations',
              '/v1/admin/organizations',
              '/v2/customers',
              '/v1/accounts',
              '/v1/webhooks',
            ),
            fc
              .array(fc.oneof(fc.string(), weird).map(encode), { minLength: 1, maxLength: 4 })
              .map((s) => `/v1/${s.join('/')}`),
          ),
        }),
        async ({ method, path }) => {
          inputs += 1;
          const res = await t.app.inject({
            method,
            url: path,
            headers: { authorization: `Bearer ${partner.token}` },
          });
          // Whatever the route is, the answer is one of the endpoints' or the router's: never a 500.
          expect(res.statusCode, `${method} ${path} → ${res.body}`).not.toBe(500);
          if (res.statusCode >= 400 && method !== 'HEAD') {
            const verdict = judge('customers.patch', res, { routable: false });
            expect(
              verdict.problems.filter((p) => !p.startsWith('status')),
              `${method} ${path} → ${res.body}`,
            ).toEqual([]);
          }
        },
      ),
    );
  });

  it('USSD random walks from HOME: never the ERROR screen, screens fit a handset, every confirmed buy is one order with one collection', async () => {
    await reactivate();
    const walker = await createPartner(t);
    const customerId = await insertCustomer(t, walker);
    const submitted = new Set<string>();
    const cancelled = new Set<string>();
    const press = (sessionId: string, choice: string) =>
      t.app.inject(
        wire(walker, {
          method: 'POST',
          path: '/v1/ussd/process',
          routable: true,
          body: JSON.stringify({ sessionId, choice }),
          contentType: 'application/json',
          idempotencyKey: randomUUID(),
          mutations: [],
        }),
      );
    const choice = fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom('1', '2', '0', '7', '8', '1', '1') },
      { weight: 1, arbitrary: fc.constantFrom('3', '4', '5', '9', '6') },
      { weight: 2, arbitrary: fc.constantFrom('100', '1000', '2500', '101', '102', '99', '1000001', '5') },
      { weight: 1, arbitrary: fc.constantFrom('SCOM', 'kcb', 'ZZ', 'nothing', 'A') },
    );
    // Random presses, mixed with the scripted moves that reach the end screens (buy, cancel a request).
    const amount = fc.constantFrom('100', '1000', '2500', '101', '102');
    const segment = fc.oneof(
      { weight: 3, arbitrary: fc.array(choice, { minLength: 1, maxLength: 4 }) },
      {
        weight: 2,
        arbitrary: fc
          .tuple(fc.constantFrom('1', '2', '3'), amount)
          .map(([stock, a]) => ['1', stock, '1', a, '1']),
      },
      { weight: 1, arbitrary: fc.constant(['2', '1', '1', '1', '1']) },
      { weight: 1, arbitrary: fc.constant(['0']) },
    );
    const walk = fc.array(segment, { minLength: 1, maxLength: 3 }).map((parts) => parts.flat());
    // Each walk is several requests: half the runs of the other properties.
    await fc.assert(
      fc.asyncProperty(walk, async (choices) => {
        inputs += 1;
        const opened = await t.app.inject(
          wire(walker, {
            method: 'POST',
            path: '/v1/ussd/session',
            routable: true,
            body: JSON.stringify({ customerId }),
            contentType: 'application/json',
            idempotencyKey: randomUUID(),
            mutations: [],
          }),
        );
        expect(opened.statusCode, opened.body).toBe(201);
        let data = opened.json().data as {
          sessionId: string;
          currentState: string;
          ussdText: string;
          menu: { text: string; isEndState: boolean; options: { key: string; label: string }[] };
        };
        let previous = '';
        for (const c of choices) {
          inputs += 1;
          const res = await press(data.sessionId, c);
          if (data.menu.isEndState) {
            expect([res.statusCode, res.json()]).toEqual([
              400,
              { error: 'Bad Request', message: 'USSD session is no longer active' },
            ]);
            break;
          }
          expect(res.statusCode, `${previous} → ${c}: ${res.body}`).toBe(200);
          data = res.json().data;
          expect(data.currentState, `${previous} → ${c}`).not.toBe('ERROR');
          expect(data.ussdText.length).toBeLessThanOrEqual(182);
          const lines = data.menu.options.map((o) => `${o.key}. ${o.label}`).join('\n');
          expect(data.ussdText).toBe(lines ? `${data.menu.text}\n\n${lines}` : data.menu.text);
          const ref = /Ref (c[a-z0-9]{24})/.exec(data.menu.text)?.[1];
          if (data.currentState === 'BUY_SUBMITTED' && ref) submitted.add(ref);
          if (data.currentState === 'REQUEST_CANCELLED') cancelled.add(data.sessionId);
          previous = `${previous} ${c}`;
        }
      }),
      { ...assertOptions, numRuns: Math.ceil(assertOptions.numRuns / 2) },
    );
    // Every submitted buy is exactly one order with exactly one collection, and nothing else was ordered.
    const rows = (
      (await t.ctx.database.db.execute(sql`
        select o.id, o.side, o.status, count(t.id)::int as collections,
               count(t.id) filter (where t.type = 'OUTGOING')::int as payouts
          from orders o left join transactions t on t.order_id = o.id and t.type = 'INCOMING'
         where o.organization_id = ${walker.organizationId}
         group by o.id, o.side, o.status`)) as unknown as {
        rows: { id: string; side: string; status: string; collections: number }[];
      }
    ).rows;
    expect(rows.map((r) => r.id).sort()).toEqual([...submitted].sort());
    for (const r of rows) {
      expect([r.side, r.collections]).toEqual(['BUY', 1]);
      expect(['PENDING_PAYMENT', 'CANCELLED']).toContain(r.status);
    }
    expect(rows.filter((r) => r.status === 'CANCELLED').length).toBe(cancelled.size);
    process.stdout.write(
      `[reliability] ${store}: USSD walks: ${submitted.size} buys submitted, ${cancelled.size} cancelled\n`,
    );
  });

  it('duplicated headers over a real socket (Node sends each value on its own line)', async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as AddressInfo;
    const send = (
      method: string,
      path: string,
      headers: Record<string, string | string[]>,
      payload?: string,
    ) =>
      new Promise<{ statusCode: number; body: string; headers: Record<string, unknown> }>(
        (resolve, reject) => {
          const req = httpRequest({ host: '127.0.0.1', port, method, path, headers }, (res) => {
            let data = '';
            res.setEncoding('utf8');
            res.on('data', (c) => (data += c));
            res.on('end', () =>
              resolve({ statusCode: res.statusCode ?? 0, body: data, headers: res.headers }),
            );
          });
          req.on('error', reject);
          req.end(payload);
        },
      );
    const targets: { endpoint: Endpoint; plan: () => Plan }[] = [
      {
        endpoint: 'me',
        plan: () => ({ method: 'GET', path: '/v1/oauth/me', routable: true, mutations: [] }),
      },
      {
        endpoint: 'customers.get',
        plan: () => ({ method: 'GET', path: `/v1/customers/${own.customer}`, routable: true, mutations: [] }),
      },
      {
        endpoint: 'customers.create',
        plan: () => ({
          method: 'POST',
          path: '/v1/customers',
          routable: true,
          body: JSON.stringify({ firstName: 'Dup', lastName: 'Headers' }),
          contentType: 'application/json',
          idempotencyKey: randomUUID(),
          mutations: [],
        }),
      },
      {
        endpoint: 'ussd.process',
        plan: () => ({
          method: 'POST',
          path: '/v1/ussd/process',
          routable: true,
          body: JSON.stringify({ sessionId: own.session, choice: '0' }),
          contentType: 'application/json',
          idempotencyKey: randomUUID(),
          mutations: [],
        }),
      },
    ];
    const duplicable = [
      'authorization',
      'x-client-id',
      'signature',
      'signature-input',
      'content-digest',
      'x-idempotency-key',
      'content-type',
      'x-request-id',
      'x-forwarded-for',
    ];
    await run(
      fc.asyncProperty(
        fc.record({
          target: fc.constantFrom(...targets),
          dups: fc.array(fc.tuple(fc.constantFrom(...duplicable), fc.oneof(fc.constant('same'), printable)), {
            minLength: 1,
            maxLength: 3,
          }),
        }),
        async ({ target, dups }) => {
          inputs += 1;
          const plan = target.plan();
          const options = wire(partner, plan);
          const headers = { ...(options.headers as Record<string, string | string[]>) };
          for (const [n, v] of dups) {
            const first = headers[n] ?? 'x';
            headers[n] = [...(Array.isArray(first) ? first : [first]), v === 'same' ? String(first) : v];
          }
          const before = await snapshotOf(partner);
          const res = await send(plan.method, plan.path, headers, plan.body);
          const after = await snapshotOf(partner, '', true);
          const verdict = judge(target.endpoint, res, { payload: plan.body, routable: true });
          const problems = [
            ...verdict.problems,
            ...writeProblems(before, after, res.statusCode, verdict.body),
          ];
          expect(
            problems,
            `${JSON.stringify(headers).slice(0, 500)} → ${res.statusCode} ${res.body}`,
          ).toEqual([]);
        },
      ),
    );
  });
});
