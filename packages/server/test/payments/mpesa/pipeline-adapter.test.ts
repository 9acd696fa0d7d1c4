import { randomUUID } from 'node:crypto';
import type { FakeScenario } from '@partner-api/fakes';
import { describe, expect, it } from 'vitest';
import { money } from '../../../src/lib/money.ts';
import type { ProviderRequest } from '../../../src/services/payments/pipeline/adapter.ts';
import {
  createDarajaPaymentAdapter,
  darajaMsisdn,
} from '../../../src/services/payments/providers/mpesa/adapter.ts';
import {
  parseResultCallback,
  statusOfQueriedTransaction,
} from '../../../src/services/payments/providers/mpesa/callbacks.ts';
import { transactionStatusAnswer } from '../../../src/services/payments/providers/mpesa/routes.ts';
import type { ExchangeRecord } from '../../../src/services/payments/providers/outcome.ts';
import { mpesaPerTest, type MpesaSetup as Setup } from './harness.ts';

const start = mpesaPerTest();
async function setup() {
  const s = await start();
  return { ...s, daraja: createDarajaPaymentAdapter(s.adapter, { reconcileAfterMs: 1234 }) };
}

function request(operation: 'COLLECT' | 'DISBURSE', amount: string, more: Partial<ProviderRequest> = {}) {
  return {
    id: randomUUID(),
    transactionId: 'cm9xk2tqd0000abcdefghijkl',
    operation,
    amount: money(amount, 'KES'),
    msisdn: '+254708374149',
    providerIds: {},
    attempts: 0,
    createdAt: new Date(),
    ...more,
  } satisfies ProviderRequest;
}

const bodiesOf = (s: Setup, op: string) =>
  s.fake.requests.filter((r) => r.operation === op).map((r) => r.body as Record<string, unknown>);

describe('Daraja as a pipeline adapter: collections (STK Push)', () => {
  it('sends whole shillings, keeps Daraja ids, and its query confirms the callback', async () => {
    const s = await setup();
    expect(s.daraja).toMatchObject({ name: 'mpesa', reconcileAfterMs: 1234 });
    const r = request('COLLECT', '100.00');
    const sent = await s.daraja.send(r);
    expect(sent.kind).toBe('accepted');
    if (sent.kind !== 'accepted') return;
    expect(sent.providerIds.checkoutRequestId).toMatch(/^ws_CO_/);
    expect(sent.providerIds.merchantRequestId).toBeTruthy();
    expect(sent.exchanges.map((e) => e.operation)).toEqual(['token', 'stk-push']);
    const [body] = bodiesOf(s, 'stk-push');
    expect(body).toMatchObject({
      Amount: 100,
      PhoneNumber: '254708374149',
      AccountReference: 'abcdefghijkl',
    });
    await s.fake.waitForCallbacks(1);
    const answer = await s.daraja.query({ ...r, providerIds: sent.providerIds });
    expect(answer).toMatchObject({ kind: 'final', status: 'SUCCESS' });
  });

  it('refuses a collection with cents before sending anything', async () => {
    const s = await setup();
    const sent = await s.daraja.send(request('COLLECT', '100.50'));
    expect(sent).toMatchObject({ kind: 'rejected', exchanges: [] });
    expect(sent.kind === 'rejected' && sent.reason).toMatch(/whole shillings/);
    const zero = await s.daraja.send(request('COLLECT', '0.00'));
    expect(zero.kind).toBe('rejected');
    const foreign = await s.daraja.send(request('COLLECT', '100.00', { msisdn: '+256772123456' }));
    expect(foreign.kind).toBe('rejected');
    expect(s.fake.requests).toEqual([]);
  });

  it('maps the query: cancelled, unreachable, still pending', async () => {
    const s = await setup();
    const cases = [
      ['1032.00', { kind: 'final', status: 'CANCELLED' }],
      ['1037.00', { kind: 'final', status: 'FAILED', reason: expect.stringMatching(/^M-Pesa 1037: /) }],
      ['6005.00', { kind: 'pending' }],
    ] as const;
    for (const [amount, expected] of cases) {
      const r = request('COLLECT', amount);
      const sent = await s.daraja.send(r);
      if (sent.kind !== 'accepted') throw new Error(sent.kind);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(await s.daraja.query({ ...r, providerIds: sent.providerIds }), amount).toMatchObject(expected);
    }
  });

  it('a 500 after sending is ambiguous; a query without a CheckoutRequestID is unknown and asks nothing', async () => {
    const s = await setup();
    const r = request('COLLECT', '5000.00');
    const sent = await s.daraja.send(r);
    expect(sent.kind).toBe('ambiguous');
    const before = s.fake.requests.length;
    expect(await s.daraja.query(r)).toMatchObject({ kind: 'unknown', exchanges: [] });
    expect(s.fake.requests.length).toBe(before);
  });

  it('not-sent when no token can be had', async () => {
    const s = await setup();
    s.fake.queue('token', 'http-500');
    const sent = await s.daraja.send(request('COLLECT', '100.00'));
    expect(sent.kind).toBe('not-sent');
    expect(s.fake.processed('stk-push')).toBe(0);
  });
});

