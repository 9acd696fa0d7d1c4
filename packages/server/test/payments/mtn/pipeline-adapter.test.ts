import { randomBytes } from 'node:crypto';
import type { FakeMtnOptions } from '@partner-api/fakes';
import { describe, expect, it } from 'vitest';
import { money } from '../../../src/lib/money.ts';
import type { ProviderRequest } from '../../../src/services/payments/pipeline/adapter.ts';
import { createMtnPaymentAdapter, MTN_IDS } from '../../../src/services/payments/providers/mtn/adapter.ts';
import { type MtnConfig, mtnReferenceId } from '../../../src/services/payments/providers/mtn/settings.ts';
import { mtnPerTest } from './harness.ts';

const start = mtnPerTest();
async function setup(fakeOptions: FakeMtnOptions = {}, overrides: Partial<MtnConfig> = {}) {
  const s = await start(fakeOptions, { reconcileAfterMs: 1234, ...overrides });
  return { ...s, mtn: createMtnPaymentAdapter(s.config, { mtn: s.adapter }) };
}
const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));

function request(operation: 'COLLECT' | 'DISBURSE', amount: string, more: Partial<ProviderRequest> = {}) {
  return {
    id: `cm${randomBytes(12).toString('hex').slice(0, 23)}`,
    transactionId: 'cm9xk2tqd0000abcdefghijkl',
    operation,
    amount: money(amount, 'EUR'),
    msisdn: '+46733123499',
    providerIds: {},
    attempts: 0,
    createdAt: new Date(),
    ...more,
  } satisfies ProviderRequest;
}

describe('MTN as a pipeline adapter', () => {
  it('a collection: the reference from our id, both ids kept, pending then SUCCESS with the receipt', async () => {
    const s = await setup({ callbackDelayMs: 150 });
    expect(s.mtn).toMatchObject({ name: 'mtn', reconcileAfterMs: 1234, currency: 'EUR' });
    // The sandbox serves no one country; a country's environment names it (settings.ts).
    expect(s.mtn.country).toBeUndefined();
    expect(createMtnPaymentAdapter({ ...s.config, country: 'UG' }).country).toBe('UG');
    const r = request('COLLECT', '100.50');
    const sent = await s.mtn.send(r);
    expect(sent).toMatchObject({
      kind: 'accepted',
      providerIds: { [MTN_IDS.referenceId]: mtnReferenceId(r.id), [MTN_IDS.externalId]: r.id },
    });
    const rtp = s.fake.requests.find((q) => q.operation === 'request-to-pay');
    expect(rtp?.headers['x-reference-id']).toBe(mtnReferenceId(r.id));
    expect(rtp?.body).toMatchObject({ amount: '100.5', externalId: r.id, payer: { partyId: '46733123499' } });
    expect(await s.mtn.query(r)).toMatchObject({ kind: 'pending' });
    await s.fake.waitForCallbacks(1);
    expect(await s.mtn.query(r)).toMatchObject({
      kind: 'final',
      status: 'SUCCESS',
      receipt: expect.stringMatching(/^\d+$/),
    });
  });

  it('a retry of an accepted request reuses the reference: 409, accepted, one prompt', async () => {
    const s = await setup();
    const r = request('COLLECT', '100');
    const first = await s.mtn.send(r);
    const again = await s.mtn.send(r);
    expect(again).toMatchObject({
      kind: 'accepted',
      providerIds: first.kind === 'accepted' ? first.providerIds : {},
    });
    expect(again.exchanges.at(-1)?.status).toBe(409);
    expect(s.fake.processed('request-to-pay')).toBe(1);
  });

  it('refuses before sending: another currency, a number MTN cannot take, nothing to pay', async () => {
    const s = await setup();
    for (const r of [
      request('COLLECT', '100', { amount: money('100', 'UGX') }),
      request('DISBURSE', '100', { msisdn: 'abc' }),
      request('COLLECT', '0'),
    ]) {
      const sent = await s.mtn.send(r);
      expect(sent).toMatchObject({ kind: 'rejected', exchanges: [] });
      expect(sent.kind === 'rejected' && sent.reason).toMatch(/^refused before sending: /);
    }
    expect(s.fake.requests).toEqual([]);
  });

  it('a 500 is ambiguous; the query says not-found (nothing done), and the resend is accepted', async () => {
    const s = await setup();
    s.fake.queue('request-to-pay', 'http-500');
    const r = request('COLLECT', '100');
    expect((await s.mtn.send(r)).kind).toBe('ambiguous');
    expect((await s.mtn.query(r)).kind).toBe('not-found');
    expect((await s.mtn.send(r)).kind).toBe('accepted');
    expect(s.fake.processed('request-to-pay')).toBe(1);
  });

  it('a payout whose answer timed out: the query finds it, a resend is a 409, one payout', async () => {
    const s = await setup();
    s.fake.queue('transfer', 'slow');
    const r = request('DISBURSE', '250');
    expect((await s.mtn.send(r)).kind).toBe('ambiguous');
    expect((await s.mtn.query(r)).kind).toMatch(/^(pending|final)$/);
    expect((await s.mtn.send(r)).kind).toBe('accepted');
    expect(s.fake.processed('transfer')).toBe(1);
    expect(s.fake.requests.filter((q) => q.operation === 'transfer').map((q) => q.status)).toEqual([
      null,
      409,
    ]);
  });

  it('payouts and collections end FAILED or CANCELLED with MTN reason; PENDING stays pending', async () => {
    const s = await setup({ callbackDelayMs: 0 });
    const cases = [
      [
        'DISBURSE',
        'insufficient',
        { kind: 'final', status: 'FAILED', reason: expect.stringMatching(/^MTN NOT_ENOUGH_FUNDS/) },
      ],
      ['DISBURSE', 'failed:PAYEE_NOT_FOUND', { kind: 'final', status: 'FAILED' }],
      ['COLLECT', 'cancelled', { kind: 'final', status: 'CANCELLED' }],
      [
        'COLLECT',
        'unreachable',
        { kind: 'final', status: 'FAILED', reason: expect.stringMatching(/COULD_NOT_PERFORM/) },
      ],
      ['COLLECT', 'pending', { kind: 'pending' }],
    ] as const;
    const sent = [];
    for (const [operation, scenario] of cases) {
      s.fake.queue(operation === 'COLLECT' ? 'request-to-pay' : 'transfer', scenario);
      const r = request(operation, '100');
      expect((await s.mtn.send(r)).kind).toBe('accepted');
      sent.push(r);
    }
    await settle(30);
    for (const [i, [, , expected]] of cases.entries())
      expect(await s.mtn.query(sent[i]!)).toMatchObject(expected);
  });

  it('without a token nothing is sent (not-sent) and the query is unknown, never a guess', async () => {
    const s = await setup({}, { disbursement: { subscriptionKey: 'wrong', apiUser: 'u', apiKey: 'k' } });
    const r = request('DISBURSE', '100');
    expect(await s.mtn.send(r)).toMatchObject({ kind: 'not-sent' });
    expect(await s.mtn.query(r)).toMatchObject({ kind: 'unknown', reason: expect.stringMatching(/token/) });
    expect(s.fake.processed('transfer')).toBe(0);
  });
});
