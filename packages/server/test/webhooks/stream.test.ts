import { buildTestApp, describeStores } from '@partner-api/testkit/app.ts';
import { adminInject, NOT_FOUND_BODY } from '@partner-api/testkit/helpers.ts';
import {
  type ListeningApp,
  listeningPartner,
  listeningTestApp,
  sdkClient,
  until,
} from '@partner-api/testkit/listening.ts';
import { createPartner, type Partner, signedFetch, signedInject } from '@partner-api/testkit/partner.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StreamedWebhookEvent } from '../../../sdk/src/index.ts';
import { isLocalForwardUrl } from '../../src/routes/webhook-stream.ts';

const FORWARD_TO = 'http://localhost:3000/hooks';
const STREAM_URL = `/v1/webhooks/events/stream?forwardTo=${encodeURIComponent(FORWARD_TO)}`;

/** Reads a partner's stream in the background until stopped. */
function listen(partner: Partner) {
  const received: StreamedWebhookEvent[] = [];
  const controller = new AbortController();
  let ended = false;
  let opened = false;
  const done = (async () => {
    try {
      for await (const event of sdkClient(partner).webhooks.events.stream({
        forwardTo: FORWARD_TO,
        signal: controller.signal,
        onOpen: () => (opened = true),
      })) {
        received.push(event);
      }
    } catch (error) {
      if (!controller.signal.aborted) throw error;
    } finally {
      ended = true;
    }
  })();
  return {
    received,
    get ended() {
      return ended;
    },
    /** Once the server has marked what was there: every event emitted after that is sent. */
    opened: () => opened,
    done,
    stop: () => controller.abort(),
  };
}

const emit = (t: ListeningApp, organizationId: string, marker: string) =>
  t.ctx.events.emit(t.ctx.database.db, {
    organizationId,
    event: 'CUSTOMER.CREATED',
    data: { id: marker, firstName: 'Amina', lastName: 'Otieno' },
  });

/** The test's own events (the SDK's token request adds an AUTH.CREATED to each stream), drain probes aside. */
const markers = (events: StreamedWebhookEvent[]) =>
  events
    .filter((e) => e.envelope.event === 'CUSTOMER.CREATED')
    .map((e) => e.envelope.data.id as string)
    .filter((id) => !id.startsWith('probe-'));

let probes = 0;
/** Waits until every event emitted before now has reached `stream`: a last one is emitted and seen. */
async function drained(t: ListeningApp, organizationId: string, stream: ReturnType<typeof listen>) {
  const id = `probe-${++probes}`;
  await emit(t, organizationId, id);
  await until('the stream to drain', () => stream.received.some((e) => e.envelope.data.id === id));
}

