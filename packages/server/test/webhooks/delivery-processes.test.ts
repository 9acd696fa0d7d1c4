import { generateKeyPairSync } from 'node:crypto';
import { rmSync } from 'node:fs';
import { webhookKeyId } from '@partner-api/contract';
import { POSTGRES_SKIP_REASON, tempDataDir } from '@partner-api/testkit/app.ts';
import { ownDatabase } from '@partner-api/testkit/database.ts';
import { createPartner, type Partner, payloadOf, signedHeaders } from '@partner-api/testkit/partner.ts';
import { freePort, type ServerProcess, startServer } from '@partner-api/testkit/process.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, openDatabase } from '../../src/db/client.ts';
import { createOutbox } from '../../src/services/webhooks/outbox.ts';
import { waitFor } from '../ussd/support.ts';
import {
  attemptsOf,
  countingClient,
  createWebhook,
  deliveriesOf,
  emitEvent,
  makeCertificate,
  type PublishedKey,
  type Receiver,
  startReceiver,
  type Tls,
  verifyBoth,
} from './delivery-support.ts';

if (!process.env.DATABASE_URL) console.warn(`webhook delivery by real processes: ${POSTGRES_SKIP_REASON}`);

/** A sandbox process delivering to this machine, a short lease so a restart takes over soon. */
const workerEnv = (tls: Tls) => ({
  APP_ENV: 'sandbox',
  WEBHOOKS_PREVIEW: 'true',
  WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true',
  WEBHOOKS_CA_FILE: tls.certFile,
  WEBHOOK_WORKER_INTERVAL_MS: '100',
  WEBHOOK_LEASE_SECONDS: '3',
  WEBHOOK_TIMEOUT_MS: '60000',
});

const newKey = () =>
  generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();

/**
 * `partner-api serve` processes delivering webhooks from one PostgreSQL of the suite's own
 * (ownDatabase: no other suite's worker takes these deliveries, and these workers take no one
 * else's). Events are emitted by this process through the outbox into that database, as a route
 * of any instance would. The embedded store cannot be shared by two processes, hence PostgreSQL
 * only.
 */
