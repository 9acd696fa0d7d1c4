import type { LookupAddress } from 'node:dns';
import { describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { waitFor } from '../ussd/support.ts';
import {
  attemptsOf,
  createWebhook,
  type DeliveryApp,
  deliveriesOf,
  emitEvent,
  type Receiver,
  startDeliveryApp,
} from './delivery-support.ts';

/** Host names of the table below, each resolving to what an attacker would point it at. */
const TABLE: Record<string, LookupAddress[]> = {
  'loopback.example': [{ address: '127.0.0.1', family: 4 }],
  'mapped.example': [{ address: '::ffff:127.0.0.1', family: 6 }],
  'mapped-hex.example': [{ address: '::ffff:7f00:1', family: 6 }],
  'metadata.example': [{ address: '169.254.169.254', family: 4 }],
  'private.example': [{ address: '10.1.2.3', family: 4 }],
  'ipv6-loopback.example': [{ address: '::1', family: 6 }],
  // One public address does not excuse a private one beside it (DNS pinning).
  'mixed.example': [
    { address: '93.184.215.14', family: 4 },
    { address: '127.0.0.1', family: 4 },
  ],
};

/**
 * The connect-time rule (target.ts guardedLookup), with WEBHOOKS_ALLOW_PRIVATE_TARGETS off: a
 * webhook whose host resolves, at the attempt, to a non-public address is refused before any
 * byte is sent, whatever it resolved to at registration (rebinding). Hosts come from a lookup
 * table (no DNS in tests); a real receiver on this machine shows nothing reached it. Own database:
 * see startDeliveryApp.
 */
describeStores('webhook delivery refused at connect time on %s', (store) => {
  let d: DeliveryApp;
  let t: TestApp;
  let r: Receiver;

  beforeAll(async () => {
    d = await startDeliveryApp(
      store,
      'webhook_ssrf',
      { WEBHOOK_WORKER_INTERVAL_MS: '50', WEBHOOK_BACKOFF_BASE_MS: '100', WEBHOOK_BACKOFF_MAX_MS: '300' },
      async (host) => {
        const found = TABLE[host];
        if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
        return found;
      },
    );
    t = d.t;
    r = await d.receiver();
  }, 60_000);
  afterAll(() => d?.close());

  const hosts = [
    ...Object.keys(TABLE),
    // IP literals (registration refuses them; a row that has one anyway is refused here too).
    // The URL parser turns the decimal and hex notations into 127.0.0.1.
    '2130706433',
    '0x7f.1',
    '[::ffff:127.0.0.1]',
    '[::1]',
    '169.254.169.254',
  ];

  it.each(hosts)('%s: the attempt is recorded as refused and nothing reaches the receiver', async (host) => {
    const url = `https://${host}:${r.port}/hooks`;
    const { organizationId } = await createWebhook(t.ctx.database.db, url);
    const eventId = await emitEvent(t.ctx.database.db, t.ctx.events, organizationId);
    const attempts = await waitFor(
      async () => {
        const a = await attemptsOf(t.ctx.database.db, eventId);
        return a.length >= 2 ? a : undefined;
      },
      30_000,
      `attempts to ${host}`,
    );
    for (const a of attempts) {
      expect(a.httpStatus).toBeNull();
      expect(a.error).toMatch(/^refused: .*non-public address$/);
    }
    // Still pending: a refusal is a failure like any other (the partner may fix its DNS).
    expect((await deliveriesOf(t.ctx.database.db, eventId))[0]?.state).toBe('PENDING');
    expect(r.received).toEqual([]);
    expect(r.connections).toBe(0);
  });
});
