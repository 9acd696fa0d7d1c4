import { describe, expect, it } from 'vitest';
import type { MtnStatusBody } from '../../../src/services/payments/providers/mtn/callbacks.ts';
import { MTN_REASONS } from '../../../src/services/payments/providers/mtn/result-codes.ts';
import { mtnReferenceId } from '../../../src/services/payments/providers/mtn/settings.ts';
import type { CallOutcome } from '../../../src/services/payments/providers/outcome.ts';
import { mtnPerTest, paymentInput } from './harness.ts';

const start = mtnPerTest();
const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));
const answerOf = (outcome: CallOutcome<MtnStatusBody>) => {
  if (outcome.kind !== 'accepted') throw new Error(`${outcome.kind}`);
  return outcome.value;
};

describe('MTN adapter against the fake, over HTTP', () => {
  it('request-to-pay: exact headers and body, 202 empty, then PENDING, then SUCCESSFUL with a receipt', async () => {
    const s = await start({ callbackDelayMs: 150 });
    const input = paymentInput({ amount: '100.50' });
    const outcome = await s.adapter.requestToPay(input);
    expect(outcome).toMatchObject({ kind: 'accepted', value: { referenceId: input.referenceId } });
    expect(outcome.exchanges.map((e) => [e.operation, e.status])).toEqual([
      ['collection-token', 200],
      ['request-to-pay', 202],
    ]);
    const [token, rtp] = s.fake.requests;
    expect(token).toMatchObject({ path: '/collection/token/', method: 'POST', body: null });
    expect(rtp?.headers).toEqual({
      'x-reference-id': input.referenceId,
      'x-target-environment': 'sandbox',
      'x-callback-url': `${s.receiver.url}/v1/payments/callbacks/mtn/${s.config.callbackToken}/${input.referenceId}`,
    });
    expect(rtp?.body).toEqual({
      amount: '100.50',
      currency: 'EUR',
      externalId: input.externalId,
      payer: { partyIdType: 'MSISDN', partyId: '46733123499' },
      payerMessage: 'Investment',
      payeeNote: 'Investment',
    });
    // Neither the access token nor the callback token is in any record.
    const recorded = JSON.stringify(outcome.exchanges);
    expect(recorded).not.toContain(s.config.callbackToken);
    expect(recorded).toContain('[REDACTED]');
    expect(answerOf(await s.adapter.requestToPayStatus(input.referenceId))).toMatchObject({
      status: 'PENDING',
      mtnStatus: 'PENDING',
    });
    const [callback] = await s.receiver.waitFor((r) => r.path.endsWith(input.referenceId));
    expect(callback!.body).not.toHaveProperty('referenceId');
    const done = answerOf(await s.adapter.requestToPayStatus(input.referenceId));
    expect(done).toMatchObject({
      status: 'SUCCESS',
      amount: '100.5',
      currency: 'EUR',
      externalId: input.externalId,
      partyId: '46733123499',
      financialTransactionId: expect.stringMatching(/^\d+$/),
    });
    expect(s.fake.requests.filter((r) => r.operation === 'token')).toHaveLength(1);
  });

  it('a reused X-Reference-Id is 409 (duplicate): one prompt only', async () => {
    const s = await start();
    const input = paymentInput();
    expect((await s.adapter.requestToPay(input)).kind).toBe('accepted');
    const again = await s.adapter.requestToPay(input);
    expect(again.kind).toBe('duplicate');
    expect(again.exchanges.at(-1)).toMatchObject({
      status: 409,
      responseBody: { code: 'RESOURCE_ALREADY_EXIST' },
    });
    expect(s.fake.processed('request-to-pay')).toBe(1);
  });

  it('an unknown reference is a 404 RESOURCE_NOT_FOUND refusal of the status query', async () => {
    const s = await start();
    const outcome = await s.adapter.transferStatus(mtnReferenceId('never-sent'));
    expect(outcome).toMatchObject({ kind: 'rejected', code: 'RESOURCE_NOT_FOUND', httpStatus: 404 });
  });

  it('a 500 is ambiguous and did nothing (the status then says 404); a reset and a slow answer are ambiguous', async () => {
    const s = await start();
    s.fake.queue('request-to-pay', 'http-500');
    const input = paymentInput();
    expect(await s.adapter.requestToPay(input)).toMatchObject({ kind: 'ambiguous', reason: 'server-error' });
    expect((await s.adapter.requestToPayStatus(input.referenceId)).kind).toBe('rejected');
    s.fake.queue('transfer', 'reset');
    const reset = paymentInput();
    expect(await s.adapter.transfer(reset)).toMatchObject({ kind: 'ambiguous', reason: 'network' });
    // The reset transfer went through: its retry is a duplicate, not a second payout.
    expect((await s.adapter.transfer(reset)).kind).toBe('duplicate');
    expect(s.fake.processed('transfer')).toBe(1);
    s.fake.queue('request-to-pay', 'slow');
    expect(await s.adapter.requestToPay(paymentInput())).toMatchObject({
      kind: 'ambiguous',
      reason: 'timeout',
    });
  });

  it('a token per product: collection and disbursement each get their own, with their own key', async () => {
    const s = await start();
    await s.adapter.requestToPay(paymentInput());
    await s.adapter.transfer(paymentInput());
    await s.adapter.requestToPay(paymentInput());
    expect(s.fake.requests.filter((r) => r.operation === 'token').map((r) => r.path)).toEqual([
      '/collection/token/',
      '/disbursement/token/',
    ]);
  });

  it('a token refused early is replaced once; wrong credentials are not-sent', async () => {
    const s = await start();
    await s.adapter.requestToPay(paymentInput());
    s.fake.expireTokens();
    const outcome = await s.adapter.requestToPay(paymentInput());
    expect(outcome.kind).toBe('accepted');
    expect(outcome.exchanges.map((e) => [e.operation, e.status])).toEqual([
      ['request-to-pay', 401],
      ['collection-token', 200],
      ['request-to-pay', 202],
    ]);
    const wrong = await start({}, { collection: { subscriptionKey: 'nope', apiUser: 'u', apiKey: 'k' } });
    const refused = await wrong.adapter.requestToPay(paymentInput());
    expect(refused).toMatchObject({ kind: 'not-sent', detail: expect.stringMatching(/HTTP 401/) });
    expect(wrong.fake.processed('request-to-pay')).toBe(0);
  });

  it('a wrong currency is a 400 refusal; a wrong target environment a 500 (ambiguous)', async () => {
    const s = await start({}, { currency: 'UGX' });
    expect(await s.adapter.requestToPay(paymentInput())).toMatchObject({
      kind: 'rejected',
      code: 'INVALID_CURRENCY',
      httpStatus: 400,
    });
    const t = await start({}, { targetEnvironment: 'mtnuganda' });
    expect(await t.adapter.requestToPay(paymentInput())).toMatchObject({
      kind: 'ambiguous',
      detail: expect.stringMatching(/NOT_ALLOWED_TARGET_ENVIRONMENT/),
    });
  });

  it('refuses input MTN cannot take before sending anything', async () => {
    const s = await start();
    await expect(s.adapter.requestToPay(paymentInput({ referenceId: 'ref-1' }))).rejects.toThrow(RangeError);
    await expect(s.adapter.requestToPay(paymentInput({ payerMessage: "Pay'ment" }))).rejects.toThrow(
      RangeError,
    );
    await expect(s.adapter.transfer(paymentInput({ amount: '0' }))).rejects.toThrow(RangeError);
    await expect(s.adapter.transfer(paymentInput({ msisdn: '+46733123499' }))).rejects.toThrow(RangeError);
    expect(s.fake.requests).toEqual([]);
  });

  it('FAILED with each reason maps to our status and names the reason; the object form is read', async () => {
    const s = await start({ callbackDelayMs: 0 });
    const reasons = Object.keys(MTN_REASONS);
    const refs = [];
    for (const reason of reasons) {
      s.fake.queue('request-to-pay', `failed:${reason}`);
      const input = paymentInput();
      await s.adapter.requestToPay(input);
      refs.push(input.referenceId);
    }
    s.fake.queue('transfer', 'reason-object');
    const objectForm = paymentInput();
    await s.adapter.transfer(objectForm);
    await settle(50);
    for (const [i, reason] of reasons.entries()) {
      const answer = answerOf(await s.adapter.requestToPayStatus(refs[i]!));
      expect(answer).toMatchObject({
        mtnStatus: 'FAILED',
        status: MTN_REASONS[reason]!.status,
        reasonCode: reason,
        reason: expect.stringMatching(new RegExp(`^MTN ${reason}: `)),
      });
    }
    expect(answerOf(await s.adapter.transferStatus(objectForm.referenceId))).toMatchObject({
      status: 'FAILED',
      reasonCode: 'NOT_ENOUGH_FUNDS',
      reason: 'MTN NOT_ENOUGH_FUNDS: The payer does not have enough funds.',
    });
  });
});