describe.skipIf(!process.env.DATABASE_URL)('webhook delivery by real processes', () => {
  let tls: Tls;
  let database: Awaited<ReturnType<typeof ownDatabase>>;
  let store: Database;
  const events = createOutbox();
  const running: ServerProcess[] = [];
  const receivers: Receiver[] = [];

  const serve = async (env: Record<string, string> = {}) => {
    const server = await startServer({
      DATABASE_URL: database.url!,
      DATA_DIR: tempDataDir(),
      ...workerEnv(tls),
      WEBHOOK_BACKOFF_BASE_MS: '200',
      WEBHOOK_BACKOFF_MAX_MS: '500',
      ...env,
    });
    running.push(server);
    return server;
  };
  const receiver = async (
    ...args: Parameters<typeof startReceiver> extends [Tls, ...infer R] ? R : never
  ) => {
    const r = await startReceiver(tls, ...args);
    receivers.push(r);
    return r;
  };
  const delivered = (eventId: string, timeoutMs = 60_000) =>
    waitFor(
      async () => {
        const [d] = await deliveriesOf(store.db, eventId);
        return d?.state === 'DELIVERED' ? d : undefined;
      },
      timeoutMs,
      `delivery of ${eventId}`,
    );

  beforeAll(async () => {
    tls = makeCertificate();
    database = await ownDatabase('postgres', 'webhook_processes');
    // Opening it migrates it; the servers then find it ready.
    store = await openDatabase({ databaseUrl: database.url!, poolSize: 4 });
  }, 60_000);
  afterAll(async () => {
    await Promise.all(running.map((s) => s.stop('SIGKILL')));
    await Promise.all(receivers.map((r) => r.close()));
    await store?.close();
    await database?.drop();
    if (tls) rmSync(tls.dir, { recursive: true, force: true });
  });

  it('kill -9 during a delivery, then restart: the event is delivered, same eventId', async () => {
    const r = await receiver((index) => (index === 0 ? 'hang' : { status: 200 }));
    const { organizationId } = await createWebhook(store.db, r.url);
    const first = await serve();
    const eventId = await emitEvent(store.db, events, organizationId);
    // The first attempt is in flight, held open by the receiver: kill the process mid-delivery.
    await waitFor(async () => (r.received.length >= 1 ? true : undefined), 60_000, 'the first attempt');
    await first.stop('SIGKILL');
    expect((await deliveriesOf(store.db, eventId))[0]?.state).toBe('PENDING');

    await serve();
    await delivered(eventId);
    expect(r.received.length).toBeGreaterThanOrEqual(2);
    expect(new Set(r.envelopes().map((e) => e.eventId))).toEqual(new Set([eventId]));
    // The killed attempt left no record; the one that succeeded did.
    const attempts = await attemptsOf(store.db, eventId);
    expect(attempts.at(-1)).toMatchObject({ httpStatus: 200, error: null });
    await Promise.all(running.splice(0).map((s) => s.stop()));
  }, 180_000);

  it('two instances deliver every event once (counted at the receiver)', async () => {
    const N = 40;
    const r = await receiver(() => ({ status: 200 }));
    const { organizationId } = await createWebhook(store.db, r.url);
    const [a, b] = await Promise.all([serve(), serve()]);
    const ids: string[] = [];
    for (let i = 0; i < N; i++) ids.push(await emitEvent(store.db, events, organizationId));
    for (const id of ids) await delivered(id);
    const counts = new Map<string, number>();
    for (const e of r.envelopes()) counts.set(e.eventId, (counts.get(e.eventId) ?? 0) + 1);
    expect([...counts.keys()].sort()).toEqual([...ids].sort());
    expect([...counts.values()].filter((n) => n > 1)).toEqual([]);
    // Each instance's own count of successful attempts adds up to N.
    const successes = async (s: ServerProcess) => {
      const text = await (await fetch(`${s.baseUrl}/metrics`)).text();
      return Number(/webhook_delivery_attempts_total\{outcome="success"\} (\d+)/.exec(text)?.[1] ?? 0);
    };
    const split = [await successes(a!), await successes(b!)];
    expect(split[0]! + split[1]!).toBe(N);
    await Promise.all(running.splice(0).map((s) => s.stop()));
  }, 180_000);

  it('after a key rotation, deliveries carry the new keyid; the SDK verifies them after one re-fetch', async () => {
    const r = await receiver();
    const { organizationId } = await createWebhook(store.db, r.url);
    const published = async (s: ServerProcess): Promise<PublishedKey> =>
      (await fetch(`${s.baseUrl}/v1/webhooks/key`)).json() as Promise<PublishedKey>;

    // One address across the rotation, as a partner sees it: the SDK caches the key by base URL.
    const PORT = String(await freePort());
    const before = await serve({ PORT, WEBHOOK_SIGNING_KEY: newKey(), WEBHOOK_KEY_GENERATION: '4' });
    const oldKey = await published(before);
    expect(oldKey.keyId).toBe(webhookKeyId('sandbox', 4));
    const first = await emitEvent(store.db, events, organizationId);
    await delivered(first);
    const { client: sdk, keyFetches } = countingClient(before.baseUrl);
    const asDelivered = (got: (typeof r.received)[number]) => ({
      method: 'POST',
      url: r.url,
      headers: got.headers,
      body: got.body,
    });
    expect(await sdk.webhooks.verify(asDelivered(r.received[0]!))).toMatchObject({ eventId: first });
    expect(keyFetches).toHaveLength(1);
    await before.stop();

    const after = await serve({ PORT, WEBHOOK_SIGNING_KEY: newKey(), WEBHOOK_KEY_GENERATION: '5' });
    const newPublished = await published(after);
    expect(newPublished.keyId).toBe(webhookKeyId('sandbox', 5));
    const second = await emitEvent(store.db, events, organizationId);
    await delivered(second);

    const [one, two] = [r.received[0]!, r.received[1]!];
    expect(one.headers['signature-input']).toContain(`keyid="${oldKey.keyId}"`);
    expect(two.headers['signature-input']).toContain(`keyid="${newPublished.keyId}"`);
    expect(await verifyBoth(one, r.url, oldKey)).toEqual({ ours: true, independent: true });
    expect(await verifyBoth(two, r.url, newPublished)).toEqual({ ours: true, independent: true });
    // The old key does not verify the new delivery (its keyid is unknown to it: re-fetch the key).
    expect((await verifyBoth(two, r.url, oldKey)).ours).toBe(false);
    // The SDK, holding the old key, meets an unknown keyid: one re-fetch, then it verifies.
    expect(await sdk.webhooks.verify(asDelivered(two))).toMatchObject({ eventId: second });
    expect(keyFetches).toHaveLength(2);
    await Promise.all(running.splice(0).map((s) => s.stop()));
  }, 180_000);
});