describe('Daraja as a pipeline adapter: payouts (B2C)', () => {
  it('uses the request id as OriginatorConversationID; a retry Daraja already has is accepted, paid once', async () => {
    const s = await setup();
    const r = request('DISBURSE', '500.00');
    const first = await s.daraja.send(r);
    expect(first).toMatchObject({
      kind: 'accepted',
      providerIds: { originatorConversationId: r.id, conversationId: expect.stringMatching(/^AG_/) },
    });
    const again = await s.daraja.send({ ...r, attempts: 1 });
    expect(again).toMatchObject({ kind: 'accepted', providerIds: { originatorConversationId: r.id } });
    expect(s.fake.processed('b2c-payment')).toBe(1);
    expect(bodiesOf(s, 'b2c-payment')[0]).toMatchObject({
      OriginatorConversationID: r.id,
      Amount: 500,
      PartyB: '254708374149',
      Occassion: r.transactionId,
    });
  });

  it('pays the whole shillings of a payout with cents and records the unpaid remainder', async () => {
    const s = await setup();
    const sent = await s.daraja.send(request('DISBURSE', '1000.75'));
    expect(sent).toMatchObject({
      kind: 'accepted',
      providerIds: { paidAmount: '1000.00', unpaidRemainder: '0.75' },
    });
    expect(bodiesOf(s, 'b2c-payment')[0]).toMatchObject({ Amount: 1000 });
    const none = await s.daraja.send(request('DISBURSE', '0.99'));
    expect(none).toMatchObject({ kind: 'rejected', exchanges: [] });
    expect(s.fake.processed('b2c-payment')).toBe(1);
  });

  it('its query asks Transaction Status by our id and answers unknown; the answer comes by callback', async () => {
    const s = await setup();
    const r = request('DISBURSE', '500.00');
    await s.daraja.send(r);
    await s.fake.waitForCallbacks(1);
    const answer = await s.daraja.query(r);
    expect(answer.kind).toBe('unknown');
    expect(bodiesOf(s, 'transaction-status')[0]).toMatchObject({ OriginalConversationID: r.id });
    const [result] = await s.receiver.waitFor((x) => x.path.endsWith('/status-result'));
    const parsed = parseResultCallback(result!.body);
    if (!parsed.ok) throw new Error(parsed.error);
    expect(parsed.value.parameters.OriginatorConversationID).toBe(r.id);
    expect(statusOfQueriedTransaction(parsed.value)).toBe('SUCCESS');
  });
});

describe('Transaction Status about a payout, against the fake over HTTP', () => {
  const exchange: ExchangeRecord = {
    provider: 'MPESA',
    operation: 'callback:status-result',
    method: 'POST',
    path: '/v1/payments/callbacks/daraja/[token]/status-result',
    requestBody: null,
    status: 200,
    responseBody: null,
    startedAt: new Date(),
    latencyMs: 0,
    error: null,
  };
  /** Sends a payout (the fake's scenario first), then asks Transaction Status: both answers, read. */
  async function payoutThenStatus(scenario: FakeScenario | null, status?: FakeScenario) {
    const s = await setup();
    const r = request('DISBURSE', '500.00');
    if (scenario) s.fake.queue('b2c-payment', scenario);
    if (status) s.fake.queue('transaction-status', status);
    expect((await s.daraja.send(r)).kind).toBe('accepted');
    const read = (body: unknown) => {
      const parsed = parseResultCallback(body);
      if (!parsed.ok) throw new Error(parsed.error);
      return parsed.value;
    };
    const [b2c] = await s.receiver.waitFor((x) => x.path.endsWith('/b2c-result'));
    expect((await s.daraja.query(r)).kind).toBe('unknown');
    const [answer] = await s.receiver.waitFor((x) => x.path.endsWith('/status-result'));
    const result = read(answer!.body);
    return { b2c: read(b2c!.body), result, answer: transactionStatusAnswer(result, exchange) };
  }

  it.each([
    ['insufficient', '1', 'The balance is insufficient for the transaction.'],
    ['below-minimum', '2', 'Declined due to limit rule: less than the minimum transaction amount.'],
    ['initiator-invalid', '2001', 'The initiator information is invalid.'],
    ['string-code', 'SFC_IC0003', 'The operator does not exist.'],
  ] as const)(
    'a B2C Result %s (%s), then ResultCode 0 with TransactionStatus "Failed": FAILED',
    async (scenario, code, text) => {
      const { b2c, result, answer } = await payoutThenStatus(scenario);
      expect(b2c).toMatchObject({ status: 'FAILED', code, reason: `M-Pesa ${code}: ${text}` });
      expect(result).toMatchObject({
        status: 'SUCCESS',
        code: '0',
        parameters: { TransactionStatus: 'Failed' },
      });
      expect(statusOfQueriedTransaction(result)).toBe('FAILED');
      expect(answer).toEqual({
        kind: 'final',
        status: 'FAILED',
        reason: 'M-Pesa Transaction Status: Failed',
        evidence: { amount: '500' },
        exchanges: [exchange],
      });
    },
  );

  it('Completed is SUCCESS with the receipt; a word we do not read is unknown, never FAILED', async () => {
    const paid = await payoutThenStatus(null);
    expect(paid.answer).toMatchObject({ kind: 'final', status: 'SUCCESS', receipt: paid.b2c.transactionId });
    const reversed = await payoutThenStatus('initiator-invalid', 'unread-status');
    expect(reversed.result).toMatchObject({ code: '0', parameters: { TransactionStatus: 'Reversed' } });
    expect(reversed.answer).toEqual({
      kind: 'unknown',
      reason:
        'M-Pesa Transaction Status: TransactionStatus "Reversed", which we do not read as paid or failed',
      exchanges: [exchange],
    });
  });
});

describe('darajaMsisdn', () => {
  it('reads +254, 254 and local 07/01 forms; refuses the rest', () => {
    expect(darajaMsisdn('+254708374149')).toBe('254708374149');
    expect(darajaMsisdn('0712345678')).toBe('254712345678');
    expect(darajaMsisdn('0112345678')).toBe('254112345678');
    expect(darajaMsisdn('+256772123456')).toBeUndefined();
    expect(darajaMsisdn('25470837414')).toBeUndefined();
  });
});
