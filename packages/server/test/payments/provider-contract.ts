import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CallOutcome, PaymentStatus } from '../../src/services/payments/providers/outcome.ts';

/** Failure modes every provider's fake can play, named the same for M-Pesa, MTN and Airtel. */
export type ContractScenario =
  | 'success'
  | 'cancelled'
  | 'insufficient'
  | 'unreachable'
  | 'no-callback'
  | 'duplicate-callback'
  | 'late-callback'
  | 'contradicting-callback'
  | 'server-error'
  | 'slow'
  | 'reset';

type Kind = CallOutcome<unknown>['kind'] | 'duplicate';

/**
 * One provider's adapter wired to its fake, seen through provider-neutral operations. A harness
 * talks HTTP only: the adapter calls the fake, the fake calls back a loopback receiver.
 */
export type ProviderHarness = {
  /** Starts a collection that plays `scenario`; `reference` is what a status query needs. */
  collect(scenario: ContractScenario): Promise<{ kind: Kind; reference: string | null }>;
  /** The provider's answer to a status query: a status, or null when the query itself failed. */
  queryCollection(reference: string): Promise<PaymentStatus | null>;
  /** Waits for `count` callbacks about the collection and returns each parsed status. */
  collectionCallbacks(reference: string, count: number, timeoutMs?: number): Promise<PaymentStatus[]>;
  /** Pays out with our own `reference` (reused on a retry). */
  disburse(reference: string, scenario: ContractScenario): Promise<{ kind: Kind }>;
  disbursementCallbacks(reference: string, count: number, timeoutMs?: number): Promise<PaymentStatus[]>;
  /** The status the provider's query reports for a payout (M-Pesa: Transaction Status's Result). */
  queryDisbursement(reference: string): Promise<PaymentStatus | null>;
  /** What the fake received: prompts sent to phones, payouts made, token requests. */
  prompts(): number;
  payouts(): number;
  tokenRequests(): number;
  /** Makes the current token stop working before its stated expiry. */
  expireTokenEarly(): void;
  /** Time after which a late callback has been sent. */
  lateCallbackMs: number;
  close(): Promise<void>;
};

const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls the query until it reports something other than PENDING (or gives up). */
async function finalStatus(query: () => Promise<PaymentStatus | null>, timeoutMs = 3000) {
  const deadline = Date.now() + timeoutMs;
  let status = await query();
  while ((status === 'PENDING' || status === null) && Date.now() < deadline) {
    await settle(50);
    status = await query();
  }
  return status;
}

/** The cases every adapter must pass against its fake. */
export function providerContract(name: string, start: () => Promise<ProviderHarness>) {
  describe(`${name}: provider contract`, () => {
    let h: ProviderHarness;
    beforeEach(async () => {
      h = await start();
    });
    afterEach(async () => {
      await h.close();
    });

    it('a collection is accepted, the callback and the query agree on SUCCESS, one prompt', async () => {
      const { kind, reference } = await h.collect('success');
      expect(kind).toBe('accepted');
      expect(await h.collectionCallbacks(reference!, 1)).toEqual(['SUCCESS']);
      expect(await finalStatus(() => h.queryCollection(reference!))).toBe('SUCCESS');
      expect(h.prompts()).toBe(1);
    });

    it.each([
      ['cancelled', 'CANCELLED'],
      ['insufficient', 'FAILED'],
      ['unreachable', 'FAILED'],
    ] as const)('a %s collection ends %s by callback and by query', async (scenario, status) => {
      const { reference } = await h.collect(scenario);
      expect(await h.collectionCallbacks(reference!, 1)).toEqual([status]);
      expect(await finalStatus(() => h.queryCollection(reference!))).toBe(status);
    });

    it('no callback: the query still tells the outcome', async () => {
      const { reference } = await h.collect('no-callback');
      expect(await finalStatus(() => h.queryCollection(reference!))).toBe('SUCCESS');
      await expect(h.collectionCallbacks(reference!, 1, 300)).rejects.toThrow();
    });

    it('a duplicated callback arrives twice with the same outcome, for one prompt', async () => {
      const { reference } = await h.collect('duplicate-callback');
      expect(await h.collectionCallbacks(reference!, 2)).toEqual(['SUCCESS', 'SUCCESS']);
      expect(h.prompts()).toBe(1);
    });

    it('a late callback: the query settles first, the callback follows with the same outcome', async () => {
      const { reference } = await h.collect('late-callback');
      expect(await finalStatus(() => h.queryCollection(reference!))).toBe('SUCCESS');
      expect(await h.collectionCallbacks(reference!, 1, h.lateCallbackMs + 3000)).toEqual(['SUCCESS']);
    });

    it('a callback that contradicts the query: the query does not say SUCCESS', async () => {
      const { reference } = await h.collect('contradicting-callback');
      expect(await h.collectionCallbacks(reference!, 1)).toEqual(['SUCCESS']);
      expect(await finalStatus(() => h.queryCollection(reference!))).not.toBe('SUCCESS');
    });

    it('an HTTP 500 is ambiguous, not a refusal', async () => {
      expect((await h.collect('server-error')).kind).toBe('ambiguous');
    });

    it('a slow answer past the client timeout is ambiguous, though the prompt went out', async () => {
      expect((await h.collect('slow')).kind).toBe('ambiguous');
      expect(h.prompts()).toBe(1);
    });

    it('a connection reset is ambiguous', async () => {
      expect((await h.collect('reset')).kind).toBe('ambiguous');
    });

    it('a payout is accepted, its callback and query say SUCCESS; a retry with the same reference pays nothing', async () => {
      const reference = `contract-${Date.now()}`;
      expect((await h.disburse(reference, 'success')).kind).toBe('accepted');
      expect(await h.disbursementCallbacks(reference, 1)).toEqual(['SUCCESS']);
      expect(await h.queryDisbursement(reference)).toBe('SUCCESS');
      expect((await h.disburse(reference, 'success')).kind).toBe('duplicate');
      expect(h.payouts()).toBe(1);
    });

    it('a payout whose answer times out is ambiguous; the retry with the same reference pays nothing', async () => {
      const reference = `contract-slow-${Date.now()}`;
      expect((await h.disburse(reference, 'slow')).kind).toBe('ambiguous');
      expect((await h.disburse(reference, 'success')).kind).toBe('duplicate');
      expect(h.payouts()).toBe(1);
    });

    it('a failed payout reports FAILED by callback and by query', async () => {
      const reference = `contract-fail-${Date.now()}`;
      await h.disburse(reference, 'insufficient');
      expect(await h.disbursementCallbacks(reference, 1)).toEqual(['FAILED']);
      expect(await h.queryDisbursement(reference)).toBe('FAILED');
    });

    it('one token serves many calls; a token that expires early is replaced once', async () => {
      await Promise.all([h.collect('success'), h.collect('success'), h.collect('success')]);
      expect(h.tokenRequests()).toBe(1);
      h.expireTokenEarly();
      expect((await h.collect('success')).kind).toBe('accepted');
      expect(h.tokenRequests()).toBe(2);
    });
  });
}
