import { randomUUID } from 'node:crypto';
import { CUID_PATTERN } from '@partner-api/contract';
import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { authSuite, type RouteCase } from '@partner-api/testkit/auth-suite.ts';
import { createPartner, type Partner, signedInject } from '@partner-api/testkit/partner.ts';
import { sql } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { one, rows, run } from '../../src/db/query.ts';
import { dataOf, eventsOf, PREVIEW_ENV } from './api-support.ts';

const URL_A = 'https://hooks.example.com/partner-api';
const validation = (...details: [string, string][]) => ({
  error: 'Validation failed',
  details: details.map(([field, message]) => ({ field, message })),
});
const SURROGATE = 'must be valid Unicode text (an unpaired surrogate was sent)';
const notFound = (message: string) => ({ error: 'Not found', message });
const NO_WEBHOOK = notFound('Webhook not found');
const DEACTIVATED = {
  error: 'Conflict',
  message: 'Webhook is DEACTIVED; re-activate it with PUT /webhooks',
};

describeStores('webhook configuration API (preview on) on %s', (store) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp(store, PREVIEW_ENV);
  });
  afterAll(() => t.close());
  afterEach(() => {
    t.ctx.webhookLookup = undefined;
  });

  const call = (
    partner: Partner,
    method: 'GET' | 'POST' | 'PUT',
    url: string,
    body?: unknown,
    key?: string,
  ) => signedInject(t.app, partner, { method, url, body, idempotencyKey: key });
  const register = async (partner: Partner, body: unknown = { url: URL_A, subscriptions: ['CUSTOMER'] }) => {
    const res = await call(partner, 'POST', '/v1/webhooks', body);
    expect(res.statusCode, res.body).toBe(201);
    return res.json().data;
  };
  const webhookRows = (partner: Partner) =>
    rows<{ id: string }>(
      t.ctx.database.db,
      sql`select id from webhooks where organization_id = ${partner.organizationId}`,
    );
  const deliveriesOf = (eventId: string) =>
    rows<{ id: string; state: string; webhookId: string }>(
      t.ctx.database.db,
      sql`select id, state, webhook_id as "webhookId" from webhook_deliveries where event_id = ${eventId}`,
    );
  const deactivate = (partner: Partner) =>
    run(
      t.ctx.database.db,
      sql`update webhooks set status = 'DEACTIVED', disabled_reason = 'failing for 5 days: HTTP 500',
  disabled_at = now(), failing_since = now() - interval '5 days' where organization_id = ${partner.organizationId}`,
    );

  describe('POST /v1/webhooks', () => {
    it('201 with the webhook; WEBHOOK.CREATED is written and queued for the new webhook', async () => {
      const partner = await createPartner(t);
      const before = Math.floor(Date.now() / 1000);
      const res = await call(partner, 'POST', '/v1/webhooks', {
        url: 'https://Hooks.Example.com:443/partner-api',
        subscriptions: ['CUSTOMER', 'REQUEST.UPDATED', 'CUSTOMER'],
      });
      expect(res.statusCode, res.body).toBe(201);
      const data = res.json().data;
      expect(data).toEqual({
        webhookId: expect.stringMatching(CUID_PATTERN),
        status: 'ACTIVE',
        url: URL_A,
        subscriptions: ['CUSTOMER', 'REQUEST.UPDATED', 'WEBHOOK.CREATED'],
        createdAt: expect.any(Number),
        updatedAt: data.createdAt,
        disabledReason: null,
        disabledAt: null,
      });
      expect(data.createdAt).toBeGreaterThanOrEqual(before - 1);
      const got = await call(partner, 'GET', '/v1/webhooks');
      expect([got.statusCode, got.json()]).toEqual([200, { data }]);

      const created = (await eventsOf(t, partner.organizationId)).filter(
        (e) => e.event === 'WEBHOOK.CREATED',
      );
      expect(created.map((e) => e.data)).toEqual([
        {
          webhookId: data.webhookId,
          status: 'ACTIVE',
          url: URL_A,
          subscriptions: ['CUSTOMER', 'REQUEST.UPDATED', 'WEBHOOK.CREATED'],
          createdAt: data.createdAt,
          updatedAt: data.updatedAt,
        },
      ]);
      expect(await deliveriesOf(created[0]!.eventId)).toEqual([
        { id: expect.any(String), state: 'PENDING', webhookId: data.webhookId },
      ]);
    });

    it('an empty subscription list is stored as WEBHOOK.CREATED alone', async () => {
      const partner = await createPartner(t);
      const data = await register(partner, { url: URL_A, subscriptions: [] });
      expect(data.subscriptions).toEqual(['WEBHOOK.CREATED']);
    });

    it('409 when the organization already has one; nothing changes', async () => {
      const partner = await createPartner(t);
      const first = await register(partner);
      const again = await call(partner, 'POST', '/v1/webhooks', {
        url: 'https://other.example.com/',
        subscriptions: ['ALL'],
      });
      expect([again.statusCode, again.json()]).toEqual([
        409,
        {
          error: 'Conflict',
          message: 'A webhook already exists for this organization; change it with PUT /webhooks',
        },
      ]);
      expect((await call(partner, 'GET', '/v1/webhooks')).json().data).toEqual(first);
      expect(await dataOf(t, partner.organizationId, 'WEBHOOK.CREATED')).toHaveLength(1);
    });

    const refusals: [string, unknown, ReturnType<typeof validation>][] = [
      [
        'empty body',
        {},
        validation(['url', 'url is required'], ['subscriptions', 'subscriptions is required']),
      ],
      [
        'wrong types',
        { url: 7, subscriptions: 'ALL' },
        validation(
          ['url', 'url must be a string'],
          ['subscriptions', 'subscriptions must be an array of names'],
        ),
      ],
      [
        'unknown field',
        { url: URL_A, subscriptions: ['ALL'], secret: 'x' },
        validation(['secret', 'Unknown field']),
      ],
      ['not a URL', { url: 'hooks', subscriptions: ['ALL'] }, validation(['url', 'url must be a valid URL'])],
      [
        'http',
        { url: 'http://hooks.example.com/', subscriptions: ['ALL'] },
        validation(['url', 'url must use https']),
      ],
      [
        'userinfo',
        { url: 'https://user:pw@hooks.example.com/', subscriptions: ['ALL'] },
        validation(['url', 'url must not carry credentials']),
      ],
      ...[
        'https://127.0.0.1/',
        'https://2130706433/',
        'https://0x7f.1/',
        'https://[::ffff:127.0.0.1]/',
        'https://[::1]/',
      ].map((url): [string, unknown, ReturnType<typeof validation>] => [
        `IP literal ${url}`,
        { url, subscriptions: ['ALL'] },
        validation(['url', 'url host must be a DNS name, not an IP address']),
      ]),
      [
        'unknown subscriptions, one detail each',
        {
          url: URL_A,
          subscriptions: ['CUSTOMER', 'CUSTOMERS', 'ALL', 'customer.created', 'TRANSACTION.CREATED'],
        },
        validation(
          ['subscriptions[1]', 'Unknown subscription: CUSTOMERS'],
          ['subscriptions[3]', 'Unknown subscription: customer.created'],
          ['subscriptions[4]', 'Unknown subscription: TRANSACTION.CREATED'],
        ),
      ],
      [
        'a bad URL and a bad name together',
        { url: 'ftp://hooks.example.com/', subscriptions: ['NOPE'] },
        validation(['url', 'url must use https'], ['subscriptions[0]', 'Unknown subscription: NOPE']),
      ],
      [
        'a long unknown name is cut in the message',
        { url: URL_A, subscriptions: ['X'.repeat(200)] },
        validation(['subscriptions[0]', `Unknown subscription: ${'X'.repeat(64)}…`]),
      ],
      [
        'a lone surrogate in the URL',
        { url: 'https://hooks.example.com/\ud800', subscriptions: ['ALL'] },
        validation(['url', SURROGATE]),
      ],
      [
        'a lone surrogate in a subscription name (named as zod names an entry)',
        { url: URL_A, subscriptions: ['CUSTOMER', 'ALL\udfff'] },
        validation(['subscriptions.1', SURROGATE]),
      ],
      [
        'too many entries',
        { url: URL_A, subscriptions: Array.from({ length: 51 }, () => 'ALL') },
        validation(['subscriptions', 'subscriptions must have at most 50 entries']),
      ],
    ];
    for (const [name, body, expected] of refusals) {
      it(`400 ${name}, and nothing is written`, async () => {
        const partner = await createPartner(t);
        const res = await call(partner, 'POST', '/v1/webhooks', body);
        expect([res.statusCode, res.json()]).toEqual([400, expected]);
        expect(await webhookRows(partner)).toEqual([]);
      });
    }

    it('400 for hosts resolving to non-public addresses or not at all (private targets not allowed)', async () => {
      const strict = await buildTestApp(store, { WEBHOOKS_PREVIEW: 'true' });
      try {
        const table: Record<string, string[]> = {
          'public.example.com': ['93.184.216.34'],
          'loopback.example.com': ['127.0.0.1'],
          'private.example.com': ['10.1.2.3'],
          'linklocal.example.com': ['169.254.169.254'],
          'mapped.example.com': ['::ffff:10.0.0.1'],
          'mixed.example.com': ['93.184.216.34', '192.168.1.1'],
        };
        strict.ctx.webhookLookup = async (host) => {
          const addresses = table[host];
          if (!addresses) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
          return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
        };
        const partner = await createPartner(strict);
        const registerHost = (host: string) =>
          signedInject(strict.app, partner, {
            method: 'POST',
            url: '/v1/webhooks',
            body: { url: `https://${host}.example.com/h`, subscriptions: ['ALL'] },
          });
        const answers = [];
        for (const host of ['loopback', 'private', 'linklocal', 'mapped', 'mixed', 'nowhere']) {
          const res = await registerHost(host);
          answers.push([host, res.statusCode, res.json()]);
        }
        const nonPublic = validation(['url', 'url host resolves to a non-public address']);
        expect(answers).toEqual([
          ...['loopback', 'private', 'linklocal', 'mapped', 'mixed'].map((host) => [host, 400, nonPublic]),
          ['nowhere', 400, validation(['url', 'url host does not resolve'])],
        ]);
        const ok = await registerHost('public');
        expect(ok.statusCode, ok.body).toBe(201);
      } finally {
        await strict.close();
      }
    });

    it('idempotent: a replay answers the stored 201 (one webhook), a stored 400 is replayed too', async () => {
      const partner = await createPartner(t);
      const key = randomUUID();
      const body = { url: URL_A, subscriptions: ['ALL'] };
      const first = await call(partner, 'POST', '/v1/webhooks', body, key);
      const replay = await call(partner, 'POST', '/v1/webhooks', body, key);
      expect(first.statusCode).toBe(201);
      expect([replay.statusCode, replay.body, replay.headers['idempotent-replayed']]).toEqual([
        201,
        first.body,
        'true',
      ]);
      expect(await webhookRows(partner)).toHaveLength(1);
      expect(await dataOf(t, partner.organizationId, 'WEBHOOK.CREATED')).toHaveLength(1);

      const other = await createPartner(t);
      const badKey = randomUUID();
      const bad = { url: 'http://hooks.example.com/', subscriptions: ['ALL'] };
      const refused = await call(other, 'POST', '/v1/webhooks', bad, badKey);
      const replayed = await call(other, 'POST', '/v1/webhooks', bad, badKey);
      expect(refused.statusCode).toBe(400);
      expect([replayed.statusCode, replayed.body, replayed.headers['idempotent-replayed']]).toEqual([
        400,
        refused.body,
        'true',
      ]);
    });
  });

  describe('PUT and GET /v1/webhooks', () => {
    it('404 without a webhook, for both', async () => {
      const partner = await createPartner(t);
      const got = await call(partner, 'GET', '/v1/webhooks');
      const put = await call(partner, 'PUT', '/v1/webhooks', { url: URL_A });
      expect([got.statusCode, got.json()]).toEqual([404, NO_WEBHOOK]);
      expect([put.statusCode, put.json()]).toEqual([404, NO_WEBHOOK]);
      expect(await dataOf(t, partner.organizationId, 'WEBHOOK.UPDATED')).toEqual([]);
    });

    it('changes the url alone, then replaces the subscriptions; each change emits WEBHOOK.UPDATED', async () => {
      const partner = await createPartner(t);
      const created = await register(partner, { url: URL_A, subscriptions: ['CUSTOMER', 'AUTH'] });
      const moved = await call(partner, 'PUT', '/v1/webhooks', { url: 'https://new.example.com/hooks' });
      expect(moved.statusCode, moved.body).toBe(200);
      expect(moved.json().data).toEqual({
        ...created,
        url: 'https://new.example.com/hooks',
        updatedAt: expect.any(Number),
      });
      const narrowed = await call(partner, 'PUT', '/v1/webhooks', { subscriptions: ['ALL', 'ALL'] });
      expect(narrowed.json().data).toMatchObject({
        url: 'https://new.example.com/hooks',
        subscriptions: ['ALL', 'WEBHOOK.CREATED'],
      });
      const got = await call(partner, 'GET', '/v1/webhooks');
      expect(got.json()).toEqual({ data: narrowed.json().data });
      const updates = await dataOf(t, partner.organizationId, 'WEBHOOK.UPDATED');
      expect(updates).toHaveLength(2);
      const { disabledReason: _r, disabledAt: _a, ...fields } = narrowed.json().data;
      expect(updates).toContainEqual(fields);
    });

    it('400 for an empty body and for each bad field, with nothing changed', async () => {
      const partner = await createPartner(t);
      const created = await register(partner);
      const cases: [unknown, ReturnType<typeof validation>][] = [
        [{}, validation(['', 'Provide url and/or subscriptions'])],
        [{ url: 'http://x.example.com/' }, validation(['url', 'url must use https'])],
        [
          { subscriptions: ['ALL', 'EVERYTHING'] },
          validation(['subscriptions[1]', 'Unknown subscription: EVERYTHING']),
        ],
        [{ url: URL_A, enabled: true }, validation(['enabled', 'Unknown field'])],
        [{ url: `${URL_A}/\udbff` }, validation(['url', SURROGATE])],
        [{ subscriptions: ['\ud83dALL'] }, validation(['subscriptions.0', SURROGATE])],
      ];
      for (const [body, expected] of cases) {
        const res = await call(partner, 'PUT', '/v1/webhooks', body);
        expect([body, res.statusCode, res.json()]).toEqual([body, 400, expected]);
      }
      expect((await call(partner, 'GET', '/v1/webhooks')).json().data).toEqual(created);
    });

    it('GET shows a DEACTIVED webhook with its reason; PUT re-activates it and clears the reason', async () => {
      const partner = await createPartner(t);
      await register(partner, { url: URL_A, subscriptions: ['WEBHOOK'] });
      await deactivate(partner);
      const got = (await call(partner, 'GET', '/v1/webhooks')).json().data;
      expect(got).toMatchObject({
        status: 'DEACTIVED',
        disabledReason: 'failing for 5 days: HTTP 500',
        disabledAt: expect.any(Number),
      });
      const put = await call(partner, 'PUT', '/v1/webhooks', { url: URL_A });
      expect(put.json().data).toMatchObject({ status: 'ACTIVE', disabledReason: null, disabledAt: null });
      const row = await one<{ failingSince: string | null }>(
        t.ctx.database.db,
        sql`select failing_since::text as "failingSince" from webhooks where organization_id = ${partner.organizationId}`,
      );
      expect(row).toEqual({ failingSince: null });
      // The update is delivered to the webhook it re-activated.
      const [updated] = (await eventsOf(t, partner.organizationId)).filter(
        (e) => e.event === 'WEBHOOK.UPDATED',
      );
      expect(await deliveriesOf(updated!.eventId)).toHaveLength(1);
    });
  });

  describe('POST /v1/webhooks/test', () => {
    it('202 with a fresh WEBHOOK.CREATED carrying the current data, queued for the webhook', async () => {
      const partner = await createPartner(t);
      const webhook = await register(partner, { url: URL_A, subscriptions: ['TRANSACTION'] });
      const res = await call(partner, 'POST', '/v1/webhooks/test');
      expect(res.statusCode, res.body).toBe(202);
      const { eventId, event } = res.json().data;
      expect(event).toBe('WEBHOOK.CREATED');
      const stored = (await eventsOf(t, partner.organizationId)).find((e) => e.eventId === eventId);
      expect(stored?.data).toEqual({
        webhookId: webhook.webhookId,
        status: 'ACTIVE',
        url: URL_A,
        subscriptions: ['TRANSACTION', 'WEBHOOK.CREATED'],
        createdAt: webhook.createdAt,
        updatedAt: webhook.updatedAt,
      });
      expect(await deliveriesOf(eventId)).toEqual([
        { id: expect.any(String), state: 'PENDING', webhookId: webhook.webhookId },
      ]);
      const second = await call(partner, 'POST', '/v1/webhooks/test');
      expect(second.json().data.eventId).not.toBe(eventId);
    });

    it('404 without a webhook, 409 when DEACTIVED; no event either way', async () => {
      const partner = await createPartner(t);
      const none = await call(partner, 'POST', '/v1/webhooks/test');
      expect([none.statusCode, none.json()]).toEqual([404, NO_WEBHOOK]);
      await register(partner);
      await deactivate(partner);
      const off = await call(partner, 'POST', '/v1/webhooks/test');
      expect([off.statusCode, off.json()]).toEqual([409, DEACTIVATED]);
      expect(await dataOf(t, partner.organizationId, 'WEBHOOK.CREATED')).toHaveLength(1);
    });
  });

  describe('GET /v1/webhooks/events and resend', () => {
    /** Gives an event's latest delivery a state and attempts, as the delivery worker records them. */
    async function recordAttempts(
      eventId: string,
      state: 'DELIVERED' | 'FAILED',
      attempts: { httpStatus: number | null; error: string | null }[],
    ) {
      const [delivery] = await deliveriesOf(eventId);
      const db = t.ctx.database.db;
      await run(db, sql`update webhook_deliveries set state = ${state} where id = ${delivery!.id}`);
      for (const [i, a] of attempts.entries()) {
        await run(
          db,
          sql`insert into webhook_attempts (id, delivery_id, event_id, at, http_status, latency_ms, error)
  values (${randomUUID()}, ${delivery!.id}, ${eventId}, now() + make_interval(secs => ${i}), ${a.httpStatus}, ${40 + i}, ${a.error})`,
        );
      }
    }

    it('lists 30 days newest first with the latest delivery state and every attempt; filters by status', async () => {
      const partner = await createPartner(t);
      await register(partner, { url: URL_A, subscriptions: ['CUSTOMER'] });
      const customer = await call(partner, 'POST', '/v1/customers', { firstName: 'Ada', lastName: 'Byron' });
      expect(customer.statusCode).toBe(201);
      const events = await eventsOf(t, partner.organizationId);
      const idOf = (name: string) => events.find((e) => e.event === name)!.eventId;
      await recordAttempts(idOf('WEBHOOK.CREATED'), 'DELIVERED', [
        { httpStatus: 500, error: null },
        { httpStatus: 200, error: null },
      ]);
      await recordAttempts(idOf('CUSTOMER.CREATED'), 'FAILED', [
        { httpStatus: null, error: 'timeout after 10 s' },
      ]);
      // An event older than 30 days is no longer listed.
      await run(
        t.ctx.database.db,
        sql`insert into webhook_events (id, organization_id, event, data, created_at)
  values (${randomUUID()}, ${partner.organizationId}, 'AUTH.CREATED', '{}'::jsonb, now() - interval '31 days')`,
      );

      const res = await call(partner, 'GET', '/v1/webhooks/events');
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json();
      expect(body.pagination).toEqual({ page: 1, limit: 10, total: 3, totalPages: 1 });
      const byEvent = Object.fromEntries(body.data.map((e: { event: string }) => [e.event, e]));
      expect(byEvent['AUTH.CREATED']).toMatchObject({ status: 'NOT_SUBSCRIBED', attempts: [] });
      expect(byEvent['WEBHOOK.CREATED']).toEqual({
        eventId: idOf('WEBHOOK.CREATED'),
        event: 'WEBHOOK.CREATED',
        createdAt: expect.any(Number),
        data: events.find((e) => e.event === 'WEBHOOK.CREATED')!.data,
        status: 'DELIVERED',
        attempts: [
          { at: expect.any(Number), httpStatus: 500, latencyMs: 40, error: null },
          { at: expect.any(Number), httpStatus: 200, latencyMs: 41, error: null },
        ],
      });
      expect(byEvent['CUSTOMER.CREATED']).toMatchObject({
        status: 'FAILED',
        data: customer.json().data,
        attempts: [{ at: expect.any(Number), httpStatus: null, latencyMs: 40, error: 'timeout after 10 s' }],
      });
      // The token came first, so it is listed last.
      expect(body.data.at(-1).event).toBe('AUTH.CREATED');
      const times = body.data.map((e: { createdAt: number }) => e.createdAt);
      expect(times).toEqual([...times].sort((a, b) => b - a));

      const failed = (await call(partner, 'GET', '/v1/webhooks/events?status=FAILED')).json();
      expect(failed.data.map((e: { event: string }) => e.event)).toEqual(['CUSTOMER.CREATED']);
      expect(failed.pagination).toEqual({ page: 1, limit: 10, total: 1, totalPages: 1 });
      const pending = (await call(partner, 'GET', '/v1/webhooks/events?status=PENDING')).json();
      expect(pending.data).toEqual([]);
      const page2 = (await call(partner, 'GET', '/v1/webhooks/events?page=2&limit=2')).json();
      expect(page2.pagination).toEqual({ page: 2, limit: 2, total: 3, totalPages: 2 });
      expect(page2.data).toEqual([body.data[2]]);
    });

    it('400 for a bad query, each message exact', async () => {
      const partner = await createPartner(t);
      const cases: [string, ReturnType<typeof validation>][] = [
        ['status=NOT_SUBSCRIBED', validation(['status', 'status must be one of PENDING, DELIVERED, FAILED'])],
        ['limit=101', validation(['limit', 'limit must be at most 100'])],
        ['page=0', validation(['page', 'page must be at least 1'])],
        ['since=1', validation(['since', 'Unknown field'])],
      ];
      for (const [query, expected] of cases) {
        const res = await call(partner, 'GET', `/v1/webhooks/events?${query}`);
        expect([query, res.statusCode, res.json()]).toEqual([query, 400, expected]);
      }
    });

    it('resend: 202 and a new PENDING delivery of the same event; 400, 404 and 409 as documented', async () => {
      const partner = await createPartner(t);
      const [auth] = await eventsOf(t, partner.organizationId);
      const noWebhook = await call(partner, 'POST', `/v1/webhooks/events/${auth!.eventId}/resend`);
      expect([noWebhook.statusCode, noWebhook.json()]).toEqual([404, NO_WEBHOOK]);

      const webhook = await register(partner, { url: URL_A, subscriptions: ['CUSTOMER'] });
      // Not subscribed to AUTH: a resend still delivers it (asked for by id).
      const res = await call(partner, 'POST', `/v1/webhooks/events/${auth!.eventId.toUpperCase()}/resend`);
      expect(res.statusCode, res.body).toBe(202);
      expect(res.json()).toEqual({ data: { eventId: auth!.eventId, deliveryId: expect.any(String) } });
      expect(await deliveriesOf(auth!.eventId)).toEqual([
        { id: res.json().data.deliveryId, state: 'PENDING', webhookId: webhook.webhookId },
      ]);
      const again = await call(partner, 'POST', `/v1/webhooks/events/${auth!.eventId}/resend`);
      expect(again.statusCode).toBe(202);
      expect(await deliveriesOf(auth!.eventId)).toHaveLength(2);

      const unknown = await call(partner, 'POST', `/v1/webhooks/events/${randomUUID()}/resend`);
      expect([unknown.statusCode, unknown.json()]).toEqual([404, notFound('Event not found')]);
      const malformed = await call(partner, 'POST', '/v1/webhooks/events/not-a-uuid/resend');
      expect([malformed.statusCode, malformed.json()]).toEqual([
        400,
        validation(['eventId', 'Invalid event ID format']),
      ]);
      await deactivate(partner);
      const off = await call(partner, 'POST', `/v1/webhooks/events/${auth!.eventId}/resend`);
      expect([off.statusCode, off.json()]).toEqual([409, DEACTIVATED]);
    });
  });

  it("cross-organization: GET, PUT, test, events and resend never reach another organization's webhook", async () => {
    const owner = await createPartner(t);
    const stranger = await createPartner(t);
    const webhook = await register(owner, { url: URL_A, subscriptions: ['ALL'] });
    const ownerEvents = await eventsOf(t, owner.organizationId);

    const got = await call(stranger, 'GET', '/v1/webhooks');
    expect([got.statusCode, got.json()]).toEqual([404, NO_WEBHOOK]);
    const put = await call(stranger, 'PUT', '/v1/webhooks', { url: 'https://evil.example.com/' });
    expect([put.statusCode, put.json()]).toEqual([404, NO_WEBHOOK]);
    const test = await call(stranger, 'POST', '/v1/webhooks/test');
    expect([test.statusCode, test.json()]).toEqual([404, NO_WEBHOOK]);
    for (const e of ownerEvents) {
      const resend = await call(stranger, 'POST', `/v1/webhooks/events/${e.eventId}/resend`);
      expect([resend.statusCode, resend.json()]).toEqual([404, notFound('Event not found')]);
    }
    // Even once the stranger has a webhook of its own, the owner's events stay unknown to it.
    await register(stranger);
    const resend = await call(stranger, 'POST', `/v1/webhooks/events/${ownerEvents[0]!.eventId}/resend`);
    expect([resend.statusCode, resend.json()]).toEqual([404, notFound('Event not found')]);
    const listed = (await call(stranger, 'GET', '/v1/webhooks/events?limit=100')).json().data;
    const ownerIds = new Set(ownerEvents.map((e) => e.eventId));
    expect(listed.filter((e: { eventId: string }) => ownerIds.has(e.eventId))).toEqual([]);
    expect(listed.length).toBeGreaterThan(0);

    expect((await call(owner, 'GET', '/v1/webhooks')).json().data).toEqual(webhook);
    for (const e of ownerEvents) expect((await deliveriesOf(e.eventId)).length).toBeLessThanOrEqual(1);
  });
});

