import { createId } from '@partner-api/contract';
import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { adminInject, NOT_FOUND_BODY } from '@partner-api/testkit/helpers.ts';
import { createPartner, signedInject } from '@partner-api/testkit/partner.ts';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { rows } from '../../src/db/query.ts';
import { INVESTMENT_OPERATIONS } from '../../src/openapi/investments/index.ts';
import { openApiDocumentOf } from '../../src/routes/docs.ts';
import { settleDueExecutions } from '../../src/services/orders/life.ts';
import { ensureCatalog, insertCustomer, orderRow, refOf, ussdClient, waitFor } from '../ussd/support.ts';

const id = createId();
/** Every path of the investments API, with a body for each mutation. */
const PATHS: { method: 'GET' | 'POST' | 'PATCH'; url: string; body?: unknown }[] = [
  { method: 'GET', url: '/v1/investment-types' },
  { method: 'GET', url: '/v1/instruments' },
  { method: 'GET', url: `/v1/instruments/${id}` },
  { method: 'GET', url: `/v1/instruments/${id}/prices` },
  { method: 'POST', url: '/v1/accounts', body: { customerId: id } },
  { method: 'GET', url: '/v1/accounts' },
  { method: 'GET', url: `/v1/accounts/${id}` },
  { method: 'PATCH', url: `/v1/accounts/${id}`, body: { language: 'sw' } },
  { method: 'GET', url: `/v1/accounts/${id}/assets` },
  { method: 'GET', url: `/v1/accounts/${id}/portfolio` },
  {
    method: 'POST',
    url: '/v1/requests',
    body: { customerId: id, instrumentId: id, side: 'BUY', amount: '1000' },
  },
  { method: 'GET', url: '/v1/requests' },
  { method: 'GET', url: `/v1/requests/${id}` },
  { method: 'POST', url: `/v1/requests/${id}/cancel`, body: {} },
  { method: 'GET', url: '/v1/transactions' },
  { method: 'GET', url: `/v1/transactions/${id}` },
  { method: 'GET', url: '/v1/reports' },
  { method: 'GET', url: `/v1/reports/${id}` },
];

/**
 * INVESTMENTS_PREVIEW off (the default): the contract partners code against today is unchanged.
 * Every new path answers as an unknown route, the OpenAPI document does not list them, and no
 * event of the new domains is written (docs/investments.md).
 */
const REQUEST_EVENT_FIELDS = [
  'orderId',
  'customerId',
  'stockId',
  'side',
  'status',
  'amount',
  'currency',
  'quantity',
  'price',
  'createdAt',
  'updatedAt',
];

