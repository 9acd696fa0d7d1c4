import { randomUUID } from 'node:crypto';
import {
  createId,
  normalizeSubscriptions,
  subscriptionsCover,
  unknownSubscriptions,
  WEBHOOK_EVENTS,
  type WebhookEventName,
} from '@partner-api/contract';
import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { adminInject } from '@partner-api/testkit/helpers.ts';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rows, run } from '../../src/db/query.ts';
import { PREVIEW_ENV } from './api-support.ts';

const CUSTOMER = ['CUSTOMER.CREATED', 'CUSTOMER.UPDATED'];
const AUTH = ['AUTH.CREATED', 'AUTH.DELETED'];
const REQUEST = ['REQUEST.CREATED', 'REQUEST.UPDATED'];
const TRANSACTION = ['TRANSACTION.CREATED', 'TRANSACTION.UPDATED'];
const WEBHOOK = ['WEBHOOK.CREATED', 'WEBHOOK.UPDATED'];
const ACCOUNT = ['ACCOUNT.CREATED', 'ACCOUNT.UPDATED'];
const ASSET = ['ASSET.CREATED', 'ASSET.UPDATED'];
const INSTRUMENT = ['INSTRUMENT.CREATED', 'INSTRUMENT.UPDATED'];
const PORTFOLIO = ['PORTFOLIO.CREATED', 'PORTFOLIO.UPDATED'];
const REPORT = ['REPORT.CREATED'];
const EVERY = [
  ...ACCOUNT,
  ...ASSET,
  ...AUTH,
  ...CUSTOMER,
  ...INSTRUMENT,
  ...PORTFOLIO,
  ...REPORT,
  ...REQUEST,
  ...TRANSACTION,
  ...WEBHOOK,
];

/**
 * The spec's combination rules (Events, Subscriptions), each with the events it must receive,
 * written out by hand: ALL is every event; a domain alone is that domain; a low-level name alone is
 * that event; high + low is the domain plus that event; ALL + low and ALL + high are ALL.
 */
const RULES: [string, string[], string[]][] = [
  ['ALL alone: every event', ['ALL'], EVERY],
  ['a domain alone: its events (CUSTOMER)', ['CUSTOMER'], CUSTOMER],
  ['a domain alone: its events (AUTH)', ['AUTH'], AUTH],
  ['a domain alone: its events (REQUEST)', ['REQUEST'], REQUEST],
  ['a domain alone: its events (TRANSACTION, our low-level names)', ['TRANSACTION'], TRANSACTION],
  ['a domain alone: its events (WEBHOOK)', ['WEBHOOK'], WEBHOOK],
  ['a domain alone: its events (ACCOUNT)', ['ACCOUNT'], ACCOUNT],
  ['a domain alone: its events (ASSET)', ['ASSET'], ASSET],
  ['a domain alone: its events (PORTFOLIO)', ['PORTFOLIO'], PORTFOLIO],
  ['a domain alone: its events (INSTRUMENT)', ['INSTRUMENT'], INSTRUMENT],
  ['a domain with no events emitted (INVESTMENT_TYPE): nothing', ['INVESTMENT_TYPE'], []],
  ['a low-level name alone: that event (ASSET.UPDATED)', ['ASSET.UPDATED'], ['ASSET.UPDATED']],
  ['a domain alone: its events (REPORT, our low-level name)', ['REPORT'], REPORT],
  ['a low-level name alone: that event (CUSTOMER.CREATED)', ['CUSTOMER.CREATED'], ['CUSTOMER.CREATED']],
  ['a low-level name alone: that event (AUTH.DELETED)', ['AUTH.DELETED'], ['AUTH.DELETED']],
  ['a low-level name alone: that event (WEBHOOK.UPDATED)', ['WEBHOOK.UPDATED'], ['WEBHOOK.UPDATED']],
  [
    'high + low: the domain plus that event',
    ['CUSTOMER', 'REQUEST.CREATED'],
    [...CUSTOMER, 'REQUEST.CREATED'],
  ],
  ['high + a low of the same domain: the domain', ['CUSTOMER', 'CUSTOMER.CREATED'], CUSTOMER],
  ['two low-level names: both', ['REQUEST.CREATED', 'AUTH.CREATED'], ['REQUEST.CREATED', 'AUTH.CREATED']],
  ['ALL + a low-level name: every event', ['ALL', 'CUSTOMER.CREATED'], EVERY],
  ['ALL + a high-level name: equals ALL', ['ALL', 'REQUEST'], EVERY],
  ['two domains: both', ['AUTH', 'TRANSACTION'], [...AUTH, ...TRANSACTION]],
  ['an empty list: nothing', [], []],
];

