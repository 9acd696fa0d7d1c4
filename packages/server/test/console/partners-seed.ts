import { generateKeyPairSync } from 'node:crypto';
import type { TestApp } from '@partner-api/testkit/app.ts';
import { adminInject } from '@partner-api/testkit/helpers.ts';
import { sql } from 'drizzle-orm';
import { expect } from 'vitest';
import { rows, run } from '../../src/db/query.ts';
import { createOutbox } from '../../src/services/webhooks/outbox.ts';
import { createWebhook } from '../../src/services/webhooks/registration.ts';

export const publicKeyPem = () =>
  generateKeyPairSync('ed25519').publicKey.export({ format: 'pem', type: 'spki' }).toString();

export type SeededPartner = {
  organizationId: string;
  credentialId: string;
  clientId: string;
  clientSecret: string;
  /** The webhook's deliveries, newest first: a FAILED one with two attempts, a DELIVERED one with one. */
  deliveries: { id: string; eventId: string }[];
};

/**
 * An organization through the admin API with one signing credential (fixed name, key id and trusted
 * IPs) and a webhook whose two deliveries carry fixed attempts: the Partners page is then not empty
 * and looks the same on every run (ids and times are masked).
 */
export async function seedPartner(t: TestApp, name: string): Promise<SeededPartner> {
  const org = await adminInject(t, 'POST', '/admin/organizations', { name, language: 'sw' });
  expect(org.statusCode).toBe(201);
  const organizationId = (org.json() as { id: string }).id;
  const created = await adminInject(t, 'POST', `/admin/organizations/${organizationId}/credentials`, {
    name: 'Settlement server',
    publicKey: publicKeyPem(),
    keyId: 'settlement-2026-01',
    trustedIps: ['203.0.113.0/24', '198.51.100.7'],
  });
  expect(created.statusCode).toBe(201);
  const credential = created.json() as { id: string; clientId: string; clientSecret: string };

  const db = t.ctx.database.db;
  const outbox = createOutbox();
  await db.transaction((tx) =>
    createWebhook(tx, outbox, organizationId, {
      url: 'https://hooks.example.com/partner-api',
      subscriptions: ['WEBHOOK.CREATED'],
    }),
  );
  // A second event, so that the webhook has two deliveries.
  await db.transaction((tx) =>
    outbox.emit(tx, { organizationId, event: 'WEBHOOK.CREATED', data: { webhookId: 'second' } }),
  );
  const deliveries = await rows<{ id: string; eventId: string }>(
    db,
    sql`select id, event_id as "eventId" from webhook_deliveries where organization_id = ${organizationId}
  order by created_at desc, id desc`,
  );
  expect(deliveries).toHaveLength(2);
  const [failed, delivered] = deliveries as [(typeof deliveries)[0], (typeof deliveries)[0]];
  const at = new Date(Date.now() - 3_600_000);
  const attempt = (
    d: { id: string; eventId: string },
    seconds: number,
    status: number | null,
    ms: number,
    error: string | null,
  ) =>
    run(
      db,
      sql`insert into webhook_attempts (id, delivery_id, event_id, at, http_status, latency_ms, error)
  values (gen_random_uuid()::text, ${d.id}, ${d.eventId}, ${new Date(at.getTime() + seconds * 1000).toISOString()}::timestamptz,
  ${status}, ${ms}, ${error})`,
    );
  await attempt(delivered, 0, 200, 84, null);
  await attempt(failed, 60, null, 10_000, 'timeout after 10 s');
  await attempt(failed, 120, 503, 412, 'HTTP 503');
  await run(
    db,
    sql`update webhook_deliveries set state = 'DELIVERED', attempts = 1, delivered_at = ${at.toISOString()}::timestamptz
  where id = ${delivered.id}`,
  );
  await run(
    db,
    sql`update webhook_deliveries set state = 'FAILED', attempts = 2, last_error = 'HTTP 503' where id = ${failed.id}`,
  );
  return {
    organizationId,
    credentialId: credential.id,
    clientId: credential.clientId,
    clientSecret: credential.clientSecret,
    deliveries,
  };
}
