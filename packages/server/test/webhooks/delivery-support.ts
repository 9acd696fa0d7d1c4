/**
 * What the delivery suites share: a certificate made at test time, a real HTTPS receiver whose
 * answers a test scripts, an organization with a webhook written straight into the store (helper
 * A's routes register webhooks; these suites test delivery), and events emitted through the outbox.
 */
import { execFileSync } from 'node:child_process';
import { createPublicKey, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  createId,
  verifyWebhookDelivery,
  WEBHOOK_SIGNED_COMPONENTS,
  type WebhookEventName,
} from '@partner-api/contract';
import { sql } from 'drizzle-orm';
import { createVerifier, httpbis } from 'http-message-signatures';
import type { Queryable } from '../../src/db/client.ts';
import { one, run } from '../../src/db/query.ts';
import type { EventOutbox } from '../../src/services/webhooks/outbox.ts';

export type Tls = { dir: string; certFile: string; cert: string; key: string };

/** A self-signed certificate for `localhost` (openssl, Ed25519), its file given as WEBHOOKS_CA_FILE. */
export function makeCertificate(): Tls {
  const dir = mkdtempSync(path.join(tmpdir(), 'webhook-tls-'));
  const certFile = path.join(dir, 'cert.pem');
  const keyFile = path.join(dir, 'key.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ed25519',
      '-nodes',
      '-keyout',
      keyFile,
      '-out',
      certFile,
      '-days',
      '2',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost',
    ],
    { stdio: 'ignore' },
  );
  return { dir, certFile, cert: readFileSync(certFile, 'utf8'), key: readFileSync(keyFile, 'utf8') };
}

export type Received = {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
  at: number;
};

/** What the receiver does with the n-th request (0-based): answer, or hold it open ('hang'). */
export type Script = (
  index: number,
  request: Received,
) => { status: number; headers?: Record<string, string>; body?: string } | 'hang';

export type Receiver = {
  /** The webhook URL (host `localhost`, the certificate's name). */
  url: string;
  port: number;
  received: Received[];
  /** TCP connections accepted (a refused attempt must not even connect). */
  connections: number;
  /** The envelopes received, parsed. */
  envelopes(): Array<{ eventId: string; event: string; createdAt: number; data: Record<string, unknown> }>;
  script: Script;
  close(): Promise<void>;
};

export const OK: Script = () => ({ status: 200, body: 'ok' });

/** A real HTTPS receiver on every address (IPv4 and IPv6 `localhost`), on a free port. */
export async function startReceiver(tls: Tls, script: Script = OK, pathName = '/hooks'): Promise<Receiver> {
  const received: Received[] = [];
  const held: Array<{ destroy(): void }> = [];
  const receiver: Receiver = {
    url: '',
    port: 0,
    received,
    connections: 0,
    script,
    envelopes: () => received.map((r) => JSON.parse(r.body)),
    close: () =>
      new Promise<void>((resolve) => {
        for (const h of held) h.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server: Server = createServer({ cert: tls.cert, key: tls.key }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers))
        headers[k] = Array.isArray(v) ? v.join(', ') : String(v);
      const r: Received = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      };
      const index = received.length;
      received.push(r);
      const answer = receiver.script(index, r);
      if (answer === 'hang') {
        held.push(res.socket ?? { destroy() {} });
        return;
      }
      res.writeHead(answer.status, answer.headers ?? {});
      res.end(answer.body ?? '');
    });
  });
  server.on('connection', () => {
    receiver.connections += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, resolve));
  receiver.port = (server.address() as AddressInfo).port;
  receiver.url = `https://localhost:${receiver.port}${pathName}`;
  return receiver;
}

/** An organization and its ACTIVE webhook, subscribed to `subscriptions`, written into the store. */
export async function createWebhook(
  db: Queryable,
  url: string,
  subscriptions: string[] = ['ALL'],
): Promise<{ organizationId: string; webhookId: string }> {
  const organizationId = createId();
  const webhookId = createId();
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
  await db.transaction((tx) => events.emit(tx, { organizationId, event, data }));
  const row = await one<{ id: string }>(
    db as Queryable,
    sql`select id from webhook_events where organization_id = ${organizationId} order by created_at desc limit 1`,
  );
  return row!.id;
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
