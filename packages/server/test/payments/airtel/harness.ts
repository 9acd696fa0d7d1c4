import { randomBytes } from 'node:crypto';
import {
  FAKE_AIRTEL_CLIENT_ID,
  FAKE_AIRTEL_CLIENT_SECRET,
  FAKE_AIRTEL_PIN,
  type FakeAirtelOptions,
  type FakeAirtelScenario,
  startFakeAirtel,
} from '@partner-api/fakes';
import { afterEach } from 'vitest';
import {
  CALLBACK_ACK,
  parseAirtelCallback,
} from '../../../src/services/payments/providers/airtel/callbacks.ts';
import { createAirtelAdapter } from '../../../src/services/payments/providers/airtel/client.ts';
import { type AirtelConfig, callbackUrl } from '../../../src/services/payments/providers/airtel/settings.ts';
import type { PaymentStatus } from '../../../src/services/payments/providers/outcome.ts';
import { startCallbackReceiver } from '../callback-receiver.ts';
import type { ContractScenario, ProviderHarness } from '../provider-contract.ts';

/** The adapter's client timeout in these tests, and the fake's slow answer (well past it). */
export const REQUEST_TIMEOUT_MS = 2000;
export const SLOW_RESPONSE_MS = 5000;
/** A Kenyan Airtel number as Airtel takes it: without 254. */
export const LOCAL_MSISDN = '733123456';

export function testConfig(
  fakeUrl: string,
  callbackBaseUrl: string,
  overrides: Partial<AirtelConfig> = {},
): AirtelConfig {
  return {
    baseUrl: fakeUrl,
    clientId: FAKE_AIRTEL_CLIENT_ID,
    clientSecret: FAKE_AIRTEL_CLIENT_SECRET,
    country: 'KE',
    currency: 'KES',
    callingCode: '254',
    amountDecimals: 0,
    callbackBaseUrl,
    callbackToken: randomBytes(16).toString('hex'),
    disbursementPin: FAKE_AIRTEL_PIN,
    timeouts: { tokenMs: REQUEST_TIMEOUT_MS, requestMs: REQUEST_TIMEOUT_MS },
    ...overrides,
  };
}

/** The fake, a loopback receiver for its callbacks (registered as the portal URL), and an adapter. */
export async function startAirtel(
  fakeOptions: FakeAirtelOptions = {},
  overrides: Partial<AirtelConfig> = {},
) {
  const receiver = await startCallbackReceiver(CALLBACK_ACK);
  const fake = await startFakeAirtel({
    callbackDelayMs: 30,
    lateCallbackMs: 500,
    slowResponseMs: SLOW_RESPONSE_MS,
    tipMs: 400,
    ...fakeOptions,
  });
  const config = testConfig(fake.url, `${receiver.url}/v1/payments/callbacks/airtel`, overrides);
  fake.setCallbackUrl(callbackUrl(config));
  const adapter = createAirtelAdapter(config, {});
  const close = async () => {
    await fake.close();
    await receiver.close();
  };
  return { fake, receiver, config, adapter, close };
}

export type AirtelSetup = Awaited<ReturnType<typeof startAirtel>>;

/** A `startAirtel` for a test file: whatever a test started is closed after it. */
export function airtelPerTest() {
  let open: AirtelSetup[] = [];
  afterEach(async () => {
    await Promise.all(open.map((s) => s.close()));
    open = [];
  });
  return async (fakeOptions: FakeAirtelOptions = {}, overrides: Partial<AirtelConfig> = {}) => {
    const s = await startAirtel(fakeOptions, overrides);
    open.push(s);
    return s;
  };
}

const SCENARIOS: Record<ContractScenario, FakeAirtelScenario> = {
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

let counter = 0;
/** A fresh transaction id (ours: 4 to 64 characters). */
export const newId = (prefix = 'tx') => `${prefix}${Date.now().toString(36)}${(counter++).toString(36)}`;

/** Airtel seen through the provider contract (test/payments/provider-contract.ts). */
export async function startAirtelHarness(): Promise<ProviderHarness> {
  const { fake, receiver, adapter, close } = await startAirtel();

  async function callbackStatuses(reference: string, count: number, timeoutMs?: number) {
    const hits = await receiver.waitFor(
      (r) => (r.body as { transaction?: { id?: string } } | null)?.transaction?.id === reference,
      count,
      timeoutMs,
    );
    return hits.map((r) => {
      const parsed = parseAirtelCallback(r.raw);
      if (!parsed.ok) throw new Error(parsed.error);
      return parsed.value.status;
    });
  }
  const statusOf = async (outcome: Awaited<ReturnType<typeof adapter.collectionEnquiry>>) =>
    outcome.kind === 'accepted' && outcome.value.found ? outcome.value.status : null;

  return {
    async collect(scenario) {
      fake.queue('ussd-push', SCENARIOS[scenario]);
      const transactionId = newId('col');
      const outcome = await adapter.ussdPush({
        transactionId,
        msisdn: LOCAL_MSISDN,
        amount: 100,
        reference: 'ORDER1',
      });
      return { kind: outcome.kind, reference: outcome.kind === 'accepted' ? transactionId : null };
    },
    queryCollection: async (reference) => statusOf(await adapter.collectionEnquiry(reference)),
    collectionCallbacks: callbackStatuses,
    async disburse(reference, scenario) {
      fake.queue('disbursement', SCENARIOS[scenario]);
      const outcome = await adapter.disburse({
        transactionId: reference,
        msisdn: LOCAL_MSISDN,
        amount: 500,
        reference: 'Sale proceeds',
      });
      return { kind: outcome.kind };
    },
    disbursementCallbacks: callbackStatuses,
    queryDisbursement: async (reference): Promise<PaymentStatus | null> =>
      statusOf(await adapter.disbursementEnquiry(reference)),
    prompts: () => fake.processed('ussd-push'),
    payouts: () => fake.processed('disbursement'),
    tokenRequests: () => fake.requests.filter((r) => r.operation === 'token').length,
    expireTokenEarly: () => fake.expireTokens(),
    lateCallbackMs: 500,
    close,
  };
}
