import { readFileSync } from 'node:fs';
import path from 'node:path';
import { buildTestApp, type StoreKind, type TestApp } from '@partner-api/testkit/app.ts';
import { NOT_FOUND_BODY } from '@partner-api/testkit/helpers.ts';
import { createPartner } from '@partner-api/testkit/partner.ts';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rows } from '../../src/db/query.ts';
import { type SandboxCredentialsFile, seedSandbox } from '../../src/services/sandbox/seed.ts';

async function seededApp(store: StoreKind, env: Record<string, string>) {
  const t = await buildTestApp(store, env);
  await seedSandbox({ db: t.ctx.database.db, dataDir: t.dataDir, baseUrl: 'http://localhost:8080' });
  const file = JSON.parse(
    readFileSync(path.join(t.dataDir, 'sandbox-credentials.json'), 'utf8'),
  ) as SandboxCredentialsFile;
  return { t, demoOrganizationId: file.organizationId! };
}

/**
 * On the embedded store only, like test/openapi/sandbox-api.test.ts: on a shared PostgreSQL the demo
 * organization is seeded once and every suite's handset moves land in it.
 */
describe("the handset's event panel (preview on)", () => {
  const store = 'pglite';
  let t: TestApp;
  let demoOrganizationId: string;
  beforeAll(async () => {
    ({ t, demoOrganizationId } = await seededApp(store, { WEBHOOKS_PREVIEW: 'true' }));
  });
  afterAll(() => t?.close());

  it("lists the events the handset's buy caused, names and ids, and no other organization's", async () => {
    // Another organization: its token's AUTH.CREATED is in the same outbox.
    const other = await createPartner(t);
    const customers = (await t.app.inject({ method: 'GET', url: '/sandbox/api/customers' })).json().data;
    const post = (url: string, payload: object) => t.app.inject({ method: 'POST', url, payload });
    const dial = await post('/sandbox/api/ussd/session', {
      customerId: customers.find((c: { msisdn: string | null }) => c.msisdn).id,
    });
    expect(dial.statusCode).toBe(201);
    let screen = dial;
    for (const choice of ['1', '1', '1', '1000', '1']) {
      screen = await post('/sandbox/api/ussd/process', { sessionId: dial.json().data.sessionId, choice });
      expect(screen.statusCode).toBe(200);
    }
    const { orderId } = screen.json();
    expect(orderId).toEqual(expect.any(String));

    const res = await t.app.inject({ method: 'GET', url: '/sandbox/api/events' });
    expect(res.statusCode).toBe(200);
    const listed = res.json().data as { eventId: string; event: string; createdAt: number }[];
    const outbox = await rows<{ eventId: string; organizationId: string; orderId: string | null }>(
      t.ctx.database.db,
      sql`select id as "eventId", organization_id as "organizationId", data->>'orderId' as "orderId"
  from webhook_events
 where organization_id = any(${sql.param([demoOrganizationId, other.organizationId])}::text[])`,
    );
    const ids = (organizationId: string) =>
      outbox.filter((e) => e.organizationId === organizationId).map((e) => e.eventId);
    expect(ids(other.organizationId).length).toBeGreaterThan(0);
    expect(ids(demoOrganizationId).length).toBeLessThanOrEqual(20);
    // Exactly the demo organization's events, the buy's among them.
    expect(listed.map((e) => e.eventId).sort()).toEqual(ids(demoOrganizationId).sort());
    const buy = outbox.filter((e) => e.orderId === orderId).map((e) => e.eventId);
    expect(listed.filter((e) => buy.includes(e.eventId)).map((e) => e.event)).toContain('REQUEST.CREATED');
    expect(Object.keys(listed[0]!).sort()).toEqual(['createdAt', 'event', 'eventId']);
    // Newest first.
    const times = listed.map((e) => e.createdAt);
    expect([...times].sort((a, b) => b - a)).toEqual(times);
  });
});

describe("the handset's event panel with the preview off", () => {
  it('has no endpoint, and the page keeps the panel hidden', async () => {
    const { t } = await seededApp('pglite', {});
    try {
      const res = await t.app.inject({ method: 'GET', url: '/sandbox/api/events' });
      expect(res.statusCode).toBe(404);
      expect(res.body).toBe(NOT_FOUND_BODY);
      const page = await t.app.inject({ method: 'GET', url: '/sandbox/ussd' });
      expect(page.body).toContain('<div class="events" id="events" hidden>');
      // Told so, the page does not ask for the events (a 404 in the browser's console).
      expect(page.body).toContain('<body data-webhooks-preview="false">');
    } finally {
      await t.close();
    }
  });
});
