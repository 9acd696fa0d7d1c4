/**
 * Scenario 5, webhook delivery (docs/webhooks.md): one `partner-api serve` with WEBHOOKS_PREVIEW on, on a
 * PostgreSQL database of its own (its worker claims every pending delivery of its database, and
 * the shared test database may hold other runs' deliveries to hosts nobody should call), delivering
 * to an HTTPS receiver in this process (a certificate made by openssl, trusted through
 * WEBHOOKS_CA_FILE; WEBHOOKS_ALLOW_PRIVATE_TARGETS for localhost).
 *   a. p99 from commit to delivery with an idle queue, events one at a time with a random 0–100 ms
 *      pause between: (API) a signed POST /v1/customers, from its 201 (after the commit) to the
 *      CUSTOMER.CREATED's arrival at the receiver, same clock: the route nudges the worker; and
 *      (poll) events committed by this process straight into the outbox, as events from paths
 *      that do not nudge (the payment worker, USSD moves) wait for the worker's next poll.
 *   b. deliveries per second of the one instance: a backlog of events committed in one statement,
 *      timed from that commit to the last arrival; the server's CPU over the same span.
 * Straight into the outbox means as services/webhooks/outbox.ts writes them: the event and its
 * delivery in one statement.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { scratchDatabase } from '@partner-api/testkit/database.ts';
import pg from 'pg';
import { makeCertificate, startReceiver } from '../../packages/server/test/webhooks/receiver.ts';
import { createBenchPartner, send, signed } from './partner.ts';
import { cpuSeconds, startPartnerApi } from './processes.ts';

type Latency = { events: number; p50Ms: number; p99Ms: number; maxMs: number };

export type DeliveryResult = {
  /** From the 201 of POST /v1/customers (the route nudges the worker). */
  idleApi: Latency;
  /** From a commit that nudges nothing (the worker's poll). */
  idle: Latency;
  backlog: { events: number; seconds: number; perSecond: number; serverCores: number };
  /** The server settings changed from their defaults (BENCH_SERVER_ENV). */
  settings: Record<string, string>;
};

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;

const EMIT = `with e as (
  insert into webhook_events (id, organization_id, event, data)
  select gen_random_uuid()::text, $1, 'CUSTOMER.CREATED', jsonb_build_object('id', 'cus_' || n, 'firstName', 'Bench')
    from generate_series(1, $2::int) n
  returning id, organization_id
)
insert into webhook_deliveries (id, event_id, webhook_id, organization_id, state)
select gen_random_uuid()::text, e.id, $3, e.organization_id, 'PENDING' from e`;

export async function runDeliveryBench(options: {
  databaseUrl: string;
  idleEvents: number;
  backlogEvents: number;
  log: (line: string) => void;
}): Promise<DeliveryResult> {
  const { databaseUrl, log } = options;
  const scratch = await scratchDatabase(databaseUrl, 'bench_webhooks');
  const url = new URL(scratch.url);
  const tls = makeCertificate();
  const receiver = await startReceiver(tls);
  const dataDir = mkdtempSync(path.join(tmpdir(), 'bench-webhooks-'));
  // BENCH_SERVER_ENV compares a setting, e.g. '{"WEBHOOK_WORKER_BATCH":"50"}'.
  const settings: Record<string, string> = JSON.parse(process.env.BENCH_SERVER_ENV ?? '{}');
  const adminToken = randomBytes(24).toString('hex');
  const server = await startPartnerApi({
    env: {
      ADMIN_TOKEN: adminToken,
      RATE_LIMIT_GLOBAL: '1000000000/60s',
      RATE_LIMIT_TOKEN: '1000000000/900s',
      DATA_DIR: dataDir,
      DATABASE_URL: url.toString(),
      LOG_LEVEL: 'info',
      WEBHOOKS_PREVIEW: 'true',
      WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOKS_CA_FILE: tls.certFile,
      ...settings,
    },
    logFile: path.join(dataDir, 'server.log'),
  });
  const db = new pg.Client({ connectionString: url.toString() });
  await db.connect();
  try {
    const partner = await createBenchPartner({ ...server, adminToken });
    const org = partner.organizationId;
    const webhook = `bench_wh_${randomBytes(4).toString('hex')}`;
    await db.query(
      `insert into webhooks (id, organization_id, url, subscriptions, status) values ($1, $2, $3, '{ALL}', 'ACTIVE')`,
      [webhook, org, receiver.url],
    );
    const arrivals = async (count: number, timeoutMs: number) => {
      const deadline = Date.now() + timeoutMs;
      while (receiver.received.length < count) {
        if (Date.now() > deadline) throw new Error(`${receiver.received.length}/${count} deliveries arrived`);
        await new Promise((r) => setTimeout(r, 2));
      }
    };

    const oneAtATime = async (commit: (i: number) => Promise<void>) => {
      const latencies: number[] = [];
      for (let i = 0; i < options.idleEvents; i++) {
        await new Promise((r) => setTimeout(r, Math.random() * 100));
        const expected = receiver.received.length + 1;
        await commit(i);
        const committed = performance.now();
        await arrivals(expected, 30_000);
        latencies.push(receiver.received.at(-1)!.at - committed);
      }
      latencies.sort((a, b) => a - b);
      return {
        events: latencies.length,
        p50Ms: percentile(latencies, 50),
        p99Ms: percentile(latencies, 99),
        maxMs: latencies.at(-1) ?? Number.NaN,
      };
    };
    log(`delivery: ${options.idleEvents} POST /v1/customers one at a time on an idle queue`);
    const idleApi = await oneAtATime(async (i) => {
      const res = await send(
        partner,
        signed(partner, 'POST', '/v1/customers', {
          firstName: 'Hook',
          lastName: `Bench ${i}`,
          msisdn: '254712345678',
        }),
      );
      if (res.status !== 201) throw new Error(`customer create: ${res.status} ${res.text}`);
    });
    log(`delivery: ${options.idleEvents} events committed into the outbox one at a time`);
    const idle = await oneAtATime(async () => {
      await db.query(EMIT, [org, 1, webhook]);
    });

    log(`delivery: a backlog of ${options.backlogEvents} events`);
    const before = receiver.received.length;
    const cpuBefore = cpuSeconds(server.pid);
    await db.query(EMIT, [org, options.backlogEvents, webhook]);
    const committed = performance.now();
    await arrivals(before + options.backlogEvents, 600_000);
    const seconds = (receiver.received.at(-1)!.at - committed) / 1000;
    const serverCores = (cpuSeconds(server.pid) - cpuBefore) / seconds;
    const dupes =
      receiver.received.length - new Set(receiver.received.map((r) => r.headers['webhook-id'])).size;
    if (dupes > 0) log(`delivery: ${dupes} duplicate deliveries`);
    return {
      idleApi,
      idle,
      backlog: {
        events: options.backlogEvents,
        seconds,
        perSecond: options.backlogEvents / seconds,
        serverCores,
      },
      settings,
    };
  } finally {
    await db.end().catch(() => {});
    await server.stop();
    await receiver.close();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(tls.dir, { recursive: true, force: true });
    await scratch.drop().catch(() => {});
  }
}
