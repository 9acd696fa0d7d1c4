import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { ownDatabase } from '@partner-api/testkit/database.ts';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { one } from '../../src/db/query.ts';
import { seedSandbox } from '../../src/services/sandbox/seed.ts';
import { createSmsOutbox } from '../../src/services/sms/queue.ts';
import { sandboxInbox } from '../../src/services/sms/sandbox-inbox.ts';
import { runSmsOnce } from '../../src/services/sms/worker.ts';

/**
 * The sandbox's SMS inbox (docs/sms.md, "Sandbox"): without a gateway the sandbox queues investor
 * SMS for an in-process inbox, and the handset lists those sent to the picked customer's number.
 */
describeStores('the sandbox SMS inbox on %s', (store) => {
  let t: TestApp;
  let database: Awaited<ReturnType<typeof ownDatabase>>;
  beforeAll(async () => {
    // Its own database on PostgreSQL: the handset acts as the one demo organization of the store.
    database = await ownDatabase(store, 'sms_inbox');
    t = await buildTestApp(store, database.env);
    await seedSandbox({ db: t.ctx.database.db, dataDir: t.dataDir, baseUrl: 'http://localhost:8080' });
  });
  afterAll(async () => {
    await t.close();
    await database.drop();
  });

  it("lists the SMS the inbox took for a demo customer's number, newest first; no other number's", async () => {
    const { organization, data } = (await t.app.inject({ url: '/sandbox/api/customers' })).json();
    const [amina, brian] = (data as Array<{ id: string; msisdn: string | null }>).filter(
      (c): c is { id: string; msisdn: string } => c.msisdn !== null,
    );
    const outbox = createSmsOutbox();
    for (const [customer, key] of [
      [amina!, 'first'],
      [amina!, 'second'],
      [brian!, 'other'],
    ] as const) {
      await t.ctx.database.db.transaction((tx) =>
        outbox.queue(tx, {
          organizationId: organization.id,
          customerId: customer.id,
          kind: 'PAYOUT',
          eventKey: `sandbox-test:${key}:${customer.id}`,
          values: { amount: '50.00', currency: 'KES', order: key, last4: customer.msisdn.slice(-4) },
        }),
      );
    }
    // Before the worker's pass nothing has reached the phone.
    expect((await t.app.inject({ url: `/sandbox/api/sms/${amina!.id}` })).json()).toEqual({ data: [] });
    const worker = { database: t.ctx.database, config: { ...t.ctx.config, SMS_LEASE_SECONDS: 60 } };
    await runSmsOnce(worker, sandboxInbox, t.app.log);

    const inbox = await t.app.inject({ url: `/sandbox/api/sms/${amina!.id}` });
    expect(inbox.statusCode).toBe(200);
    const texts = inbox.json().data.map((s: { text: string; state: string }) => [s.text, s.state]);
    expect(texts).toHaveLength(2);
    expect(texts.map(([text]: string[]) => text).sort()).toEqual([
      `KES 50.00 from order first was paid to your number ending ${amina!.msisdn.slice(-4)}.`,
      `KES 50.00 from order second was paid to your number ending ${amina!.msisdn.slice(-4)}.`,
    ]);
    expect(texts.every(([, state]: string[]) => state === 'SENT')).toBe(true);
    expect((await t.app.inject({ url: '/sandbox/api/sms/not-an-id' })).statusCode).toBe(400);
  });

  it('an app without a gateway (and not serving the sandbox inbox) queues nothing', async () => {
    expect(t.ctx.config.sms).toBeUndefined();
    expect(t.ctx.sms.enabled).toBe(false);
    const { organization, data } = (await t.app.inject({ url: '/sandbox/api/customers' })).json();
    const customer = (data as Array<{ id: string; msisdn: string | null }>).find((c) => c.msisdn)!;
    const queued = await t.ctx.database.db.transaction((tx) =>
      t.ctx.sms.queue(tx, {
        organizationId: organization.id,
        customerId: customer.id,
        kind: 'PAYOUT',
        eventKey: `sandbox-test:none:${customer.id}`,
        values: { amount: '1.00', currency: 'KES', order: 'none', last4: '0000' },
      }),
    );
    expect(queued).toBe(false);
    const row = await one<{ n: number }>(
      t.ctx.database.db,
      sql`select count(*)::int as n from sms_messages where event_key = ${`sandbox-test:none:${customer.id}`}`,
    );
    expect(row).toEqual({ n: 0 });
  });

  it('the handset page has the inbox panel', async () => {
    const page = await t.app.inject({ url: '/sandbox/ussd' });
    expect(page.body).toContain('id="sms-list"');
    const script = await t.app.inject({ url: '/sandbox/ussd/assets/handset.js' });
    expect(script.body).toContain('/sandbox/api/sms/');
  });
});
