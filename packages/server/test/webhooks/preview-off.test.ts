import { randomUUID } from 'node:crypto';
import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { adminInject } from '@partner-api/testkit/helpers.ts';
import { createPartner, signedInject } from '@partner-api/testkit/partner.ts';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rows } from '../../src/db/query.ts';
import { openApiDocumentOf } from '../../src/routes/docs.ts';
import { ensureCatalog, FIXTURES, insertCustomer, refOf, ussdClient } from '../ussd/support.ts';
import { PREVIEW_ENV } from './api-support.ts';

/** Every path the preview adds (helper C's stream included), with a plausible body. */
const PLANNED: { method: 'GET' | 'POST' | 'PUT'; url: string; body?: unknown }[] = [
  {
    method: 'POST',
    url: '/v1/webhooks',
    body: { url: 'https://hooks.example.com/', subscriptions: ['ALL'] },
  },
  { method: 'PUT', url: '/v1/webhooks', body: { url: 'https://hooks.example.com/' } },
  { method: 'GET', url: '/v1/webhooks' },
  { method: 'POST', url: '/v1/webhooks/test' },
  { method: 'GET', url: '/v1/webhooks/events' },
  { method: 'GET', url: '/v1/webhooks/events?status=FAILED&page=1&limit=10' },
  { method: 'POST', url: `/v1/webhooks/events/${randomUUID()}/resend` },
  { method: 'GET', url: '/v1/webhooks/events/stream?forwardTo=http://localhost:3000/hooks' },
];

const PREVIEW_OPERATIONS = [
  'post /webhooks',
  'put /webhooks',
  'get /webhooks',
  'post /webhooks/test',
  'get /webhooks/events',
  'post /webhooks/events/{eventId}/resend',
];

/**
 * With WEBHOOKS_PREVIEW off (the default), today's contract holds byte for byte: the planned paths
 * are unmatched routes, the document does not list them, and no change writes an event.
 */
