import { generateKeyPairSync, type KeyObject, randomUUID } from 'node:crypto';
import { signWebhookDelivery, type WebhookEnvelope } from '@partner-api/contract';
import { type ServerProcess, startServer, tempDataDir } from '@partner-api/testkit/process.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookVerificationError } from '../../../sdk/src/index.ts';
import { countingClient } from './delivery-support.ts';

const RECEIVER = 'https://receiver.example/hooks?tenant=7';
const GENERATION = 2;
const keyIdOf = (generation: number) => `service-staging-ed25519-${generation}`;

const newKey = () => generateKeyPairSync('ed25519').privateKey;
const pemOf = (key: KeyObject) => key.export({ format: 'pem', type: 'pkcs8' }).toString();

/** A delivery as the service sends it: the envelope as body, headers by the recipe. */
function delivery(
  privateKey: KeyObject,
  keyId: string,
  options: { now?: number } = {},
): { method: string; url: string; headers: Record<string, string>; body: string; envelope: WebhookEnvelope } {
  const envelope: WebhookEnvelope = {
    eventId: randomUUID(),
    event: 'CUSTOMER.CREATED',
    createdAt: Math.floor(Date.now() / 1000),
    data: { id: 'clh3am8qt0000ab12cd34ef56', firstName: 'Amina' },
  };
  const body = JSON.stringify(envelope);
  const headers = signWebhookDelivery({
    url: RECEIVER,
    body,
    eventId: envelope.eventId,
    keyId,
    privateKey,
    now: options.now,
  });
  return { method: 'POST', url: RECEIVER, headers, body, envelope };
}

async function reasonOf(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof WebhookVerificationError))
    throw new Error(`expected a verification error, got ${error}`);
  return error.reason;
}

describe('webhooks.verify in the SDK, against a started server', () => {
  const serviceKey = newKey();
  let server: ServerProcess;
  const env = () => ({ DATA_DIR: tempDataDir(), APP_ENV: 'sandbox', RATE_LIMIT_GLOBAL: '100000/60s' });

  beforeAll(async () => {
    server = await startServer({
      ...env(),
      WEBHOOK_SIGNING_KEY: pemOf(serviceKey),
      WEBHOOK_KEY_GENERATION: String(GENERATION),
    });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("verifies a delivery signed with the server's key, fetching the key once", async () => {
    const { client, keyFetches } = countingClient(server.baseUrl);
    const first = delivery(serviceKey, keyIdOf(GENERATION));
    expect(await client.webhooks.verify(first)).toEqual(first.envelope);
    const second = delivery(serviceKey, keyIdOf(GENERATION));
    // Header names in any case, the body as bytes: as a raw-body middleware hands them over.
    const upper = Object.fromEntries(Object.entries(second.headers).map(([k, v]) => [k.toUpperCase(), v]));
    expect(
      await client.webhooks.verify({ ...second, headers: upper, body: Buffer.from(second.body) }),
    ).toEqual(second.envelope);
    expect(keyFetches).toEqual([`${server.baseUrl}/v1/webhooks/key`]);
  });

  it('refuses a tampered body, a changed header, an old timestamp and a foreign key, each with its reason', async () => {
    const { client, keyFetches } = countingClient(server.baseUrl);
    const good = delivery(serviceKey, keyIdOf(GENERATION));
    await client.webhooks.verify(good);

    const tampered = { ...good, body: good.body.replace('Amina', 'Amine') };
    expect(await reasonOf(client.webhooks.verify(tampered))).toBe('digest');

    const changedHeader = { ...good, headers: { ...good.headers, 'webhook-id': randomUUID() } };
    expect(await reasonOf(client.webhooks.verify(changedHeader))).toBe('signature');

    const elsewhere = { ...good, url: 'https://receiver.example/other' };
    expect(await reasonOf(client.webhooks.verify(elsewhere))).toBe('signature');

    const old = delivery(serviceKey, keyIdOf(GENERATION), { now: Math.floor(Date.now() / 1000) - 600 });
    expect(await reasonOf(client.webhooks.verify(old))).toBe('timestamp');

    // Another key under the service's key id: the signature does not verify.
    const forged = delivery(newKey(), keyIdOf(GENERATION));
    expect(await reasonOf(client.webhooks.verify(forged))).toBe('signature');
    expect(keyFetches).toHaveLength(1);

    // A key id the server does not publish: one more fetch, then refused.
    const foreign = delivery(newKey(), 'someone-elses-key');
    const error = await client.webhooks.verify(foreign).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WebhookVerificationError);
    expect(error).toMatchObject({
      reason: 'unknown-key',
      keyId: 'someone-elses-key',
      message: 'unknown keyid',
    });
    expect(keyFetches).toHaveLength(2);

    // An expired delivery with an unknown key id is refused without a fetch.
    const oldForeign = delivery(newKey(), 'another-key', { now: Math.floor(Date.now() / 1000) - 600 });
    expect(await reasonOf(client.webhooks.verify(oldForeign))).toBe('timestamp');
    expect(keyFetches).toHaveLength(2);
  });

  it('after a key rotation, verifies the new keyid after exactly one re-fetch', async () => {
    const { client, keyFetches } = countingClient(server.baseUrl);
    await client.webhooks.verify(delivery(serviceKey, keyIdOf(GENERATION)));
    expect(keyFetches).toHaveLength(1);

    // The operator rotates: the same address now serves generation 3 with another key.
    await server.stop();
    const rotated = newKey();
    server = await startServer({
      ...env(),
      PORT: String(server.port),
      WEBHOOK_SIGNING_KEY: pemOf(rotated),
      WEBHOOK_KEY_GENERATION: String(GENERATION + 1),
    });

    const fresh = delivery(rotated, keyIdOf(GENERATION + 1));
    expect(await client.webhooks.verify(fresh)).toEqual(fresh.envelope);
    expect(keyFetches).toHaveLength(2);
    // Cached from now on.
    await client.webhooks.verify(delivery(rotated, keyIdOf(GENERATION + 1)));
    expect(keyFetches).toHaveLength(2);
    // The old key id is no longer published: one fetch, then refused.
    expect(await reasonOf(client.webhooks.verify(delivery(serviceKey, keyIdOf(GENERATION))))).toBe(
      'unknown-key',
    );
    expect(keyFetches).toHaveLength(3);
  }, 90_000);
});
