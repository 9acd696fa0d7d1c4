/**
 * What the delivery suites share: a certificate made at test time, a real HTTPS receiver whose
 * answers a test scripts, an organization with a webhook written straight into the store (helper
 * A's routes register webhooks; these suites test delivery), and events emitted through the outbox.
 */
import { createPublicKey, generateKeyPairSync, randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import {
  createId,
  verifyWebhookDelivery,
  WEBHOOK_SIGNED_COMPONENTS,
  type WebhookEventName,
} from '@partner-api/contract';
import { buildTestApp, type StoreKind, type TestApp } from '@partner-api/testkit/app.ts';
import { ownDatabase } from '@partner-api/testkit/database.ts';
import { sql } from 'drizzle-orm';
import { createVerifier, httpbis } from 'http-message-signatures';
import { PartnerClient } from '../../../sdk/src/index.ts';
import type { Queryable } from '../../src/db/client.ts';
import { one, run } from '../../src/db/query.ts';
import type { EventOutbox } from '../../src/services/webhooks/outbox.ts';
import type { Lookup } from '../../src/services/webhooks/target.ts';
import { startWebhookWorker, type WebhookWorker } from '../../src/services/webhooks/worker.ts';
import {
  makeCertificate,
  type Received,
  type Receiver,
  type Script,
  startReceiver,
  type Tls,
} from './receiver.ts';

export * from './receiver.ts';

/** An ACTIVE webhook subscribed to `subscriptions` (and its organization), written into the store. */
export async function createWebhook(
  db: Queryable,
  url: string,
  subscriptions: string[] = ['ALL'],
  /** An existing organization (a partner's); a new one when absent. */
  existing?: string,
): Promise<{ organizationId: string; webhookId: string }> {
  const organizationId = existing ?? createId();
  const webhookId = createId();
  if (!existing)
    await run(
      db,
      sql`insert into organizations (id, name) values (${organizationId}, ${`Webhook org ${organizationId}`})`,
    );
  await run(
    db,
    sql`insert into webhooks (id, organization_id, url, subscriptions, status)
  values (${webhookId}, ${organizationId}, ${url}, ${sql.param(subscriptions)}::text[], 'ACTIVE')`,
  );
  return { organizationId, webhookId };
}

/** Emits one event in its own transaction (as a route does); returns its eventId. */
export async function emitEvent(
  db: { transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T> },
  events: EventOutbox,
  organizationId: string,
  event: WebhookEventName = 'CUSTOMER.CREATED',
  data: Record<string, unknown> = { id: createId(), firstName: 'Amina' },
): Promise<string> {
  // The id is chosen here: two events written within one tick of the clock have no "latest".
  const eventId = randomUUID();
  await db.transaction((tx) => events.emit(tx, { organizationId, event, data, eventId }));
  return eventId;
}

export type DeliveryRow = {
  id: string;
  state: string;
  attempts: number;
  lastError: string | null;
};

export async function deliveriesOf(db: Queryable, eventId: string) {
  return (
    (await db.execute(
      sql`select id, state, attempts, last_error as "lastError" from webhook_deliveries where event_id = ${eventId}`,
    )) as unknown as { rows: DeliveryRow[] }
  ).rows;
}

export type AttemptRow = { httpStatus: number | null; latencyMs: number; error: string | null; at: string };

export async function attemptsOf(db: Queryable, eventId: string): Promise<AttemptRow[]> {
  return (
    (await db.execute(
      sql`select http_status as "httpStatus", latency_ms as "latencyMs", error, at::text as at
  from webhook_attempts where event_id = ${eventId} order by at`,
    )) as unknown as { rows: AttemptRow[] }
  ).rows;
}

export async function webhookRow(db: Queryable, webhookId: string) {
  return one<{
    status: string;
    disabledReason: string | null;
    disabledAt: string | null;
    failingSince: string | null;
  }>(
    db,
    sql`select status, disabled_reason as "disabledReason", disabled_at::text as "disabledAt",
  failing_since::text as "failingSince" from webhooks where id = ${webhookId}`,
  );
}

/** The published key (GET /v1/webhooks/key's body). */
export type PublishedKey = { keyId: string; publicKey: string };

/**
 * Verifies one received delivery twice: with the contract's verifyWebhookDelivery (the SDK's
 * recipe) and with the independent `http-message-signatures` library; both must accept it.
 */
export async function verifyBoth(
  received: Received,
  url: string,
  key: PublishedKey,
): Promise<{ ours: boolean; independent: boolean; reason?: string }> {
  const publicKey = createPublicKey(key.publicKey);
  const ours = verifyWebhookDelivery({
    method: received.method,
    url,
    headers: received.headers,
    body: received.body,
    resolveKey: (keyId) => (keyId === key.keyId ? { publicKey, alg: 'ed25519' } : undefined),
  });
  const independent = await httpbis
    .verifyMessage(
      {
        keyLookup: async (params) =>
          params.keyid === key.keyId
            ? { id: key.keyId, algs: ['ed25519'], verify: createVerifier(publicKey, 'ed25519') }
            : null,
        requiredFields: [...WEBHOOK_SIGNED_COMPONENTS],
        requiredParams: ['created', 'expires', 'keyid'],
        maxAge: 300,
      },
      { method: received.method, url, headers: received.headers },
    )
    .catch(() => false);
  return { ours: ours.ok, independent: independent === true, ...(ours.ok ? {} : { reason: ours.reason }) };
}

export const uuid = () => randomUUID();

/** `localhost` from a table, not the system resolver (common brief: no DNS in tests). */
export const LOCALHOST: Lookup = async () => [{ address: '127.0.0.1', family: 4 }];

export type DeliveryApp = {
  t: TestApp;
  tls: Tls;
  /** This app's worker; a test may stop it and start another (startWorker). */
  worker: WebhookWorker;
  startWorker(): WebhookWorker;
  /** A receiver closed with the app. */
  receiver(script?: Script, pathName?: string): Promise<Receiver>;
  close(): Promise<void>;
};

/**
 * A test app with the preview on, a certificate its worker trusts (WEBHOOKS_CA_FILE), a lookup
 * table, and its webhook worker running, on a database of its own: a worker claims the deliveries
 * of every organization in its database, so on the shared PostgreSQL it would deliver other suites'
 * events (to hosts they never meant to reach, with this suite's settings) and theirs would be taken
 * from them (ownDatabase; PGlite is in memory and private anyway).
 */
export async function startDeliveryApp(
  store: StoreKind,
  prefix: string,
  env: Record<string, string>,
  lookup: Lookup = LOCALHOST,
): Promise<DeliveryApp> {
  const tls = makeCertificate();
  const database = await ownDatabase(store, prefix);
  const t = await buildTestApp(store, {
    ...database.env,
    WEBHOOKS_PREVIEW: 'true',
    WEBHOOKS_CA_FILE: tls.certFile,
    ...env,
  });
  t.ctx.webhookLookup = lookup;
  const receivers: Receiver[] = [];
  const app: DeliveryApp = {
    t,
    tls,
    worker: startWebhookWorker(t.ctx, t.app.log),
    startWorker: () => {
      app.worker = startWebhookWorker(t.ctx, t.app.log);
      return app.worker;
    },
    async receiver(script, pathName) {
      const r = await startReceiver(tls, script, pathName);
      receivers.push(r);
      return r;
    },
    async close() {
      await app.worker.stop();
      await Promise.all(receivers.map((r) => r.close()));
      await t.close();
      await database.drop();
      rmSync(tls.dir, { recursive: true, force: true });
    },
  };
  return app;
}

/** A client that counts its GET /webhooks/key requests (over real HTTP). */
export function countingClient(baseUrl: string) {
  const keyFetches: string[] = [];
  const client = new PartnerClient({
    baseUrl,
    clientId: 'receiver',
    clientSecret: 'unused',
    keyId: 'unused',
    privateKey: generateKeyPairSync('ed25519').privateKey,
    maxRetries: 0,
    fetch: (input, init) => {
      if (String(input).endsWith('/webhooks/key')) keyFetches.push(String(input));
      return fetch(input, init);
    },
  });
  return { client, keyFetches };
}
