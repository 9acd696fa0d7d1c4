import { describe, expect, it } from 'vitest';
import { money } from '../../../src/lib/money.ts';
import type { ProviderRequest } from '../../../src/services/payments/pipeline/adapter.ts';
import {
  AIRTEL_IDS,
  airtelMsisdn,
  createAirtelPaymentAdapter,
} from '../../../src/services/payments/providers/airtel/adapter.ts';
import { airtelPerTest, newId } from './harness.ts';

const start = airtelPerTest();
const request = (operation: 'COLLECT' | 'DISBURSE', amount: string, over: Partial<ProviderRequest> = {}) =>
  ({
    id: newId('req'),
    transactionId: newId('txn'),
    operation,
    amount: money(amount, 'KES'),
    msisdn: '+254733123456',
    providerIds: {},
    attempts: 0,
    createdAt: new Date(),
    ...over,
  }) satisfies ProviderRequest;

async function setup(fakeOptions = {}, overrides = {}) {
  const s = await start(fakeOptions, overrides);
  return { ...s, adapter: createAirtelPaymentAdapter({ ...s.config, reconcileAfterMs: 1000 }) };
}

describe('airtelMsisdn', () => {
  it.each([
    ['+254733123456', '733123456'],
    ['254733123456', '733123456'],
    ['0733123456', '733123456'],
    ['254 733 123-456', '733123456'],
    ['+256752604392', undefined],
    ['733123456', undefined],
    ['25473312', undefined],
    ['+2540733123456', undefined],
  ])('%s → %s', (given, local) => {
    expect(airtelMsisdn(given, '254')).toBe(local);
  });
});