describeStores('GET /v1/webhooks/events/stream on %s (preview on)', (store) => {
  let t: ListeningApp;
  beforeAll(async () => {
    t = await listeningTestApp(store, { WEBHOOKS_PREVIEW: 'true' });
  });
  afterAll(() => t?.close());

  it("streams an organization's own events only, signed for forwardTo with the service key", async () => {
    const [a, b] = [await listeningPartner(t), await listeningPartner(t)];
    // Before the connection: not streamed.
    await emit(t, a.organizationId, 'a-before');
    const [streamA, streamB] = [listen(a), listen(b)];
    try {
      // The stream is open once the server has marked what was there; events after that are sent.
      await until('both streams to open', () => streamA.opened() && streamB.opened());
      await emit(t, a.organizationId, 'a-1');
      await emit(t, b.organizationId, 'b-1');
      await emit(t, a.organizationId, 'a-2');
      await until(
        'both streams',
        () => markers(streamA.received).length >= 2 && markers(streamB.received).length >= 1,
      );
      // Nothing else is on its way: an event emitted last has arrived on each stream.
      await Promise.all([drained(t, a.organizationId, streamA), drained(t, b.organizationId, streamB)]);
      expect(markers(streamA.received).sort()).toEqual(['a-1', 'a-2']);
      expect(markers(streamB.received)).toEqual(['b-1']);

      // Every event of each stream is its own organization's (the AUTH.CREATED of its token too).
      for (const [stream, partner] of [
        [streamA, a],
        [streamB, b],
      ] as const) {
        for (const event of stream.received) {
          const organizationId = event.envelope.data.organizationId;
          if (organizationId !== undefined) expect(organizationId).toBe(partner.organizationId);
        }
      }
      const verifier = sdkClient(a);
      for (const event of streamA.received) {
        expect(event.envelope).toMatchObject({ eventId: expect.any(String), createdAt: expect.any(Number) });
        expect(event.headers['webhook-id']).toBe(event.envelope.eventId);
        expect(event.headers['signature-input']).toContain('keyid="service-staging-ed25519-2"');
        const envelope = await verifier.webhooks.verify({
          method: 'POST',
          url: FORWARD_TO,
          headers: event.headers,
          body: event.body,
        });
        expect(envelope).toEqual(event.envelope);
        // Signed for forwardTo: the same delivery does not verify at another URL.
        await expect(
          verifier.webhooks.verify({
            method: 'POST',
            url: 'https://receiver.example/hooks',
            headers: event.headers,
            body: event.body,
          }),
        ).rejects.toMatchObject({ reason: 'signature' });
      }
    } finally {
      streamA.stop();
      streamB.stop();
      await Promise.all([streamA.done, streamB.done]);
    }
  }, 90_000);

  it('refuses an unauthenticated stream and a forwardTo that is not on this machine', async () => {
    const partner = await listeningPartner(t);
    const bare = await fetch(`${t.baseUrl}${STREAM_URL}`);
    expect(bare.status).toBe(401);

    for (const forwardTo of [
      undefined,
      'https://receiver.example/hooks',
      'ftp://localhost/x',
      'http://10.0.0.1/',
    ]) {
      const url = `/v1/webhooks/events/stream${forwardTo === undefined ? '' : `?forwardTo=${encodeURIComponent(forwardTo)}`}`;
      const res = await signedFetch(partner, { method: 'GET', url });
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({
        error: 'Validation failed',
        details: [
          { field: 'forwardTo', message: expect.stringContaining('forwardTo must be an http or https URL') },
        ],
      });
    }
  });

  it('ends an open stream at the first poll after its token is revoked or its organization deactivated', async () => {
    const consume = (client: ReturnType<typeof sdkClient>) => {
      const got: StreamedWebhookEvent[] = [];
      let ended = false;
      let opened = false;
      const done = (async () => {
        try {
          const events = client.webhooks.events.stream({
            forwardTo: FORWARD_TO,
            onOpen: () => (opened = true),
          });
          for await (const event of events) got.push(event);
        } finally {
          ended = true;
        }
      })();
      return { got, done, ended: () => ended, opened: () => opened };
    };

    // Revoked: the stream's own token, revoked while the stream is open.
    const revoking = await listeningPartner(t);
    const client = sdkClient(revoking);
    const first = consume(client);
    await until('the stream to open', first.opened);
    await emit(t, revoking.organizationId, 'before-revoke');
    await until('the first event', () => markers(first.got).includes('before-revoke'));
    await client.oauth.revoke();
    await until('the stream to end after the revoke', first.ended);
    await first.done;

    // Deactivated: the organization switched off by the operator.
    const deactivated = await listeningPartner(t);
    const second = consume(sdkClient(deactivated));
    await until('the stream to open', second.opened);
    await emit(t, deactivated.organizationId, 'before-deactivation');
    await until('the first event', () => markers(second.got).includes('before-deactivation'));
    const off = await adminInject(t, 'PATCH', `/admin/organizations/${deactivated.organizationId}`, {
      isActive: false,
    });
    expect(off.statusCode, off.body).toBe(200);
    await until('the stream to end after the deactivation', second.ended);
    await emit(t, deactivated.organizationId, 'after-deactivation');
    await second.done;
    expect(markers(second.got)).toEqual(['before-deactivation']);
  });

  it('ends open streams when the server closes', async () => {
    const other = await listeningTestApp(store, { WEBHOOKS_PREVIEW: 'true' });
    const partner = await listeningPartner(other);
    const stream = listen(partner);
    await until('the stream to open', stream.opened);
    await other.close();
    await until('the stream to end', () => stream.ended);
    await stream.done;
  });
});

describeStores('GET /v1/webhooks/events/stream on %s (preview off)', (store) => {
  it('is the 404 every unknown path gets', async () => {
    const t = await buildTestApp(store);
    try {
      const partner = await createPartner(t);
      const res = await signedInject(t.app, partner, { method: 'GET', url: STREAM_URL });
      expect(res.statusCode).toBe(404);
      expect(res.body).toBe(NOT_FOUND_BODY);
    } finally {
      await t.close();
    }
  });
});

describe('forwardTo', () => {
  it.each([
    ['http://localhost:3000/hooks', true],
    ['https://localhost/hooks', true],
    ['http://app.localhost:8000/', true],
    ['http://127.0.0.1:3000/', true],
    ['http://127.1.2.3/', true],
    ['http://[::1]:3000/', true],
    ['http://[::ffff:127.0.0.1]/', true],
    ['http://user:pw@localhost/', false],
    ['https://receiver.example/hooks', false],
    ['http://localhost.example.com/', false],
    ['http://10.0.0.1/', false],
    ['http://0x7f000001/', true],
    ['file:///etc/passwd', false],
    ['not a url', false],
  ])('%s → %s', (url, allowed) => {
    expect(isLocalForwardUrl(url)).toBe(allowed);
  });
});
