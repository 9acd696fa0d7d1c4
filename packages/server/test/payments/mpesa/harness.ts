import { randomBytes } from 'node:crypto';
import {
  type FakeDarajaOptions,
  type FakeScenario,
  SANDBOX_PASSKEY,
  SANDBOX_SHORTCODE,
  startFakeDaraja,
} from '@partner-api/fakes';
import { afterEach } from 'vitest';
import {
  CALLBACK_ACK,
  parseResultCallback,
  parseStkCallback,
  statusOfQueriedTransaction,
} from '../../../src/services/payments/providers/mpesa/callbacks.ts';
import { createMpesaAdapter } from '../../../src/services/payments/providers/mpesa/client.ts';
import type { MpesaConfig } from '../../../src/services/payments/providers/mpesa/settings.ts';
import type { PaymentStatus } from '../../../src/services/payments/providers/outcome.ts';
import { type Received, startCallbackReceiver } from '../callback-receiver.ts';
import type { ContractScenario, ProviderHarness } from '../provider-contract.ts';

/** The adapter's client timeout in these tests (roomy: a loaded CI machine took over 400 ms to answer a
 * healthy call), and the fake's slow answer (well past it). */
export const REQUEST_TIMEOUT_MS = 2000;
export const SLOW_RESPONSE_MS = 5000;

export function testConfig(
  fakeUrl: string,
  callbackBaseUrl: string,
  overrides: Partial<MpesaConfig> = {},
): MpesaConfig {
  return {
    baseUrl: fakeUrl,
    consumerKey: 'fake-consumer-key',
    consumerSecret: 'fake-consumer-secret',
    shortcode: SANDBOX_SHORTCODE,
    passkey: SANDBOX_PASSKEY,
    b2cShortcode: '600992',
    initiatorName: 'testapi',
    securityCredential: 'fake-security-credential',
    callbackBaseUrl,
    callbackToken: randomBytes(16).toString('hex'),
    timeouts: { tokenMs: REQUEST_TIMEOUT_MS, requestMs: REQUEST_TIMEOUT_MS },
    ...overrides,
  };
}

/** The fake, a loopback receiver for its callbacks, and an adapter pointed at both. */
export async function startMpesa(fakeOptions: FakeDarajaOptions = {}, overrides: Partial<MpesaConfig> = {}) {
  const receiver = await startCallbackReceiver(CALLBACK_ACK);
  const fake = await startFakeDaraja({
    callbackDelayMs: 30,
    lateCallbackMs: 500,
    slowResponseMs: SLOW_RESPONSE_MS,
    ...fakeOptions,
  });
  const config = testConfig(fake.url, `${receiver.url}/v1/payments/callbacks/daraja`, overrides);
  const adapter = createMpesaAdapter(config, {});
  const close = async () => {
    await fake.close();
    await receiver.close();
  };
  return { fake, receiver, config, adapter, close };
}

export type MpesaSetup = Awaited<ReturnType<typeof startMpesa>>;

/** A `startMpesa` for a test file: whatever a test started is closed after it. */
export function mpesaPerTest() {
  let open: MpesaSetup[] = [];
  afterEach(async () => {
    await Promise.all(open.map((s) => s.close()));
    open = [];
  });
  return async (fakeOptions: FakeDarajaOptions = {}, overrides: Partial<MpesaConfig> = {}) => {
    const s = await startMpesa(fakeOptions, overrides);
    open.push(s);
    return s;
  };
}

const SCENARIOS: Record<ContractScenario, FakeScenario> = {
  success: 'success',
  cancelled: 'cancelled',
  insufficient: 'insufficient',
  unreachable: 'unreachable',
  'no-callback': 'no-callback',
  'duplicate-callback': 'duplicate-callback',
  'late-callback': 'late-callback',
  'contradicting-callback': 'contradicting-callback',
  'server-error': 'http-500',
  slow: 'slow',
  reset: 'reset',
};

const isKind = (kind: string) => (r: Received) => r.path.endsWith(`/${kind}`);

/** M-Pesa seen through the provider contract (test/payments/provider-contract.ts). */
export async function startMpesaHarness(): Promise<ProviderHarness> {
  const { fake, receiver, adapter, close } = await startMpesa();

  /** Waits for `count` callbacks of `kind` whose body mentions `needle`, and parses each to a status. */
  async function callbackStatuses(
    kind: string,
    needle: string,
    parse: (body: unknown) => { ok: true; value: { status: PaymentStatus } } | { ok: false; error: string },
    count: number,
    timeoutMs?: number,
  ) {
    const hits = await receiver.waitFor((r) => isKind(kind)(r) && r.raw.includes(needle), count, timeoutMs);
    return hits.map((r) => {
      const parsed = parse(r.body);
      if (!parsed.ok) throw new Error(parsed.error);
      return parsed.value.status;
    });
  }

  return {
    async collect(scenario) {
      fake.queue('stk-push', SCENARIOS[scenario]);
      const outcome = await adapter.stkPush({
        msisdn: '254708374149',
        amount: 100,
        accountReference: 'ORDER1',
        description: 'Shares',
      });
      return {
        kind: outcome.kind,
        reference: outcome.kind === 'accepted' ? outcome.value.checkoutRequestId : null,
      };
    },
    async queryCollection(reference) {
      const outcome = await adapter.stkQuery(reference);
      return outcome.kind === 'accepted' ? outcome.value.status : null;
    },
    collectionCallbacks: (reference, count, timeoutMs) =>
      callbackStatuses('stk', `"CheckoutRequestID":"${reference}"`, parseStkCallback, count, timeoutMs),
    async disburse(reference, scenario) {
      fake.queue('b2c-payment', SCENARIOS[scenario]);
      const outcome = await adapter.b2cPayment({
        originatorConversationId: reference,
        msisdn: '254708374149',
        amount: 500,
        remarks: 'Sale proceeds',
      });
      return { kind: outcome.kind };
    },
    disbursementCallbacks: (reference, count, timeoutMs) =>
      callbackStatuses(
        'b2c-result',
        `"OriginatorConversationID":"${reference}"`,
        parseResultCallback,
        count,
        timeoutMs,
      ),
    async queryDisbursement(reference): Promise<PaymentStatus | null> {
      const outcome = await adapter.transactionStatus({ originatorConversationId: reference });
      if (outcome.kind !== 'accepted') return null;
      const own = outcome.value.originatorConversationId;
      const [answer] = await receiver.waitFor(
        (r) => isKind('status-result')(r) && r.raw.includes(`"OriginatorConversationID":"${own}"`),
      );
      const parsed = parseResultCallback(answer!.body);
      return (parsed.ok && statusOfQueriedTransaction(parsed.value)) || null;
    },
    prompts: () => fake.processed('stk-push'),
    payouts: () => fake.processed('b2c-payment'),
    tokenRequests: () => fake.requests.filter((r) => r.operation === 'token').length,
    expireTokenEarly: () => fake.expireTokens(),
    lateCallbackMs: 500,
    close,
  };
}
