/**
 * The contract every payment provider keeps, through the interface the pipeline calls
 * (`PaymentAdapter`), built the way production builds it: the provider module's settings from the
 * environment (`loadConfig`) and its `createAdapter`, talking HTTP to the provider's fake. The same
 * scenario table runs for every provider; a new one passes by adding one entry to PROVIDERS.
 */
import { randomUUID } from 'node:crypto';
import {
  FAKE_AIRTEL_ENV,
  FAKE_MTN_ENV,
  SANDBOX_PASSKEY,
  SANDBOX_SHORTCODE,
  startFakeAirtel,
  startFakeDaraja,
  startFakeMtn,
} from '@partner-api/fakes';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { money } from '../../src/lib/money.ts';
import type {
  PaymentAdapter,
  ProviderRequest,
  QueryResult,
} from '../../src/services/payments/pipeline/adapter.ts';
import { PAYMENT_PROVIDERS, type PaymentProvider } from '../../src/services/payments/providers/index.ts';

/** What every fake offers the suite: a scenario queue and counts of what it processed. */
type Fake = {
  url: string;
  queue(operation: never, scenario: never): void;
  processed(operation: never): number;
  close(): Promise<void>;
};

type Entry = {
  key: PaymentProvider['key'];
  start(): Promise<Fake>;
  env(fakeUrl: string): Record<string, string>;
  /** The fake's operation names for a prompt and a payout. */
  collect: string;
  disburse: string;
  msisdn: string;
  currency: string;
  /** How a payout's query answers: the final status, or `unknown` (Daraja: it answers by callback). */
  payoutQuery: 'final' | 'by-callback';
};

const PROVIDERS: Entry[] = [
  {
    key: 'mpesa',
    start: () => startFakeDaraja({ callbackDelayMs: 20 }),
    env: (url) => ({
      MPESA_BASE_URL: url,
      MPESA_CONSUMER_KEY: 'fake-consumer-key',
      MPESA_CONSUMER_SECRET: 'fake-consumer-secret',
      MPESA_SHORTCODE: SANDBOX_SHORTCODE,
      MPESA_PASSKEY: SANDBOX_PASSKEY,
      MPESA_B2C_SHORTCODE: '600000',
      MPESA_INITIATOR_NAME: 'testapi',
      MPESA_SECURITY_CREDENTIAL: 'fake-security-credential',
      MPESA_CALLBACK_TOKEN: 'c'.repeat(40),
      MPESA_REQUEST_TIMEOUT_MS: '2000',
    }),
    collect: 'stk-push',
    disburse: 'b2c-payment',
    msisdn: '254712345678',
    currency: 'KES',
    payoutQuery: 'by-callback',
  },
  {
    key: 'mtn',
    start: () => startFakeMtn({ callbackDelayMs: 20 }),
    env: (url) => ({ ...FAKE_MTN_ENV(url), MTN_REQUEST_TIMEOUT_MS: '2000' }),
    collect: 'request-to-pay',
    disburse: 'transfer',
    msisdn: '46733123499',
    currency: 'EUR',
    payoutQuery: 'final',
  },
  {
    key: 'airtel',
    start: () => startFakeAirtel({}),
    env: (url) => ({
      ...FAKE_AIRTEL_ENV(url),
      AIRTEL_CALLBACK_TOKEN: 'a'.repeat(40),
      AIRTEL_REQUEST_TIMEOUT_MS: '2000',
    }),
    collect: 'ussd-push',
    disburse: 'disbursement',
    msisdn: '254733123456',
    currency: 'KES',
    payoutQuery: 'final',
  },
];

