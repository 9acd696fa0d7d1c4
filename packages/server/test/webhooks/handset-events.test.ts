import { readFileSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rows } from '../../src/db/query.ts';
import { type SandboxCredentialsFile, seedSandbox } from '../../src/services/sandbox/seed.ts';
import { NOT_FOUND_BODY } from '../foundation/helpers.ts';
import { buildTestApp, STORES, type TestApp } from '../support/app.ts';
import { createPartner } from '../support/partner.ts';

async function seededApp(store: (typeof STORES)[number], env: Record<string, string>) {
  const t = await buildTestApp(store, env);
  await seedSandbox({ db: t.ctx.database.db, dataDir: t.dataDir, baseUrl: 'http://localhost:8080' });
  const file = JSON.parse(
    readFileSync(path.join(t.dataDir, 'sandbox-credentials.json'), 'utf8'),
  ) as SandboxCredentialsFile;
  return { t, demoOrganizationId: file.organizationId! };
}

describe.each(STORES)("the handset's event panel on %s (preview on)", (store) => {
  let t: TestApp;
  let demoOrganizationId: string;
  beforeAll(async () => {
    ({ t, demoOrganizationId } = await seededApp(store, { WEBHOOKS_PREVIEW: 'true' }));
  });
  afterAll(() => t?.close());

  it("lists the demo organization's latest events, names and ids, and no other organization's", async () => {
    const other = await createPartner(t);
    const customers = (await t.app.inject({ method: 'GET', url: '/sandbox/api/customers' })).json().data;
    // A move of the handset (its events, once the USSD verbs emit them, are listed like these).
    const dial = await t.app.inject({
      method: 'POST',
      url: '/sandbox/api/ussd/session',
      payload: { customerId: customers[0].id },
    });
    expect(dial.statusCode).toBe(201);
    const db = t.ctx.database.db;
    await t.ctx.events.emit(db, {
      organizationId: demoOrganizationId,
      event: 'REQUEST.CREATED',
      data: { n: 1 },
    });
    await t.ctx.events.emit(db, {
      organizationId: other.organizationId,
      event: 'REQUEST.CREATED',
      data: { n: 2 },
    });
    await t.ctx.events.emit(db, {
      organizationId: demoOrganizationId,
      event: 'REQUEST.UPDATED',
      data: { n: 3 },
    });

    const res = await t.app.inject({ method: 'GET', url: '/sandbox/api/events' });
    expect(res.statusCode).toBe(200);
    const listed = res.json().data as { eventId: string; event: string; createdAt: number }[];
    const outbox = await rows<{ eventId: string; organizationId: string }>(
      db,
      sql`select id as "eventId", organization_id as "organizationId" from webhook_events
 where organization_id = any(${sql.param([demoOrganizationId, other.organizationId])}::text[])`,
    );
    const demoIds = outbox.filter((e) => e.organizationId === demoOrganizationId).map((e) => e.eventId);
    const otherIds = outbox.filter((e) => e.organizationId === other.organizationId).map((e) => e.eventId);
    expect(otherIds).toHaveLength(1);
    expect(demoIds.length).toBeLessThanOrEqual(20);
    expect(listed.map((e) => e.eventId).sort()).toEqual(demoIds.sort());
    expect(listed.map((e) => e.eventId)).not.toContain(otherIds[0]);
    expect(listed.map((e) => e.event)).toEqual(
      expect.arrayContaining(['REQUEST.CREATED', 'REQUEST.UPDATED']),
    );
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
    } finally {
      await t.close();
    }
  });
});
