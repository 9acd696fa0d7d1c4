/**
 * Attack tests (docs/reliability.md): replayed and lifted signatures, crossed tokens and client ids, other
 * organizations' ids in every path and body, SQL and LIKE metacharacters, X-Forwarded-For spoofing,
 * constant-time secret comparisons, and the admin API out of the public listener's reach.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import path from 'node:path';
import { computeContentDigest, createId } from '@partner-api/contract';
import { buildTestApp, describeStores, type TestApp, tempDataDir } from '@partner-api/testkit/app.ts';
import { adminInject } from '@partner-api/testkit/helpers.ts';
import { createOrderWithTransactions } from '@partner-api/testkit/orders.ts';
import { createPartner, type Partner, signedHeaders, signedInject } from '@partner-api/testkit/partner.ts';
import { startServer } from '@partner-api/testkit/process.ts';
import { listRoutes, urlOf } from '@partner-api/testkit/routes.ts';
import { eq } from 'drizzle-orm';
import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { customers, ussdSessions } from '../../src/db/schema.ts';
import { signCallback } from '../../src/services/payments/callback-signature.ts';
import { ensureCatalog, insertCustomer } from '../ussd/support.ts';

const SRC = path.resolve(import.meta.dirname, '../../src');
const UNAUTHORIZED = (message: string) => ({ error: 'Unauthorized', message });
const SIGNATURE_FAILED = UNAUTHORIZED('Signature verification failed');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** RFC 3986 encoding (encodeURIComponent leaves ' ( ) * ! as they are; URL parsers then differ on them). */
const strictEncode = (value: string) =>
  encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

