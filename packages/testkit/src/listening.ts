import { PartnerClient } from '../../sdk/src/index.ts';
import { buildTestApp, type StoreKind, type TestApp } from './app.ts';
import { createPartner, type Partner } from './partner.ts';
import { freePort } from './process.ts';

/**
 * A test app that listens on a real port (streams cannot go through inject), with PUBLIC_BASE_URL
 * naming that port so that requests signed for it verify. Its `ctx` stays in reach of the test.
 */
export type ListeningApp = TestApp & { baseUrl: string };

export async function listeningTestApp(
  store: StoreKind,
  env: Record<string, string> = {},
): Promise<ListeningApp> {
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const t = await buildTestApp(store, { PUBLIC_BASE_URL: baseUrl, ...env });
  // Webhook hosts resolve from this table, never through DNS (no delivery test leaves the machine).
  t.ctx.webhookLookup = async () => [{ address: '127.0.0.1', family: 4 }];
  await t.app.listen({ port, host: '127.0.0.1' });
  return { ...t, baseUrl };
}

/** A fresh organization whose signed calls go over HTTP to the listening app. */
export async function listeningPartner(t: ListeningApp): Promise<Partner> {
  return { ...(await createPartner(t)), baseUrl: t.baseUrl };
}

/** The SDK client of a partner. */
export function sdkClient(partner: Partner, options: { fetch?: typeof fetch } = {}): PartnerClient {
  return new PartnerClient({
    baseUrl: partner.baseUrl,
    clientId: partner.clientId,
    clientSecret: partner.clientSecret,
    keyId: partner.keyId,
    privateKey: partner.privateKey,
    maxRetries: 0,
    ...options,
  });
}

/** Polls a condition (no timing assertions: generous deadline, short steps). */
export async function until(what: string, condition: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