describe('the Airtel PaymentAdapter', () => {
  it("is named 'airtel' and waits 180 s before enquiring unless told otherwise", async () => {
    const { config } = await start();
    const adapter = createAirtelPaymentAdapter(config);
    expect(adapter.name).toBe('airtel');
    expect(adapter.reconcileAfterMs).toBe(180_000);
    expect(createAirtelPaymentAdapter({ ...config, reconcileAfterMs: 5000 }).reconcileAfterMs).toBe(5000);
  });

  it('COLLECT: the request id is the Airtel transaction id; the enquiry by it confirms', async () => {
    const { fake, adapter } = await setup();
    const r = request('COLLECT', '100.00');
    const sent = await adapter.send(r);
    expect(sent).toMatchObject({ kind: 'accepted', providerIds: { [AIRTEL_IDS.transactionId]: r.id } });
    expect(fake.requests.at(-1)?.body).toMatchObject({
      reference: r.transactionId,
      subscriber: { msisdn: '733123456' },
      transaction: { id: r.id, amount: 100 },
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await adapter.query(r)).toMatchObject({
      kind: 'final',
      status: 'SUCCESS',
      receipt: expect.stringMatching(/^MP/),
    });
  });

  it('a retry after a lost answer reuses the id: accepted, one prompt; the enquiry works without saved ids', async () => {
    const { fake, adapter } = await setup();
    const r = request('COLLECT', '100.00');
    fake.queue('ussd-push', 'reset');
    expect((await adapter.send(r)).kind).toBe('ambiguous');
    expect((await adapter.send({ ...r, attempts: 1 })).kind).toBe('accepted');
    expect(fake.processed('ussd-push')).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await adapter.query(r)).toMatchObject({ kind: 'final', status: 'SUCCESS' });
  });

  it('query: never received is not-found (safe to send again); TIP is pending; TE is FAILED; a 500 is unknown', async () => {
    const { fake, adapter } = await setup({ tipMs: 500 });
    expect(await adapter.query(request('COLLECT', '100.00'))).toMatchObject({ kind: 'not-found' });
    expect(await adapter.query(request('DISBURSE', '100.00'))).toMatchObject({ kind: 'not-found' });
    const tip = request('COLLECT', '4001.00');
    await adapter.send(tip);
    expect(await adapter.query(tip)).toMatchObject({ kind: 'pending' });
    const expired = request('COLLECT', '1019.00');
    await adapter.send(expired);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await adapter.query(expired)).toMatchObject({
      kind: 'final',
      status: 'FAILED',
      reason: 'Airtel TE: Transaction expired',
    });
    fake.queue('collection-enquiry', 'http-500');
    expect(await adapter.query(expired)).toMatchObject({
      kind: 'unknown',
      reason: expect.stringMatching(/^server-error/),
    });
  });

  it('refuses before sending: another currency, another country, cents in a whole-unit currency', async () => {
    const { fake, adapter } = await setup();
    for (const r of [
      request('COLLECT', '100.00', { amount: money('100.00', 'UGX') }),
      request('COLLECT', '100.00', { msisdn: '+256752604392' }),
      request('COLLECT', '100.50'),
    ]) {
      const sent = await adapter.send(r);
      expect(sent).toMatchObject({
        kind: 'rejected',
        reason: expect.stringMatching(/^refused before sending/),
      });
      expect(sent.exchanges).toEqual([]);
    }
    expect(fake.requests).toHaveLength(0);
  });

  it('DISBURSE: pays whole shillings, records the cents left owed, and a duplicate is accepted', async () => {
    const { fake, adapter } = await setup();
    const r = request('DISBURSE', '500.75');
    const sent = await adapter.send(r);
    expect(sent).toMatchObject({
      kind: 'accepted',
      providerIds: {
        [AIRTEL_IDS.transactionId]: r.id,
        [AIRTEL_IDS.paidAmount]: '500.00',
        [AIRTEL_IDS.unpaidRemainder]: '0.75',
        [AIRTEL_IDS.airtelMoneyId]: expect.any(String),
        [AIRTEL_IDS.referenceId]: expect.any(String),
      },
    });
    expect(fake.requests.find((x) => x.operation === 'disbursement')?.body).toMatchObject({
      transaction: { amount: 500, id: r.id },
    });
    expect(await adapter.send({ ...r, attempts: 1 })).toMatchObject({ kind: 'accepted' });
    expect(fake.processed('disbursement')).toBe(1);
    expect(await adapter.query(r)).toMatchObject({ kind: 'final', status: 'SUCCESS' });
  });

  it('DISBURSE refused (insufficient funds) is rejected, then the enquiry says FAILED; ambiguous codes are ambiguous', async () => {
    const { fake, adapter } = await setup();
    const r = request('DISBURSE', '1111.00');
    expect(await adapter.send(r)).toMatchObject({
      kind: 'rejected',
      reason: expect.stringContaining('DP00900001007'),
    });
    expect(await adapter.query(r)).toMatchObject({ kind: 'final', status: 'FAILED' });
    fake.queue('disbursement', 'http-500');
    expect((await adapter.send(request('DISBURSE', '10.00'))).kind).toBe('ambiguous');
  });

  it("v3: a payout Airtel took that v2's enquiry does not find is unknown, never not-found (not sent again)", async () => {
    const { fake, adapter } = await setup({}, { disbursementApi: 'v3' });
    // Never taken by Airtel (no id of its answer stored): not found means it may be sent, as in v1/v2.
    const lost = request('DISBURSE', '100.00');
    expect(await adapter.query(lost)).toMatchObject({ kind: 'not-found' });
    // Taken (Airtel answered it, or refused a retry as a duplicate), yet v2's enquiry, asked for a v3
    // payout, does not find it: v2 may not know v3 payouts. Unknown: the attempts run out and the
    // operator decides; it is never sent again in a loop of duplicates.
    const taken = { ...request('DISBURSE', '100.00'), providerIds: {} as Record<string, string> };
    taken.providerIds[AIRTEL_IDS.transactionId] = taken.id;
    expect(await adapter.query(taken)).toMatchObject({
      kind: 'unknown',
      reason: expect.stringMatching(/^Airtel took this v3 payout, but the v2 enquiry does not find it/),
    });
    expect(fake.requests.filter((r) => r.operation === 'disbursement-enquiry').map((r) => r.path)).toEqual([
      `/standard/v2/disbursements/${lost.id}`,
      `/standard/v2/disbursements/${taken.id}`,
    ]);
    // v1 and v2 ask at their own documented endpoint: its not found stands.
    const { adapter: v2 } = await setup({}, { disbursementApi: 'v2' });
    expect(await v2.query(taken)).toMatchObject({ kind: 'not-found' });
  });

  it('a wallet PIN that does not open is a refusal before any money moves (to the operator)', async () => {
    const { fake, adapter } = await setup({ disbursementPin: '9999' });
    expect(await adapter.send(request('DISBURSE', '10.00'))).toMatchObject({
      kind: 'rejected',
      reason: expect.stringContaining('Incorrect Encrypted Pin'),
    });
    expect(fake.processed('disbursement')).toBe(0);
  });
});