describeStores('attacks on %s', (store) => {
  let t: TestApp;
  let a: Partner;
  let b: Partner;
  const ids = {
    aCustomer: '',
    bCustomer: '',
    bSession: '',
    bOrder: '',
  };

  beforeAll(async () => {
    t = await buildTestApp(store);
    await ensureCatalog(t);
    [a, b] = await Promise.all([createPartner(t), createPartner(t)]);
    ids.aCustomer = await insertCustomer(t, a);
    ids.bCustomer = await insertCustomer(t, b);
    const opened = await signedInject(t.app, b, {
      method: 'POST',
      url: '/v1/ussd/session',
      body: { customerId: ids.bCustomer },
    });
    expect(opened.statusCode, opened.body).toBe(201);
    ids.bSession = opened.json().data.sessionId;
    ids.bOrder = (
      await createOrderWithTransactions(t.ctx.database.db, b.organizationId, [
        { type: 'INCOMING', amount: '500.00' },
      ])
    ).orderId;
  });
  afterAll(() => t.close());

  describe('replayed and lifted signatures', () => {
    it('a captured request replayed after its signature expired is refused; within the window a POST is replayed, not re-run', async () => {
      const key = randomUUID();
      const body = JSON.stringify({ firstName: 'Replay', lastName: 'Target' });
      const created = Math.floor(Date.now() / 1000);
      const headers = signedHeaders(
        a,
        { method: 'POST', url: '/v1/customers', idempotencyKey: key, created },
        body,
      );
      // Re-signed with a 2 s validity window (signedHeaders signs for 300 s unless told).
      const short = signedHeaders(
        a,
        { method: 'POST', url: '/v1/customers', idempotencyKey: key, validitySeconds: 2 },
        body,
      );
      const send = (h: Record<string, string>) =>
        t.app.inject({ method: 'POST', url: '/v1/customers', headers: h, payload: body });

      const first = await send(short);
      expect(first.statusCode, first.body).toBe(201);
      const again = await send(short);
      expect([again.statusCode, again.headers['idempotent-replayed'], again.body]).toEqual([
        201,
        'true',
        first.body,
      ]);
      await sleep(3200);
      const late = await send(short);
      expect([late.statusCode, late.json()]).toEqual([401, SIGNATURE_FAILED]);
      expect(late.headers['signature-debug']).toMatch(/reason="expired"/);
      // The same key with the 300 s signature: still the stored answer, one customer only.
      expect((await send(headers)).body).toBe(first.body);
      const rows = await t.ctx.database.db.select().from(customers).where(eq(customers.lastName, 'Target'));
      expect(rows.filter((r) => r.organizationId === a.organizationId)).toHaveLength(1);
    });

    /** A request's authentication headers, lifted onto another request. */
    const lift = (from: { method: 'GET' | 'POST' | 'PATCH'; url: string; body?: unknown }, partner = a) => {
      const payload = from.body === undefined ? undefined : JSON.stringify(from.body);
      return signedHeaders(
        partner,
        { method: from.method, url: from.url, idempotencyKey: randomUUID() },
        payload,
      );
    };

    it('onto another path: 401', async () => {
      const headers = lift({ method: 'GET', url: `/v1/customers/${ids.aCustomer}` });
      const res = await t.app.inject({ method: 'GET', url: `/v1/customers/${createId()}`, headers });
      expect([res.statusCode, res.json()]).toEqual([401, SIGNATURE_FAILED]);
      const list = lift({ method: 'GET', url: '/v1/customers?page=1' });
      const other = await t.app.inject({ method: 'GET', url: '/v1/customers?page=2', headers: list });
      expect([other.statusCode, other.json()]).toEqual([401, SIGNATURE_FAILED]);
    });

    it('onto another body: 401 (digest kept) or 401 (digest recomputed)', async () => {
      const headers = lift({ method: 'POST', url: '/v1/customers', body: { firstName: 'A', lastName: 'B' } });
      const forged = JSON.stringify({ firstName: 'Mallory', lastName: 'B' });
      const kept = await t.app.inject({ method: 'POST', url: '/v1/customers', headers, payload: forged });
      expect([kept.statusCode, kept.json()]).toEqual([
        401,
        UNAUTHORIZED('Content-Digest verification failed'),
      ]);
      const recomputed = await t.app.inject({
        method: 'POST',
        url: '/v1/customers',
        headers: { ...headers, 'content-digest': computeContentDigest(forged, 'sha-512') },
        payload: forged,
      });
      expect([recomputed.statusCode, recomputed.json()]).toEqual([401, SIGNATURE_FAILED]);
    });

    it('onto another method: 401', async () => {
      const body = JSON.stringify({ firstName: 'Changed' });
      const headers = lift({
        method: 'POST',
        url: `/v1/customers/${ids.aCustomer}`,
        body: { firstName: 'Changed' },
      });
      const res = await t.app.inject({
        method: 'PATCH',
        url: `/v1/customers/${ids.aCustomer}`,
        headers,
        payload: body,
      });
      expect([res.statusCode, res.json()]).toEqual([401, SIGNATURE_FAILED]);
    });

    it('onto another client id (and token): 401', async () => {
      const headers = lift({ method: 'GET', url: `/v1/customers/${ids.aCustomer}` });
      const crossedId = await t.app.inject({
        method: 'GET',
        url: `/v1/customers/${ids.aCustomer}`,
        headers: { ...headers, 'x-client-id': b.clientId },
      });
      expect([crossedId.statusCode, crossedId.json()]).toEqual([401, UNAUTHORIZED('Client ID mismatch')]);
      const crossedAll = await t.app.inject({
        method: 'GET',
        url: `/v1/customers/${ids.aCustomer}`,
        headers: { ...headers, 'x-client-id': b.clientId, authorization: `Bearer ${b.token}` },
      });
      expect([crossedAll.statusCode, crossedAll.json()]).toEqual([401, SIGNATURE_FAILED]);
    });
  });

  describe('crossed organizations', () => {
    it("organization A's token with B's client id, signed by B or by A: 401 Client ID mismatch", async () => {
      for (const signer of [b, a]) {
        const res = await signedInject(
          t.app,
          { ...signer, token: a.token, clientId: b.clientId },
          {
            method: 'GET',
            url: '/v1/oauth/me',
          },
        );
        expect([res.statusCode, res.json()]).toEqual([401, UNAUTHORIZED('Client ID mismatch')]);
      }
    });

    /** Status and body of a request, with the given id replaced by a placeholder in the body. */
    const answer = async (request: Parameters<typeof signedInject>[2], id: string) => {
      const res = await signedInject(t.app, a, request);
      return { status: res.statusCode, body: res.body.replaceAll(id, '<id>') };
    };

    it("B's customer in GET /customers/{id}: the nonexistent customer's 404, byte for byte", async () => {
      const missing = createId();
      const theirs = await answer({ method: 'GET', url: `/v1/customers/${ids.bCustomer}` }, ids.bCustomer);
      const nobody = await answer({ method: 'GET', url: `/v1/customers/${missing}` }, missing);
      expect(theirs).toEqual(nobody);
      expect(theirs).toEqual({ status: 404, body: '{"error":"Not found","message":"Customer not found"}' });
    });

    it("B's customer in PATCH /customers/{id}: the same 404, and B's row is untouched", async () => {
      const [before] = await t.ctx.database.db
        .select()
        .from(customers)
        .where(eq(customers.id, ids.bCustomer));
      const missing = createId();
      const theirs = await answer(
        {
          method: 'PATCH',
          url: `/v1/customers/${ids.bCustomer}`,
          body: { firstName: 'Hijacked', msisdn: null },
        },
        ids.bCustomer,
      );
      const nobody = await answer(
        { method: 'PATCH', url: `/v1/customers/${missing}`, body: { firstName: 'Hijacked', msisdn: null } },
        missing,
      );
      expect(theirs).toEqual(nobody);
      expect(theirs.status).toBe(404);
      const [after] = await t.ctx.database.db.select().from(customers).where(eq(customers.id, ids.bCustomer));
      expect(after).toEqual(before);
    });

    it("B's order in GET /payment/status/{orderId}: the nonexistent order's 404 (message names the id asked)", async () => {
      const missing = createId();
      const theirs = await answer({ method: 'GET', url: `/v1/payment/status/${ids.bOrder}` }, ids.bOrder);
      const nobody = await answer({ method: 'GET', url: `/v1/payment/status/${missing}` }, missing);
      expect(theirs).toEqual(nobody);
      expect(JSON.parse(theirs.body)).toEqual({
        error: 'Transaction not found',
        message: 'No payment or disbursement transaction was found for the order <id>',
      });
    });

    it("B's customer in POST /ussd/session: the nonexistent customer's 404 CUSTOMER_NOT_FOUND, no session opened", async () => {
      const missing = createId();
      const sessionsBefore = await t.ctx.database.db
        .select()
        .from(ussdSessions)
        .where(eq(ussdSessions.customerId, ids.bCustomer));
      const theirs = await answer(
        { method: 'POST', url: '/v1/ussd/session', body: { customerId: ids.bCustomer } },
        ids.bCustomer,
      );
      const nobody = await answer(
        { method: 'POST', url: '/v1/ussd/session', body: { customerId: missing } },
        missing,
      );
      expect(theirs).toEqual(nobody);
      expect(JSON.parse(theirs.body)).toEqual({
        error: 'CUSTOMER_NOT_FOUND',
        message: 'Customer not found or does not belong to this organization',
      });
      const sessionsAfter = await t.ctx.database.db
        .select()
        .from(ussdSessions)
        .where(eq(ussdSessions.customerId, ids.bCustomer));
      expect(sessionsAfter).toEqual(sessionsBefore);
    });

    it("B's session in POST /ussd/process: 403 SESSION_FORBIDDEN (the spec's answer), and B's session does not move", async () => {
      const [before] = await t.ctx.database.db
        .select()
        .from(ussdSessions)
        .where(eq(ussdSessions.id, ids.bSession));
      const res = await signedInject(t.app, a, {
        method: 'POST',
        url: '/v1/ussd/process',
        body: { sessionId: ids.bSession, choice: '1' },
      });
      expect([res.statusCode, res.json()]).toEqual([
        403,
        { error: 'SESSION_FORBIDDEN', message: 'Session does not belong to this organization' },
      ]);
      const [after] = await t.ctx.database.db
        .select()
        .from(ussdSessions)
        .where(eq(ussdSessions.id, ids.bSession));
      expect(after).toEqual(before);
      const unknown = await signedInject(t.app, a, {
        method: 'POST',
        url: '/v1/ussd/process',
        body: { sessionId: `ussd_${'ab'.repeat(16)}`, choice: '1' },
      });
      expect([unknown.statusCode, unknown.json()]).toEqual([
        404,
        { error: 'SESSION_NOT_FOUND', message: 'USSD session not found' },
      ]);
    });

    it("B's customers never appear in A's list, whatever the filter", async () => {
      const [theirs] = await t.ctx.database.db
        .select()
        .from(customers)
        .where(eq(customers.id, ids.bCustomer));
      for (const query of [
        '',
        `?msisdn=${theirs!.msisdn}`,
        `?search=${encodeURIComponent(theirs!.firstName)}`,
        '?limit=100',
        `?search=${encodeURIComponent(ids.bCustomer)}`,
      ]) {
        const res = await signedInject(t.app, a, { method: 'GET', url: `/v1/customers${query}` });
        expect(res.statusCode).toBe(200);
        for (const c of res.json().data) expect(c.organizationId, query).toBe(a.organizationId);
      }
      const me = await signedInject(t.app, a, { method: 'GET', url: '/v1/oauth/me' });
      expect(me.json().data.id).toBe(a.organizationId);
      expect(me.json().data.credentials.map((c: { clientId: string }) => c.clientId)).toEqual([a.clientId]);
    });
  });

  describe('SQL and LIKE metacharacters in search', () => {
    const terms: [string, string][] = [
      ['quote', "O'Brien"],
      ['injection', "' OR 1=1 --"],
      ['drop', "'; DROP TABLE customers; --"],
      ['percent', '100%'],
      ['underscore', 'a_b'],
      ['backslash', 'x\\y'],
      ['union', "x' UNION SELECT * FROM credentials --"],
    ];
    let partner: Partner;
    const made = new Map<string, string>();
    beforeAll(async () => {
      partner = await createPartner(t);
      for (const [key, term] of terms) {
        const res = await signedInject(t.app, partner, {
          method: 'POST',
          url: '/v1/customers',
          body: { firstName: 'Meta', lastName: key, referenceId: `ref ${term} end` },
        });
        expect(res.statusCode, res.body).toBe(201);
        made.set(key, res.json().data.id);
      }
      // Decoys a wildcard would match: "100X", "aXb", "xy", and a plain row.
      for (const referenceId of ['ref 100X end', 'ref aXb end', 'ref xy end', 'plain']) {
        await signedInject(t.app, partner, {
          method: 'POST',
          url: '/v1/customers',
          body: { firstName: 'Decoy', lastName: 'Row', referenceId },
        });
      }
    });

    for (const [key, term] of terms) {
      it(`search=${JSON.stringify(term)} returns only the literal match`, async () => {
        const res = await signedInject(t.app, partner, {
          method: 'GET',
          url: `/v1/customers?search=${strictEncode(term)}&limit=100`,
        });
        expect(res.statusCode, res.body).toBe(200);
        const found = res.json().data.map((c: { id: string }) => c.id);
        expect(found).toEqual([made.get(key)]);
        expect(res.json().pagination.total).toBe(1);
      });
    }

    it('the catalog is intact afterwards (no statement ran but the search)', async () => {
      const res = await signedInject(t.app, partner, { method: 'GET', url: '/v1/customers?limit=100' });
      expect(res.json().pagination.total).toBe(terms.length + 4);
    });
  });

  describe('X-Forwarded-For with TRUST_PROXY off', () => {
    it('does not get a caller inside the IP allowlist', async () => {
      const fenced = await createPartner(t, { trustedIps: ['10.9.8.7'] });
      const send = (remoteAddress: string, xff?: string) => {
        const headers = signedHeaders(fenced, { method: 'GET', url: '/v1/oauth/me' }, undefined);
        return t.app.inject({
          method: 'GET',
          url: '/v1/oauth/me',
          remoteAddress,
          headers: xff ? { ...headers, 'x-forwarded-for': xff } : headers,
        } as InjectOptions);
      };
      for (const xff of ['10.9.8.7', '10.9.8.7, 198.18.0.9', '198.18.0.9, 10.9.8.7']) {
        const spoofed = await send('198.18.0.9', xff);
        expect([spoofed.statusCode, spoofed.json()], xff).toEqual([
          403,
          { error: 'Forbidden', message: 'Client IP not allowed' },
        ]);
      }
      // Control: the allowlisted address itself gets in.
      expect((await send('10.9.8.7')).statusCode).toBe(200);
    });

    it('an allowlist changed through the admin API applies to the next request', async () => {
      // The caller and its allowlist are kept between requests (plugins/auth.ts): a change must
      // still hold at once, narrowed and widened again.
      const fenced = await createPartner(t, { trustedIps: ['10.9.8.0/24'] });
      const send = async (remoteAddress: string) =>
        (
          await t.app.inject({
            method: 'GET',
            url: '/v1/oauth/me',
            remoteAddress,
            headers: signedHeaders(fenced, { method: 'GET', url: '/v1/oauth/me' }, undefined),
          } as InjectOptions)
        ).statusCode;
      const allow = async (trustedIps: string[]) => {
        const res = await adminInject(t, 'PATCH', `/admin/credentials/${fenced.credentialId}`, {
          trustedIps,
        });
        expect(res.statusCode, res.body).toBe(200);
      };
      expect([await send('10.9.8.7'), await send('10.9.8.7'), await send('10.9.9.7')]).toEqual([
        200, 200, 403,
      ]);
      await allow(['10.9.9.0/24']);
      expect([await send('10.9.8.7'), await send('10.9.9.7'), await send('10.9.9.7')]).toEqual([
        403, 200, 200,
      ]);
      await allow([]);
      expect([await send('198.18.0.9'), await send('10.9.8.7')]).toEqual([200, 200]);
      await allow(['10.9.8.7']);
      expect([await send('10.9.8.7'), await send('10.9.8.8')]).toEqual([200, 403]);
    });

    it('earns no fresh rate-limit budget', async () => {
      const limited = await buildTestApp('pglite', { RATE_LIMIT_GLOBAL: '2/60s' });
      try {
        const statuses: number[] = [];
        for (let i = 0; i < 4; i++) {
          const res = await limited.app.inject({
            method: 'GET',
            url: '/v1/webhooks/key',
            remoteAddress: '198.18.7.7',
            headers: { 'x-forwarded-for': `10.0.0.${i}` },
          });
          statuses.push(res.statusCode);
        }
        expect(statuses).toEqual([200, 200, 429, 429]);
      } finally {
        await limited.close();
      }
    });
  });

  describe('secrets compared in constant time', () => {
    /** An equal-length wrong value, differing from `value` at its first or last character. */
    const flip = (value: string, at: 'first' | 'last') => {
      const i = at === 'first' ? 0 : value.length - 1;
      const c = value[i] === 'a' ? 'b' : 'a';
      return value.slice(0, i) + c + value.slice(i + 1);
    };

    it('client secret: wrong at the first or the last character, both 401', async () => {
      for (const at of ['first', 'last'] as const) {
        const res = await t.app.inject({
          method: 'POST',
          url: '/v1/oauth/token',
          payload: { clientId: a.clientId, clientSecret: flip(a.clientSecret, at) },
        });
        expect([res.statusCode, res.json()], at).toEqual([401, UNAUTHORIZED('Invalid client credentials')]);
      }
    });

    it('admin token: wrong at the first or the last character, or a prefix, all 401', async () => {
      const token = t.ctx.secrets.adminToken;
      for (const wrong of [flip(token, 'first'), flip(token, 'last'), token.slice(0, -1), `${token}x`]) {
        const res = await t.admin.inject({
          method: 'GET',
          url: '/admin/organizations',
          headers: { authorization: `Bearer ${wrong}` },
        });
        expect(res.statusCode).toBe(401);
      }
    });

    it('callback HMAC: wrong at the first or the last hex digit, both 401', async () => {
      const body = JSON.stringify({ transactionId: createId(), status: 'SUCCESS', providerReference: 'R1' });
      const good = signCallback(t.ctx.secrets.providerCallbackSecret, body);
      const [time, hex] = good.split(',v1=') as [string, string];
      for (const at of ['first', 'last'] as const) {
        const res = await t.app.inject({
          method: 'POST',
          url: '/v1/webhooks/callback',
          headers: {
            'content-type': 'application/json',
            'x-callback-signature': `${time},v1=${flip(hex, at)}`,
          },
          payload: body,
        });
        expect([res.statusCode, res.json()], at).toEqual([401, UNAUTHORIZED('Invalid callback signature')]);
      }
    });

    it('the implementations compare with crypto.timingSafeEqual (a statistical timing test would be flaky)', () => {
      const source = (file: string) => readFileSync(path.join(SRC, file), 'utf8');
      // Client secrets: scrypt digests compared with timingSafeEqual; an unknown client id costs the same hash.
      expect(source('lib/passwords.ts')).toMatch(/timingSafeEqual\(actual, expected\)/);
      expect(source('services/auth/issue-token.ts')).toMatch(/verifySecret\([^)]*UNKNOWN_CLIENT_HASH\)/);
      // Admin token: SHA-256 digests of both sides (equal lengths whatever is presented).
      expect(source('admin/app.ts')).toMatch(/timingSafeEqual\(digest\(token\), expected\)/);
      // Callback HMAC: a fixed-length hex header, decoded and compared with timingSafeEqual.
      expect(source('services/payments/callback-signature.ts')).toMatch(
        /timingSafeEqual\(Buffer\.from\(match\[2\], 'hex'\), mac\(secret, t, rawBody\)\)/,
      );
      // Tokens (HS256): fast-jwt compares HMACs with timingSafeEqual.
      const fastJwt = readFileSync(
        path.join(path.dirname(createRequire(import.meta.url).resolve('fast-jwt')), 'crypto.js'),
        'utf8',
      );
      expect(fastJwt).toMatch(
        /timingSafeEqual\(createHmac\(alg, key\)\.update\(input\)\.digest\(\), signature\)/,
      );
      // No plain comparison of a secret anywhere in the server.
      for (const file of ['lib/passwords.ts', 'admin/app.ts', 'services/payments/callback-signature.ts']) {
        expect(source(file)).not.toMatch(/(secret|token|signature|expected)\s*===?\s*\w/i);
      }
    });
  });

  describe('the admin API from the public listener', () => {
    it('every /admin path answers the public 404 Not Found, with or without the admin token, under /v1 too', async () => {
      // Every route the admin app registers, read from the app itself (a new one is covered too).
      const adminRoutes = listRoutes(t.admin).filter((route) => route.includes(' /admin/'));
      expect(adminRoutes.length).toBeGreaterThan(0);
      for (const route of adminRoutes) {
        const [method, pattern] = route.split(' ') as [string, string];
        const url = urlOf(pattern, createId());
        // Control: the path is a real admin route (401 without a token, not 404).
        const onAdmin = await t.admin.inject({ method: method as 'GET', url });
        expect(onAdmin.statusCode, `${method} ${url} on the admin listener`).toBe(401);
        for (const target of [url, `/v1${url}`, url.toUpperCase(), `${url}/`]) {
          for (const headers of [{}, { authorization: `Bearer ${t.ctx.secrets.adminToken}` }]) {
            const res = await t.app.inject({
              method: method as 'GET',
              url: target,
              headers: { ...headers, 'content-type': 'application/json' },
              payload: method === 'GET' ? undefined : '{}',
            });
            expect([res.statusCode, res.body], `${method} ${target}`).toEqual([404, '{"error":"Not Found"}']);
          }
        }
      }
    });
  });
});