const sorted = (list: readonly string[]) => [...new Set(list)].sort();

describe('subscription rules through subscriptionsCover', () => {
  for (const [rule, subscriptions, expected] of RULES) {
    it(rule, () => {
      const covered = WEBHOOK_EVENTS.filter((event) => subscriptionsCover(subscriptions, event));
      expect(sorted(covered)).toEqual(sorted(expected));
    });
  }

  it('what is stored always names WEBHOOK.CREATED (the connection test), without duplicates', () => {
    expect(normalizeSubscriptions([])).toEqual(['WEBHOOK.CREATED']);
    expect(normalizeSubscriptions(['CUSTOMER', 'CUSTOMER'])).toEqual(['CUSTOMER', 'WEBHOOK.CREATED']);
    expect(normalizeSubscriptions(['WEBHOOK.CREATED', 'ALL'])).toEqual(['WEBHOOK.CREATED', 'ALL']);
  });

  it("unknown names are refused by index: our TRANSACTION.* names are events, not the spec's subscriptions", () => {
    expect(
      unknownSubscriptions(['ALL', 'TRANSACTION.CREATED', 'customer', 'REPORT', ' AUTH', 'REPORT.CREATED']),
    ).toEqual([
      { index: 1, name: 'TRANSACTION.CREATED' },
      { index: 2, name: 'customer' },
      { index: 4, name: ' AUTH' },
      { index: 5, name: 'REPORT.CREATED' },
    ]);
  });
});

describeStores('subscription rules through the real outbox on %s', (store) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp(store, PREVIEW_ENV);
  });
  afterAll(() => t.close());

  async function organization(): Promise<string> {
    const res = await adminInject(t, 'POST', '/admin/organizations', {
      name: `Subs ${randomUUID().slice(0, 8)}`,
    });
    expect(res.statusCode).toBe(201);
    return res.json().id;
  }

  /** Emits every event for the organization, in one transaction; returns the events that got a delivery. */
  async function delivered(organizationId: string): Promise<string[]> {
    await t.ctx.database.db.transaction(async (tx) => {
      for (const event of WEBHOOK_EVENTS) {
        await t.ctx.events.emit(tx, {
          organizationId,
          event: event as WebhookEventName,
          data: { probe: event },
        });
      }
    });
    const found = await rows<{ event: string }>(
      t.ctx.database.db,
      sql`select e.event from webhook_events e join webhook_deliveries d on d.event_id = e.id
  where e.organization_id = ${organizationId}`,
    );
    return sorted(found.map((r) => r.event));
  }

  async function webhookWith(organizationId: string, subscriptions: string[], status = 'ACTIVE') {
    await run(
      t.ctx.database.db,
      sql`insert into webhooks (id, organization_id, url, subscriptions, status)
  values (${createId()}, ${organizationId}, 'https://hooks.example.com/', ${sql.param(subscriptions)}::text[], ${status})`,
    );
  }

  for (const [rule, subscriptions, expected] of RULES) {
    it(`${rule} (stored with WEBHOOK.CREATED)`, async () => {
      const organizationId = await organization();
      await webhookWith(organizationId, normalizeSubscriptions(subscriptions));
      expect(await delivered(organizationId)).toEqual(sorted([...expected, 'WEBHOOK.CREATED']));
    });
  }

  it('no webhook, or a DEACTIVED one: every event is stored, none gets a delivery', async () => {
    const without = await organization();
    expect(await delivered(without)).toEqual([]);
    const deactivated = await organization();
    await webhookWith(deactivated, ['ALL'], 'DEACTIVED');
    expect(await delivered(deactivated)).toEqual([]);
    const stored = await rows<{ n: number }>(
      t.ctx.database.db,
      sql`select count(*)::int as n from webhook_events where organization_id in (${without}, ${deactivated})`,
    );
    expect(stored).toEqual([{ n: 2 * WEBHOOK_EVENTS.length }]);
  });

  it("one organization's webhook never receives another organization's events", async () => {
    const listening = await organization();
    await webhookWith(listening, ['ALL']);
    const other = await organization();
    await delivered(other);
    const leaked = await rows<{ n: number }>(
      t.ctx.database.db,
      sql`select count(*)::int as n from webhook_deliveries d join webhooks w on w.id = d.webhook_id
  where w.organization_id = ${listening}`,
    );
    expect(leaked).toEqual([{ n: 0 }]);
  });
});