/** Polls the query while the provider says pending (the fakes settle within a second). */
async function settled(
  adapter: PaymentAdapter,
  request: ProviderRequest,
  timeoutMs = 8000,
): Promise<QueryResult> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const answer = await adapter.query(request);
    if (answer.kind !== 'pending' || Date.now() > deadline) return answer;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe.each(PROVIDERS)('$key: the PaymentAdapter contract', (entry) => {
  let fake: Fake;
  let adapter: PaymentAdapter;
  const provider = PAYMENT_PROVIDERS.find((p) => p.key === entry.key)!;

  beforeAll(async () => {
    fake = await entry.start();
    // Callbacks go nowhere (nothing listens on port 9): the contract is the adapter's send and query.
    const config = loadConfig({ PUBLIC_BASE_URL: 'http://127.0.0.1:9', ...entry.env(fake.url) });
    const settings = config[entry.key];
    expect(settings, `${entry.key} configured from its variables`).toBeDefined();
    adapter = provider.createAdapter(settings as never);
  });
  afterAll(() => fake?.close());

  const request = (operation: ProviderRequest['operation'], amount = '100'): ProviderRequest => ({
    id: `contract${randomUUID().replaceAll('-', '').slice(0, 16)}`,
    transactionId: `tx${randomUUID().replaceAll('-', '').slice(0, 16)}`,
    operation,
    amount: money(amount, entry.currency),
    msisdn: entry.msisdn,
    providerIds: {},
    attempts: 0,
    createdAt: new Date(),
  });
  const queue = (operation: string, scenario: string) => fake.queue(operation as never, scenario as never);
  const processed = (operation: string) => fake.processed(operation as never);

  it('names itself by its key and serves its network', () => {
    expect(adapter.name).toBe(entry.key);
    expect(provider.network).toMatch(/^(MPESA|MTN_MOMO|AIRTEL_MONEY)$/);
    expect(adapter.reconcileAfterMs).toBeGreaterThan(0);
  });

  it('a collection is accepted with one prompt and its query settles SUCCESS', async () => {
    const before = processed(entry.collect);
    const ask = request('COLLECT');
    const sent = await adapter.send(ask);
    expect(sent.kind).toBe('accepted');
    if (sent.kind !== 'accepted') return;
    const answer = await settled(adapter, { ...ask, providerIds: sent.providerIds });
    expect(answer).toMatchObject({ kind: 'final', status: 'SUCCESS' });
    expect(processed(entry.collect) - before).toBe(1);
  });

  it.each([
    ['insufficient', 'FAILED'],
    ['cancelled', 'CANCELLED'],
  ] as const)('a collection that meets %s settles %s', async (scenario, status) => {
    queue(entry.collect, scenario);
    const ask = request('COLLECT');
    const sent = await adapter.send(ask);
    expect(sent.kind).toBe('accepted');
    if (sent.kind !== 'accepted') return;
    expect(await settled(adapter, { ...ask, providerIds: sent.providerIds })).toMatchObject({
      kind: 'final',
      status,
    });
  });

  it('an HTTP 500 after the request left is ambiguous, never a refusal', async () => {
    queue(entry.collect, 'http-500');
    expect((await adapter.send(request('COLLECT'))).kind).toBe('ambiguous');
  });

  it('a request the provider never received is never final nor pending', async () => {
    const answer = await adapter.query(request('COLLECT'));
    expect(['not-found', 'unknown']).toContain(answer.kind);
  });

  it('a payout is accepted once; the same request sent again pays nothing more', async () => {
    const before = processed(entry.disburse);
    const ask = request('DISBURSE');
    const sent = await adapter.send(ask);
    expect(sent.kind).toBe('accepted');
    if (sent.kind !== 'accepted') return;
    const again = await adapter.send({ ...ask, attempts: 1 });
    expect(['accepted', 'ambiguous']).toContain(again.kind);
    expect(processed(entry.disburse) - before).toBe(1);
    const answer = await settled(adapter, { ...ask, providerIds: sent.providerIds });
    if (entry.payoutQuery === 'final') expect(answer).toMatchObject({ kind: 'final', status: 'SUCCESS' });
    else expect(answer.kind).toBe('unknown');
  });
});