describe('the admin listener binds loopback by default', () => {
  const external = Object.values(networkInterfaces())
    .flat()
    .find((i) => i && !i.internal && i.family === 'IPv4')?.address;

  it.skipIf(!external)(
    `is unreachable on this machine's own non-loopback address (${external})`,
    async () => {
      const server = await startServer({
        DATA_DIR: tempDataDir(),
        ADMIN_TOKEN: randomUUID().replaceAll('-', ''),
        ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}),
      });
      try {
        const adminPort = Number(new URL(server.adminUrl).port);
        const reach = (host: string, port: number) =>
          new Promise<'connected' | string>((resolve) => {
            const socket = connect({ host, port });
            const settle = (outcome: string) => {
              socket.destroy();
              resolve(outcome);
            };
            socket.setTimeout(3000, () => settle('timeout'));
            socket.once('connect', () => settle('connected'));
            socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
          });
        // Controls: the admin listener is up on loopback; the public one answers on the external address.
        expect(await reach('127.0.0.1', adminPort)).toBe('connected');
        expect(await reach(external!, server.port)).toBe('connected');
        expect(await reach(external!, adminPort)).toBe('ECONNREFUSED');
      } finally {
        await server.stop();
      }
    },
    // A process on the embedded store (without DATABASE_URL) takes a while to open it.
    120_000,
  );
});