/**
 * The same crash on the embedded store: one process owns its DATA_DIR, so the webhook is
 * registered and the event emitted through the API (POST /v1/webhooks writes WEBHOOK.CREATED), and
 * the outcome is read back through GET /v1/webhooks/events after the restart.
 */
describe('webhook delivery across kill -9 on the embedded store', () => {
  let tls: Tls;
  let server: ServerProcess | undefined;
  let r: Receiver | undefined;
  afterAll(async () => {
    await server?.stop('SIGKILL');
    await r?.close();
    if (tls) rmSync(tls.dir, { recursive: true, force: true });
  });

  it('the event held open when the process died is delivered after the restart, same eventId', async () => {
    tls = makeCertificate();
    r = await startReceiver(tls, (index) => (index === 0 ? 'hang' : { status: 200 }));
    const adminToken = 'b'.repeat(32);
    // The same port across the restart: the partner's signatures name it (@target-uri).
    const env = {
      DATA_DIR: tempDataDir(),
      PORT: String(await freePort()),
      ADMIN_TOKEN: adminToken,
      RATE_LIMIT_GLOBAL: '100000/60s',
      RATE_LIMIT_TOKEN: '100000/60s',
      ...workerEnv(tls),
    };
    server = await startServer(env);
    const partner = await createPartner({ ...server, adminToken });
    const call = async (
      s: ServerProcess,
      p: Partner,
      method: 'GET' | 'POST',
      url: string,
      body?: unknown,
    ) => {
      const payload = payloadOf(body);
      const res = await fetch(s.baseUrl + url, {
        method,
        headers: signedHeaders(p, { method, url }, payload),
        body: payload,
      });
      return {
        status: res.status,
        body: (await res.json()) as {
          data: Array<{
            eventId: string;
            event: string;
            status: string;
            attempts: Array<{ httpStatus: number | null; error: string | null }>;
          }>;
        },
      };
    };
    const created = await call(server, partner, 'POST', '/v1/webhooks', {
      url: r.url,
      subscriptions: ['ALL'],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    await waitFor(async () => (r!.received.length >= 1 ? true : undefined), 60_000, 'the first attempt');
    const eventId = r.envelopes()[0]!.eventId;
    await server.stop('SIGKILL');

    // The embedded store's DATA_DIR lock of the killed process expires 15 s after it died.
    server = await waitFor(() => startServer(env).catch(() => undefined), 90_000, 'the restart');
    await waitFor(
      async () => (r!.received.length >= 2 ? true : undefined),
      60_000,
      'the attempt after restart',
    );
    expect(new Set(r.envelopes().map((e) => e.eventId))).toEqual(new Set([eventId]));
    const history = await waitFor(async () => {
      const res = await call(server!, partner, 'GET', '/v1/webhooks/events?status=DELIVERED');
      return res.body.data.find((e) => e.eventId === eventId);
    });
    expect(history).toMatchObject({ event: 'WEBHOOK.CREATED', status: 'DELIVERED' });
    expect(history.attempts.at(-1)).toMatchObject({ httpStatus: 200, error: null });
  }, 180_000);
});