describeStores('webhooks preview off (the default) on %s', (store) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp(store);
    await ensureCatalog(t);
  });
  afterAll(() => t.close());

  it('the switch is off and the outbox writes nothing', () => {
    expect(t.ctx.config.WEBHOOKS_PREVIEW).toBe(false);
    expect(t.ctx.events.enabled).toBe(false);
  });

  it('every planned path answers exactly as an unmatched route, signed or not', async () => {
    const partner = await createPartner(t);
    const unmatched = await t.app.inject({ method: 'GET', url: '/v1/no-such-route' });
    expect([unmatched.statusCode, unmatched.body]).toEqual([404, '{"error":"Not Found"}']);
    for (const route of PLANNED) {
      const bare = await t.app.inject({
        method: route.method,
        url: route.url,
        ...(route.body ? { payload: route.body as object } : {}),
      });
      const signed = await signedInject(t.app, partner, route);
      for (const res of [bare, signed]) {
        expect([route.url, res.statusCode, res.body, res.headers['content-type']]).toEqual([
          route.url,
          404,
          '{"error":"Not Found"}',
          unmatched.headers['content-type'],
        ]);
      }
    }
    // The public key stays where it was.
    expect((await t.app.inject({ method: 'GET', url: '/v1/webhooks/key' })).statusCode).toBe(200);
  });

  it('the OpenAPI document lists none of them and says nothing of a preview', async () => {
    const served = await t.app.inject({ method: 'GET', url: '/v1/openapi.json' });
    const document = served.json();
    expect(Object.keys(document.paths).filter((p) => p.startsWith('/webhooks'))).toEqual(['/webhooks/key']);
    expect(Object.keys(document.paths['/webhooks/key'])).toEqual(['get']);
    expect(served.body).not.toContain('x-preview');
    expect(served.body).not.toContain('**Preview.**');
    expect(Object.keys(document.components.schemas).filter((n) => /^Webhook(?!Jwk|Key)/.test(n))).toEqual([]);
  });

  it('creating and changing a customer, placing and settling orders, issuing and revoking tokens write no event', async () => {
    const partner = await createPartner(t);
    const created = await signedInject(t.app, partner, {
      method: 'POST',
      url: '/v1/customers',
      body: { firstName: 'Amina', lastName: 'Otieno', msisdn: '254712000009' },
    });
    expect(created.statusCode).toBe(201);
    const customerId = created.json().data.id;
    const patched = await signedInject(t.app, partner, {
      method: 'PATCH',
      url: `/v1/customers/${customerId}`,
      body: { lastName: 'Kamau' },
    });
    expect(patched.statusCode).toBe(200);

    const client = ussdClient(t, partner);
    const bought = await client.walk(customerId, ['1', '8', FIXTURES.buy.symbol, '1', '1', '1002', '1']);
    const orderId = refOf(bought);
    const [payment] = await rows<{ id: string }>(
      t.ctx.database.db,
      sql`select id from transactions where order_id = ${orderId}`,
    );
    const settled = await adminInject(t, 'POST', `/admin/transactions/${payment!.id}/settle`, {
      status: 'SUCCESS',
    });
    expect(settled.statusCode).toBe(200);
    const other = await insertCustomer(t, partner, { msisdn: '254712000010' });
    const pending = await client.walk(other, ['1', '8', FIXTURES.cancel.symbol, '1', '1', '1002', '1']);
    expect(pending.currentState).toBe('BUY_SUBMITTED');
    const cancelled = await client.walk(other, ['2', '1', '1', '1', '1']);
    expect(cancelled.currentState).not.toBe('ERROR');

    const token = await t.app.inject({
      method: 'POST',
      url: '/v1/oauth/token',
      payload: { clientId: partner.clientId, clientSecret: partner.clientSecret },
    });
    expect(token.statusCode).toBe(200);
    const revoked = await signedInject(
      t.app,
      { ...partner, token: token.json().token },
      {
        method: 'POST',
        url: '/v1/oauth/revoke',
      },
    );
    expect(revoked.statusCode).toBe(200);

    const orders = await rows<{ status: string }>(
      t.ctx.database.db,
      sql`select status from orders where organization_id = ${partner.organizationId} order by status`,
    );
    expect(orders).toEqual([{ status: 'CANCELLED' }, { status: 'EXECUTED' }]);
    const written = await rows<{ n: number }>(
      t.ctx.database.db,
      sql`select count(*)::int as n from webhook_events where organization_id = ${partner.organizationId}`,
    );
    expect(written).toEqual([{ n: 0 }]);
  });
});

describe('webhooks preview on: the document marks the operations', () => {
  it('lists the six operations, each x-preview with the preview note, and only those', async () => {
    const [off, on] = [await buildTestApp('pglite'), await buildTestApp('pglite', PREVIEW_ENV)];
    try {
      const offDocument = openApiDocumentOf(off.app)!;
      const onDocument = openApiDocumentOf(on.app)!;
      const operations = (document: typeof onDocument) =>
        Object.entries(document.paths).flatMap(([path, ops]) =>
          Object.entries(ops).map(([method, op]) => ({ key: `${method} ${path}`, op })),
        );
      const added = operations(onDocument).filter(
        ({ key }) => !operations(offDocument).some((o) => o.key === key),
      );
      expect(added.map((a) => a.key).sort()).toEqual([...PREVIEW_OPERATIONS].sort());
      for (const { op } of added) {
        expect(op['x-preview']).toBe(true);
        expect(op.description).toMatch(/^\*\*Preview\.\*\* /);
        expect(op.tags).toEqual(['Webhooks']);
      }
      for (const { key, op } of operations(onDocument).filter(
        ({ key }) => !PREVIEW_OPERATIONS.includes(key),
      )) {
        expect([key, op['x-preview']]).toEqual([key, undefined]);
      }
    } finally {
      await off.close();
      await on.close();
    }
  });
});
