import { generateKeyPairSync } from 'node:crypto';
import { tempDataDir } from '@partner-api/testkit/app.ts';
import { type ServerProcess, startServer } from '@partner-api/testkit/process.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LatestWebhookKeyCache, PartnerClient, type WebhookKeyCache } from '../src/index.ts';

const KEY_ID = 'service-staging-ed25519-2';
const ROTATED_KEY_ID = 'service-staging-ed25519-3';

const sandboxEnv = () => ({ DATA_DIR: tempDataDir(), APP_ENV: 'sandbox', RATE_LIMIT_GLOBAL: '100000/60s' });

/** A transport of its own that notes every URL it is asked for, then sends it over real HTTP. */
function countingFetch() {
  const urls: string[] = [];
  const transport: typeof fetch = (input, init) => {
    urls.push(String(input));
    return fetch(input, init);
  };
  return { transport, urls };
}

/**
 * GET /webhooks/key needs no credentials: a client with a throwaway identity is enough, and
 * nothing is shared with another client in the process (the SDK keeps no module-level state).
 */
describe('the webhook key cache and its fetches belong to one client', () => {
  let server: ServerProcess;
  const keyClient = (options: { fetch?: typeof fetch; webhookKeyCache?: WebhookKeyCache } = {}) =>
    new PartnerClient({
      baseUrl: server.baseUrl,
      clientId: 'key-reader',
      clientSecret: 'unused',
      keyId: 'unused',
      privateKey: generateKeyPairSync('ed25519').privateKey,
      ...options,
    });

  beforeAll(async () => {
    server = await startServer(sandboxEnv());
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('two clients fetch the key at once: aborting one leaves the other with the key', async () => {
    const [first, second] = [keyClient(), keyClient()];
    const controller = new AbortController();
    const aborted = first.webhooks.key({ signal: controller.signal });
    const other = second.webhooks.key();
    controller.abort(new Error('the first caller gave up'));
    await expect(aborted).rejects.toThrow('the first caller gave up');
    await expect(other).resolves.toMatchObject({ keyId: KEY_ID });
    expect(first.webhooks.cache.latest()).toBeUndefined();
  });

  it('within one client, an aborted caller does not fail a caller without a signal', async () => {
    const client = keyClient();
    const controller = new AbortController();
    const aborted = client.webhooks.keyFor(KEY_ID, { signal: controller.signal });
    const other = client.webhooks.keyFor(KEY_ID);
    controller.abort(new Error('gave up'));
    await expect(aborted).rejects.toThrow('gave up');
    await expect(other).resolves.toMatchObject({ keyId: KEY_ID });
  });

  it("each client's fetch goes through its own transport; equal callers of one client share one", async () => {
    const [one, two] = [countingFetch(), countingFetch()];
    const [first, second] = [keyClient({ fetch: one.transport }), keyClient({ fetch: two.transport })];
    const keys = await Promise.all([
      first.webhooks.key(),
      second.webhooks.key(),
      first.webhooks.key(),
      second.webhooks.key(),
      first.webhooks.keyFor(KEY_ID),
    ]);
    expect(keys.map((key) => key?.keyId)).toEqual([KEY_ID, KEY_ID, KEY_ID, KEY_ID, KEY_ID]);
    expect(one.urls).toEqual([`${server.baseUrl}/v1/webhooks/key`]);
    expect(two.urls).toEqual([`${server.baseUrl}/v1/webhooks/key`]);
  });

  it('callers of one client with a different timeout or retry budget get fetches of their own', async () => {
    const { transport, urls } = countingFetch();
    const client = keyClient({ fetch: transport });
    await Promise.all([
      client.webhooks.key(),
      client.webhooks.key({ timeoutMs: 10_000 }),
      client.webhooks.key({ maxRetries: 0 }),
      client.webhooks.key({ timeoutMs: 10_000 }),
    ]);
    expect(urls).toHaveLength(3);
  });

  it('an injected cache is the one the client reads and fills', async () => {
    const { transport, urls } = countingFetch();
    const cache = new LatestWebhookKeyCache();
    const key = await keyClient({ fetch: transport, webhookKeyCache: cache }).webhooks.key();
    expect(cache.latest()).toBe(key);
    // A second client given the same cache (the same server) makes no request of its own.
    expect(await keyClient({ fetch: transport, webhookKeyCache: cache }).webhooks.keyFor(KEY_ID)).toBe(key);
    expect(urls).toHaveLength(1);
  });

  it('a rotation replaces the cached key: the cache never grows', async () => {
    const { transport, urls } = countingFetch();
    const client = keyClient({ fetch: transport });
    const cache = client.webhooks.cache as LatestWebhookKeyCache;
    const before = await client.webhooks.key();
    expect(before.keyId).toBe(KEY_ID);
    expect(cache.size).toBe(1);

    // The operator rotates: the same address now serves generation 3 with a new key.
    await server.stop();
    const rotatedKey = generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' });
    server = await startServer({
      ...sandboxEnv(),
      PORT: String(server.port),
      WEBHOOK_KEY_GENERATION: '3',
      WEBHOOK_SIGNING_KEY: rotatedKey.toString(),
    });

    const after = await client.webhooks.keyFor(ROTATED_KEY_ID);
    expect(after).toMatchObject({ keyId: ROTATED_KEY_ID });
    expect(after?.publicKey).not.toBe(before.publicKey);
    expect(cache.size).toBe(1);
    expect(cache.get(KEY_ID)).toBeUndefined();
    expect(await client.webhooks.key()).toBe(after);
    expect(urls).toHaveLength(2);

    // The old id is no longer published: a webhook signed with it is rejected, and nothing is added.
    expect(await client.webhooks.keyFor(KEY_ID)).toBeUndefined();
    expect(cache.size).toBe(1);
    expect(urls).toHaveLength(3);
    // It restarts a server: the hooks' allowance for a start (vitest.config.ts), not a request's.
  }, 90_000);
});
