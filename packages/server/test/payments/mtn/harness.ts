import { randomBytes, randomUUID } from 'node:crypto';
import {
  FAKE_MTN_CREDENTIALS,
  type FakeMtnOptions,
  type FakeMtnScenario,
  startFakeMtn,
} from '@partner-api/fakes';
import { afterEach } from 'vitest';
import { parseMtnStatus } from '../../../src/services/payments/providers/mtn/callbacks.ts';
import {
  createMtnAdapter,
  type MtnPaymentInput,
} from '../../../src/services/payments/providers/mtn/client.ts';
import { type MtnConfig, mtnReferenceId } from '../../../src/services/payments/providers/mtn/settings.ts';
import type { PaymentStatus } from '../../../src/services/payments/providers/outcome.ts';
import { startCallbackReceiver } from '../callback-receiver.ts';
import type { ContractScenario, ProviderHarness } from '../provider-contract.ts';

/** The adapter's client timeout in these tests (roomy for a loaded machine), and the fake's slow answer. */
export const REQUEST_TIMEOUT_MS = 2000;
export const SLOW_RESPONSE_MS = 5000;

export function mtnTestConfig(
  fakeUrl: string,
  callbackBaseUrl: string,
  overrides: Partial<MtnConfig> = {},
): MtnConfig {
  return {
    baseUrl: fakeUrl,
    targetEnvironment: 'sandbox',
    currency: 'EUR',
    countryCode: '46',
    collection: { ...FAKE_MTN_CREDENTIALS.collection },
    disbursement: { ...FAKE_MTN_CREDENTIALS.disbursement },
    callbackBaseUrl,
    callbackToken: randomBytes(24).toString('base64url'),
    reconcileAfterMs: 1000,
    timeouts: { tokenMs: REQUEST_TIMEOUT_MS, requestMs: REQUEST_TIMEOUT_MS },
    ...overrides,
  };
}

/** The fake, a loopback receiver for its callbacks, and an adapter pointed at both. */
export async function startMtn(fakeOptions: FakeMtnOptions = {}, overrides: Partial<MtnConfig> = {}) {
  const receiver = await startCallbackReceiver(null);
  const fake = await startFakeMtn({
    callbackDelayMs: 30,
    lateCallbackMs: 500,
    delayedMs: 300,
    slowResponseMs: SLOW_RESPONSE_MS,
    ...fakeOptions,
  });
  const config = mtnTestConfig(fake.url, `${receiver.url}/v1/payments/callbacks/mtn`, overrides);
  const adapter = createMtnAdapter(config);
  const close = async () => {
    await fake.close();
    await receiver.close();
  };
  return { fake, receiver, config, adapter, close };
}

export type MtnSetup = Awaited<ReturnType<typeof startMtn>>;

/** A `startMtn` for a test file: whatever a test started is closed after it. */
export function mtnPerTest() {
  let open: MtnSetup[] = [];
  afterEach(async () => {
    await Promise.all(open.map((s) => s.close()));
    open = [];
  });
  return async (fakeOptions: FakeMtnOptions = {}, overrides: Partial<MtnConfig> = {}) => {
    const s = await startMtn(fakeOptions, overrides);
    open.push(s);
    return s;
  };
}

/** A request-to-pay or transfer input with a fresh reference (an ordinary, non-magic number). */
export function paymentInput(more: Partial<MtnPaymentInput> = {}): MtnPaymentInput {
  return {
    referenceId: randomUUID(),
    externalId: `cm${randomBytes(12).toString('hex').slice(0, 23)}`,
    msisdn: '46733123499',
    amount: '100',
    payerMessage: 'Investment',
    payeeNote: 'Investment',
    ...more,
  };
}

const SCENARIOS: Record<ContractScenario, FakeMtnScenario> = {
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

/** MTN seen through the provider contract (test/payments/provider-contract.ts). */
export async function startMtnHarness(): Promise<ProviderHarness> {
  const { fake, receiver, adapter, close } = await startMtn();

  async function callbackStatuses(referenceId: string, count: number, timeoutMs?: number) {
    const hits = await receiver.waitFor((r) => r.path.endsWith(`/${referenceId}`), count, timeoutMs);
    return hits.map((r): PaymentStatus => {
      const parsed = parseMtnStatus(r.body);
      if (!parsed.ok) throw new Error(parsed.error);
      return parsed.value.status;
    });
  }
  async function statusOf(outcome: Awaited<ReturnType<typeof adapter.requestToPayStatus>>) {
    return outcome.kind === 'accepted' ? outcome.value.status : null;
  }

  return {
    async collect(scenario) {
      fake.queue('request-to-pay', SCENARIOS[scenario]);
      const input = paymentInput();
      const outcome = await adapter.requestToPay(input);
      return { kind: outcome.kind, reference: outcome.kind === 'accepted' ? input.referenceId : null };
    },
    queryCollection: async (reference) => statusOf(await adapter.requestToPayStatus(reference)),
    collectionCallbacks: callbackStatuses,
    async disburse(reference, scenario) {
      fake.queue('transfer', SCENARIOS[scenario]);
      const outcome = await adapter.transfer(
        paymentInput({ referenceId: mtnReferenceId(reference), externalId: reference, amount: '500' }),
      );
      return { kind: outcome.kind };
    },
    disbursementCallbacks: (reference, count, timeoutMs) =>
      callbackStatuses(mtnReferenceId(reference), count, timeoutMs),
    queryDisbursement: async (reference) => statusOf(await adapter.transferStatus(mtnReferenceId(reference))),
    prompts: () => fake.processed('request-to-pay'),
    payouts: () => fake.processed('transfer'),
    tokenRequests: () => fake.requests.filter((r) => r.operation === 'token').length,
    expireTokenEarly: () => fake.expireTokens(),
    lateCallbackMs: 500,
    close,
  };
}
