/**
 * Round trips per request, counted on the wire. A second `partner-api serve` reaches
 * PostgreSQL and Redis through the fault tests' TCP relay (packages/testkit/src/faults.ts),
 * which counts what the server sends: on PostgreSQL each Sync or Query message begins one exchange;
 * on Redis each write of the client is one round trip (the rate limiter corks the commands of a loop
 * turn into one write). Every endpoint of the spec is counted, and the mutations' paths that differ
 * (a replay, a USSD move with effects); `revoke` gets a token of its own each time. Each request is sent 20 times, one at a time, after a warm-up that loads the
 * caller into memory; the median is reported (a background poll of the payment worker may fall into
 * one sample). Not run during the throughput scenarios: the relays would add a hop to every request.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { scratchDatabase } from '@partner-api/testkit/database.ts';
import { startRelay, targetOf } from '@partner-api/testkit/faults.ts';
import { fetchToken, payloadOf, signedHeaders } from '@partner-api/testkit/partner.ts';
import type { PreparedRequest } from './load.ts';
import { createBenchPartner, send } from './partner.ts';
import { startPartnerApi } from './processes.ts';

export type RoundTrips = {
  requests: { request: string; status: number; database: number; redis: number }[];
};

const SAMPLES = 20;

export async function countRoundTrips(options: {
  databaseUrl: string;
  redisUrl: string;
}): Promise<RoundTrips> {
  // A database of its own: the server's payment worker would otherwise work through other runs'
  // pending payments in the shared one, and its statements would be counted with the requests'.
  const scratch = await scratchDatabase(options.databaseUrl, 'bench_round_trips');
  const postgres = await startRelay(targetOf(scratch.url, 5432), { protocol: 'postgres' });
  const redis = await startRelay(targetOf(options.redisUrl, 6379));
  const dataDir = mkdtempSync(path.join(tmpdir(), 'bench-round-trips-'));
  const adminToken = randomBytes(24).toString('hex');
  const server = await startPartnerApi({
    env: {
      DATA_DIR: dataDir,
      ADMIN_TOKEN: adminToken,
      LOG_LEVEL: 'info',
      RATE_LIMIT_GLOBAL: '1000000000/60s',
      RATE_LIMIT_TOKEN: '1000000000/900s',
      DATABASE_URL: postgres.urlFor(scratch.url),
      REDIS_URL: redis.urlFor(options.redisUrl),
    },
    logFile: path.join(dataDir, 'server.log'),
  });
  try {
    const partner = await createBenchPartner({ ...server, adminToken });
    const request = (method: PreparedRequest['method'], url: string, body?: unknown, key?: string) => {
      const payload = payloadOf(body);
      const headers = signedHeaders(partner, { method, url, idempotencyKey: key }, payload);
      return { method, path: url, headers, body: payload } as PreparedRequest;
    };
    // `make` may send what the request needs first (a USSD move needs a session); only the request
    // it returns is counted.
    const counted = async (make: () => PreparedRequest | Promise<PreparedRequest>) => {
      const database: number[] = [];
      const writes: number[] = [];
      let status = 0;
      for (let i = 0; i < SAMPLES; i++) {
        const prepared = await make();
        const before = { database: postgres.exchanges, redis: redis.received };
        status = (await send(partner, prepared)).status;
        database.push(postgres.exchanges - before.database);
        writes.push(redis.received - before.redis);
      }
      return { status, database: median(database), redis: median(writes) };
    };
    await send(partner, request('GET', '/v1/oauth/me'));
    const customer = await send(
      partner,
      request('POST', '/v1/customers', { firstName: 'Round', lastName: 'Trip', msisdn: '254712345678' }),
    );
    const id = (customer.json as { data: { id: string } }).data.id;
    const replayKey = randomUUID();
    const body = { firstName: 'Round', lastName: 'Replay' };
    await send(partner, request('POST', '/v1/customers', body, replayKey));
    const openSession = () => request('POST', '/v1/ussd/session', { customerId: id }, randomUUID());
    const move = (sessionId: string, choice: string) =>
      request('POST', '/v1/ussd/process', { sessionId, choice }, randomUUID());
    /** A session walked to BUY_CONFIRM (HOME → STOCKS → SELECT_STOCK → BUY_AMOUNT → BUY_CONFIRM). */
    const atBuyConfirm = async () => {
      const opened = await send(partner, openSession());
      const { sessionId } = (opened.json as { data: { sessionId: string } }).data;
      for (const choice of ['1', '1', '1', '1000']) await send(partner, move(sessionId, choice));
      return sessionId;
    };
    const bought = await send(partner, move(await atBuyConfirm(), '1'));
    // The BUY_SUBMITTED screen names the order (a CUID) in its text.
    const orderId = /\bc[a-z0-9]{24}\b/.exec(JSON.stringify(bought.json))?.[0] ?? 'cnoorderfoundnoorderfound';
    const rows: [string, () => PreparedRequest | Promise<PreparedRequest>][] = [
      ['signed GET /v1/customers/{id}', () => request('GET', `/v1/customers/${id}`)],
      ['signed GET /v1/customers (a page of 10)', () => request('GET', '/v1/customers')],
      ['signed GET /v1/oauth/me', () => request('GET', '/v1/oauth/me')],
      ['signed GET /v1/payment/status/{orderId}', () => request('GET', `/v1/payment/status/${orderId}`)],
      [
        'POST /v1/oauth/token',
        () => ({
          method: 'POST',
          path: '/v1/oauth/token',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ clientId: partner.clientId, clientSecret: partner.clientSecret }),
        }),
      ],
      [
        'signed POST /v1/oauth/revoke (a token of its own)',
        async () => {
          const token = await fetchToken(partner);
          const headers = signedHeaders(
            { ...partner, token },
            { method: 'POST', url: '/v1/oauth/revoke' },
            undefined,
          );
          return { method: 'POST', path: '/v1/oauth/revoke', headers } as PreparedRequest;
        },
      ],
      [
        'signed POST /v1/customers, new key',
        () => request('POST', '/v1/customers', { firstName: 'Round', lastName: randomUUID() }),
      ],
      ['signed POST /v1/customers, replay', () => request('POST', '/v1/customers', body, replayKey)],
      [
        'signed PATCH /v1/customers/{id}, new key',
        () => request('PATCH', `/v1/customers/${id}`, { lastName: randomUUID().slice(0, 8) }),
      ],
      ['GET /v1/webhooks/key', () => ({ method: 'GET', path: '/v1/webhooks/key', headers: {} })],
      ['signed POST /v1/ussd/session', openSession],
      [
        'signed POST /v1/ussd/process (one move)',
        async () => {
          const opened = await send(partner, openSession());
          const { sessionId } = (opened.json as { data: { sessionId: string } }).data;
          return move(sessionId, '1');
        },
      ],
      [
        'signed POST /v1/ussd/process (a confirmed buy: a move with effects)',
        async () => move(await atBuyConfirm(), '1'),
      ],
    ];
    const requests: RoundTrips['requests'] = [];
    for (const [name, make] of rows) requests.push({ request: name, ...(await counted(make)) });
    return { requests };
  } finally {
    await server.stop();
    await Promise.all([postgres.close(), redis.close()]);
    await scratch.drop().catch(() => {});
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}