describeStores('the investments API switched off on %s', (store) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp(store, { WEBHOOKS_PREVIEW: 'true', SANDBOX_SETTLE_MS: '200' });
  });
  afterAll(() => t?.close());

  it('every path answers as an unknown route, signed and idempotent or not', async () => {
    expect(t.ctx.config.INVESTMENTS_PREVIEW).toBe(false);
    const partner = await createPartner(t);
    for (const path of PATHS) {
      const signed = await signedInject(t.app, partner, {
        ...path,
        ...(path.method !== 'GET' ? { headers: { 'x-idempotency-key': crypto.randomUUID() } } : {}),
      });
      expect([path.url, signed.statusCode, signed.body]).toEqual([path.url, 404, NOT_FOUND_BODY]);
      const bare = await t.app.inject({ method: path.method, url: path.url });
      expect([path.url, bare.statusCode, bare.body]).toEqual([path.url, 404, NOT_FOUND_BODY]);
    }
  });

  it('the OpenAPI document lists none of them, nor their tag', () => {
    const document = openApiDocumentOf(t.app)!;
    const listed = Object.keys(document.paths);
    for (const key of Object.keys(INVESTMENT_OPERATIONS)) {
      const path = key.slice(key.indexOf(' ') + 1).replace('/v1', '');
      expect(listed.some((p) => p === path.replace(/:([A-Za-z0-9_]+)/g, '{$1}'))).toBe(false);
    }
    expect(document.tags.map((tag) => tag.name)).not.toContain('Investments (preview)');
  });

  it('a USSD buy, its settlement and a listing write no event of the new domains, nor new data', async () => {
    const { startPayments } = await import('../../src/services/payments/pipeline/start.ts');
    const simulator = startPayments(t.ctx, t.app.log);
    try {
      await ensureCatalog(t);
      const partner = await createPartner(t);
      const customerId = await insertCustomer(t, partner);
      const bought = await ussdClient(t, partner).walk(customerId, ['1', '8', 'ZZBUY', '1', '1', '100', '1']);
      const orderId = refOf(bought);
      await waitFor(async () => ((await orderRow(t, orderId))?.status === 'EXECUTED' ? true : undefined));
      await settleDueExecutions(t.ctx.database.db, new Date(Date.now() + 8 * 86_400_000), t.ctx.events);
      const listed = await adminInject(t, 'POST', '/admin/stocks', [
        {
          symbol: `ZO${createId().slice(-6).toUpperCase()}`,
          name: 'Off Holdings',
          price: '1.0000',
          currency: 'KES',
        },
      ]);
      expect(listed.statusCode).toBe(200);
      const events = await rows<{ event: string; data: Record<string, unknown> }>(
        t.ctx.database.db,
        sql`select event, data from webhook_events where organization_id = ${partner.organizationId} order by event`,
      );
      // REQUEST.* carry the webhooks preview's fields alone (docs/webhooks.md), not the request resource.
      for (const { event, data } of events.filter((e) => e.event.startsWith('REQUEST.')))
        expect([event, Object.keys(data).sort()]).toEqual([event, [...REQUEST_EVENT_FIELDS].sort()]);
      const domains = new Set(events.map((e) => e.event.slice(0, e.event.indexOf('.'))));
      expect(domains.has('REQUEST')).toBe(true); // the outbox is on: the buy's own events are there
      for (const domain of ['ACCOUNT', 'ASSET', 'INSTRUMENT', 'INVESTMENT_TYPE', 'PORTFOLIO', 'REPORT'])
        expect(domains.has(domain), domain).toBe(false);
    } finally {
      await simulator.stop();
    }
  });
});

describeStores('the investments API switched on on %s', (store) => {
  let on: TestApp;
  let off: TestApp;
  beforeAll(async () => {
    on = await buildTestApp(store, { INVESTMENTS_PREVIEW: 'true' });
    off = await buildTestApp(store);
  });
  afterAll(async () => {
    await on?.close();
    await off?.close();
  });

  it('the document lists every operation, marked preview, under its tag; the rest is as when off', () => {
    const document = openApiDocumentOf(on.app)!;
    const shape = (key: string) => key.replace(/\{[^}]+\}/g, '{}');
    const mine: string[] = [];
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, op] of Object.entries(item) as [
        string,
        { tags?: string[]; 'x-preview'?: boolean },
      ][]) {
        if (!op.tags?.includes('Investments (preview)')) continue;
        expect(op['x-preview'], `${method} ${path}`).toBe(true);
        mine.push(shape(`${method} ${path}`));
        delete (item as Record<string, unknown>)[method];
      }
      if (Object.keys(item).length === 0) delete document.paths[path];
    }
    expect(mine.sort()).toEqual(
      PATHS.map((p) =>
        shape(`${p.method.toLowerCase()} ${p.url.replace('/v1', '').replaceAll(id, '{id}')}`),
      ).sort(),
    );
    // Without them (and their tag and schemas), the document is the one partners have today.
    const before = openApiDocumentOf(off.app)!;
    document.tags = document.tags.filter((tag) => tag.name !== 'Investments (preview)');
    expect(document.paths).toEqual(before.paths);
    expect(document.tags).toEqual(before.tags);
    for (const [name, schema] of Object.entries(before.components.schemas))
      expect(document.components.schemas[name], name).toEqual(schema);
  });
});