/** A valid request to each webhook route, for the shared authentication and idempotency suite. */
const ROUTES: RouteCase[] = [
  {
    name: 'POST /v1/webhooks',
    mutating: true,
    build: async () => ({
      method: 'POST',
      url: '/v1/webhooks',
      body: { url: URL_A, subscriptions: ['ALL'] },
    }),
    alter: (body) => ({ ...body, url: 'https://other.example.com/' }),
  },
  {
    name: 'PUT /v1/webhooks',
    mutating: true,
    build: async () => ({ method: 'PUT', url: '/v1/webhooks', body: { url: URL_A } }),
    alter: () => ({ subscriptions: ['ALL'] }),
  },
  { name: 'GET /v1/webhooks', mutating: false, build: async () => ({ method: 'GET', url: '/v1/webhooks' }) },
  {
    name: 'POST /v1/webhooks/test',
    mutating: true,
    // A body (ignored), so that the suite's digest case has one to change after signing.
    build: async () => ({ method: 'POST', url: '/v1/webhooks/test', body: {} }),
    alter: () => ({ note: 'another payload' }),
  },
  {
    name: 'GET /v1/webhooks/events',
    mutating: false,
    build: async () => ({ method: 'GET', url: '/v1/webhooks/events?status=FAILED' }),
  },
  {
    name: 'POST /v1/webhooks/events/{eventId}/resend',
    mutating: true,
    build: async (t, p) => {
      const [event] = await eventsOf(t, p.organizationId);
      return {
        method: 'POST',
        url: `/v1/webhooks/events/${event?.eventId ?? randomUUID()}/resend`,
        body: {},
      };
    },
    alter: () => ({ note: 'another payload' }),
  },
];

describeStores('webhook routes pass the shared authentication suite on %s', (store) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp(store, PREVIEW_ENV);
  });
  afterAll(() => t.close());

  for (const route of ROUTES) authSuite(() => t, route);
});
