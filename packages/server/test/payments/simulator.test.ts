import { describe, expect, it, vi } from 'vitest';
import { money } from '../../src/lib/money.ts';
import { signCallback, verifyCallbackSignature } from '../../src/services/payments/callback-signature.ts';
import { providerForMsisdn } from '../../src/services/payments/mobile-network.ts';
import type { TransactionRef } from '../../src/services/payments/provider.ts';
import { requestPayments } from '../../src/services/payments/provider.ts';
import { createSandboxSimulator, simulatedOutcome } from '../../src/services/payments/simulator.ts';

const silent = { info: () => {}, warn: () => {}, error: vi.fn() };
const ref = (amount: string, type: TransactionRef['type'] = 'INCOMING'): TransactionRef => ({
  id: `tx-${amount}`,
  type,
  amount,
  currency: 'KES',
  msisdn: '254712345678',
  provider: 'MPESA',
});

describe('sandbox magic amounts', () => {
  it.each([
    ['101.00', 'FAILED'],
    ['1001.00', 'FAILED'],
    ['2501.50', 'FAILED'],
    ['102.00', 'PENDING'],
    ['1002', 'PENDING'],
    ['1000.00', 'SUCCESS'],
    ['100.01', 'SUCCESS'],
    ['120.00', 'SUCCESS'],
    ['1010.00', 'SUCCESS'],
  ])('%s settles %s', (amount, status) => {
    expect(simulatedOutcome(money(amount, 'KES')).status).toBe(status);
  });

  it('a failure carries the insufficient-funds reason', () => {
    expect(simulatedOutcome(money('301.00', 'KES'))).toEqual({
      status: 'FAILED',
      reason: 'insufficient funds',
    });
  });
});

describe('provider of a number', () => {
  it.each([
    ['254712345678', 'MPESA'],
    ['254722000111', 'MPESA'],
    ['254790000000', 'MPESA'],
    ['254745000000', 'MPESA'],
    ['254110000000', 'MPESA'],
    ['0712345678', 'MPESA'],
    ['254733222444', 'AIRTEL_MONEY'],
    ['254750000000', 'AIRTEL_MONEY'],
    ['254780000000', 'AIRTEL_MONEY'],
    ['0733222444', 'AIRTEL_MONEY'],
    ['254770000000', 'MTN_MOMO'],
    ['256772000000', 'MTN_MOMO'],
    ['233240000000', 'MTN_MOMO'],
  ])('%s → %s', (msisdn, provider) => {
    expect(providerForMsisdn(msisdn)).toBe(provider);
  });
});

describe('callback signature', () => {
  it('is sha256=<hex HMAC-SHA256 of the raw body>, checked in constant time', () => {
    const body = '{"transactionId":"x","status":"SUCCESS"}';
    const header = signCallback('secret-one-secret', body);
    expect(header).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(verifyCallbackSignature('secret-one-secret', body, header)).toBe(true);
    expect(
      verifyCallbackSignature('secret-one-secret', body, header.toUpperCase().replace('SHA256', 'sha256')),
    ).toBe(true);
    expect(verifyCallbackSignature('secret-two-secret', body, header)).toBe(false);
    expect(verifyCallbackSignature('secret-one-secret', `${body}\n`, header)).toBe(false);
    expect(verifyCallbackSignature('secret-one-secret', body, undefined)).toBe(false);
    expect(verifyCallbackSignature('secret-one-secret', body, header.slice(0, -2))).toBe(false);
  });
});

describe('sandbox simulator', () => {
  it('settles after the delay through the delivery, with a signed-ready body; 02 never settles', async () => {
    const delivered: string[] = [];
    const simulator = createSandboxSimulator({
      settleMs: 20,
      log: silent,
      deliver: async (raw) => {
        delivered.push(raw);
        return 200;
      },
    });
    await simulator.collect(ref('1000.00'));
    await simulator.disburse(ref('301.00', 'OUTGOING'));
    await simulator.collect(ref('1002.00'));
    expect(simulator.pending()).toBe(2);
    expect(delivered).toHaveLength(0);
    await vi.waitFor(() => expect(delivered).toHaveLength(2));
    const bodies = delivered.map((raw) => JSON.parse(raw)).sort((a, b) => a.status.localeCompare(b.status));
    expect(bodies[0]).toEqual({
      transactionId: 'tx-301.00',
      status: 'FAILED',
      providerReference: expect.stringMatching(/^SIM[0-9A-F]{10}$/),
      reason: 'insufficient funds',
    });
    expect(bodies[1]).toMatchObject({ transactionId: 'tx-1000.00', status: 'SUCCESS' });
    await vi.waitFor(() => expect(simulator.pending()).toBe(0));
    simulator.stop();
  });

  it('repeats a refused delivery (429, 5xx, network error) with the same body', async () => {
    const answers = [429, 503, 200];
    const bodies: string[] = [];
    const simulator = createSandboxSimulator({
      settleMs: 5,
      log: silent,
      deliver: async (raw) => {
        bodies.push(raw);
        return answers.shift() ?? 200;
      },
    });
    await simulator.collect(ref('1000.00'));
    await vi.waitFor(() => expect(bodies).toHaveLength(3), { timeout: 3000 });
    expect(new Set(bodies).size).toBe(1);
    await vi.waitFor(() => expect(simulator.pending()).toBe(0));
    simulator.stop();
  });

  it('stop() clears pending timers: nothing is delivered afterwards', async () => {
    const deliver = vi.fn(async () => 200);
    const simulator = createSandboxSimulator({ settleMs: 30, log: silent, deliver });
    await simulator.collect(ref('1000.00'));
    simulator.stop();
    await simulator.collect(ref('2000.00'));
    expect(simulator.pending()).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(deliver).not.toHaveBeenCalled();
  });

  it('requestPayments routes collections and disbursements and logs a provider failure', async () => {
    const provider = {
      collect: vi.fn(async () => {}),
      disburse: vi.fn(async () => {
        throw new Error('provider down');
      }),
    };
    const log = { ...silent, error: vi.fn() };
    requestPayments(provider, [ref('100.00'), ref('50.00', 'OUTGOING')], log);
    expect(provider.collect).toHaveBeenCalledTimes(1);
    expect(provider.disburse).toHaveBeenCalledTimes(1);
    await vi.waitFor(() => expect(log.error).toHaveBeenCalledTimes(1));
    requestPayments(undefined, [ref('100.00')], log);
  });
});
