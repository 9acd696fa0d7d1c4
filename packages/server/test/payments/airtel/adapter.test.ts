import { describe, expect, it } from 'vitest';
import { createAirtelAdapter } from '../../../src/services/payments/providers/airtel/client.ts';
import type { RsaPadding } from '../../../src/services/payments/providers/airtel/settings.ts';
import { airtelPerTest, LOCAL_MSISDN, newId } from './harness.ts';

const start = airtelPerTest();
const push = (transactionId = newId(), amount = 100) => ({
  transactionId,
  msisdn: LOCAL_MSISDN,
  amount,
  reference: 'ORDER1',
});
const payout = (transactionId = newId('po'), amount = 500) => ({
  transactionId,
  msisdn: LOCAL_MSISDN,
  amount,
  reference: 'Sale proceeds',
});

describe('Airtel adapter against the fake, over HTTP', () => {
  it('gets a token with a JSON body and sends the push with X-Country/X-Currency, msisdn without 254, our id', async () => {
    const { fake, adapter } = await start();
    const id = newId();
    const outcome = await adapter.ussdPush(push(id));
    expect(outcome).toMatchObject({
      kind: 'accepted',
      value: { transactionId: id, responseCode: 'DP00800001006' },
    });
    const [token, sent] = fake.requests;
    expect(token).toMatchObject({
      operation: 'token',
      method: 'POST',
      body: {
        client_id: expect.any(String),
        client_secret: expect.any(String),
        grant_type: 'client_credentials',
      },
    });
    expect(sent).toMatchObject({
      operation: 'ussd-push',
      path: '/merchant/v1/payments/',
      headers: { 'x-country': 'KE', 'x-currency': 'KES', 'x-signature': undefined },
      body: {
        reference: 'ORDER1',
        subscriber: { country: 'KE', currency: 'KES', msisdn: LOCAL_MSISDN },
        transaction: { amount: 100, country: 'KE', currency: 'KES', id },
      },
    });
    // Secrets never reach the exchange records.
    const recorded = JSON.stringify(outcome.exchanges);
    expect(recorded).toContain('[REDACTED]');
    expect(recorded).not.toContain('fake-airtel-client-secret');
  });

  it('trusts a short string expires_in: a 1 s token is replaced after half a second', async () => {
    const { fake, adapter } = await start({ tokenTtlSeconds: 1 });
    await adapter.ussdPush(push());
    await adapter.ussdPush(push());
    expect(fake.processed('token')).toBe(1);
    await new Promise((r) => setTimeout(r, 600));
    await adapter.ussdPush(push());
    expect(fake.processed('token')).toBe(2);
  });

  it('reads a numeric expires_in too, and reports bad credentials as not sent', async () => {
    const { adapter } = await start({ expiresInAsNumber: true });
    expect((await adapter.ussdPush(push())).kind).toBe('accepted');
    const { adapter: wrong } = await start({}, { clientSecret: 'wrong' });
    const outcome = await wrong.ussdPush(push());
    expect(outcome).toMatchObject({ kind: 'not-sent', detail: expect.stringContaining('invalid_client') });
  });

  it('reads the body of an HTTP 200: success:false is a refusal, with Airtel code, and nothing was prompted', async () => {
    const { fake, adapter } = await start();
    fake.queue('ussd-push', 'refused-200');
    const outcome = await adapter.ussdPush(push());
    expect(outcome).toMatchObject({
      kind: 'rejected',
      code: 'DP00800001005',
      message: 'Msisdn Not Found',
      httpStatus: 200,
    });
    expect(fake.processed('ussd-push')).toBe(0);
  });

  it('a reused id is a duplicate (ESB000041), never a second prompt', async () => {
    const { fake, adapter } = await start();
    const id = newId();
    expect((await adapter.ussdPush(push(id))).kind).toBe('accepted');
    expect(await adapter.ussdPush(push(id))).toMatchObject({ kind: 'duplicate', code: 'ESB000041' });
    expect(fake.processed('ussd-push')).toBe(1);
  });

  it('a refused token (403 invalid_token) is replaced once and the call made again', async () => {
    const { fake, adapter } = await start();
    fake.queue('token', 'expires-early');
    expect((await adapter.ussdPush(push())).kind).toBe('accepted');
    const second = await adapter.ussdPush(push());
    expect(second.kind).toBe('accepted');
    expect(second.exchanges.map((e) => [e.operation, e.status])).toEqual([
      ['ussd-push', 403],
      ['token', 200],
      ['ussd-push', 200],
    ]);
  });

  it('enquiry: TIP while the customer has not answered, then TS with the receipt; unknown id: not found', async () => {
    const { adapter } = await start({ tipMs: 300 });
    const id = newId();
    await adapter.ussdPush(push(id, 4001));
    expect(await adapter.collectionEnquiry(id)).toMatchObject({
      kind: 'accepted',
      value: { found: true, transactionStatus: 'TIP', status: 'PENDING' },
    });
    await new Promise((r) => setTimeout(r, 400));
    expect(await adapter.collectionEnquiry(id)).toMatchObject({
      kind: 'accepted',
      value: {
        found: true,
        transactionStatus: 'TS',
        status: 'SUCCESS',
        airtelMoneyId: expect.stringMatching(/^MP/),
      },
    });
    expect(await adapter.collectionEnquiry('nobody-here')).toMatchObject({
      kind: 'accepted',
      value: { found: false, code: 'DP00800001025' },
    });
  });

  it.each([
    [1019, 'TE', 'FAILED', 'Airtel TE: Transaction expired'],
    [1032, 'TF', 'CANCELLED', 'Airtel TF: Transaction declined by the user'],
    [2002, 'TF', 'FAILED', 'Airtel TF: Incorrect PIN entered'],
  ])('magic amount %i ends %s, %s', async (amount, code, status, reason) => {
    const { adapter } = await start();
    const id = newId();
    await adapter.ussdPush(push(id, amount));
    await new Promise((r) => setTimeout(r, 100));
    expect(await adapter.collectionEnquiry(id)).toMatchObject({
      value: { transactionStatus: code, status, reason },
    });
  });

  it('v2 push is signed over the exact body; a wrong x-key padding is refused (DP00800001026)', async () => {
    const { fake, adapter } = await start({}, { collectionApi: 'v2' });
    expect((await adapter.ussdPush(push())).kind).toBe('accepted');
    const sent = fake.requests.find((r) => r.operation === 'ussd-push')!;
    expect(sent.path).toBe('/merchant/v2/payments/');
    expect(sent.headers['x-signature']).toMatch(/^[A-Za-z0-9+/]+=*$/);
    expect(fake.requests.filter((r) => r.operation === 'encryption-key')).toHaveLength(1);
    const { fake: other, adapter: mismatched } = await start(
      { signingKeyPadding: 'pkcs1' },
      { collectionApi: 'v2', signingKeyPadding: 'oaep-sha1' },
    );
    expect(await mismatched.ussdPush(push())).toMatchObject({ kind: 'rejected', code: 'DP00800001026' });
    expect(other.processed('ussd-push')).toBe(0);
  });

  it('refuses input Airtel cannot take before sending anything', async () => {
    const { fake, adapter } = await start();
    await expect(adapter.ussdPush(push(newId(), 10.5))).rejects.toThrow(/decimals/);
    await expect(adapter.ussdPush({ ...push(), msisdn: '+254733123456' })).rejects.toThrow(/msisdn/);
    await expect(adapter.ussdPush(push('x'))).rejects.toThrow(/transaction id/);
    expect(fake.requests).toHaveLength(0);
  });
});

describe('Airtel payouts against the fake', () => {
  it('v1: the RSA key is fetched once, the PIN sent encrypted, the answer final at once', async () => {
    const { fake, adapter } = await start();
    const id = newId('po');
    const outcome = await adapter.disburse(payout(id));
    expect(outcome).toMatchObject({
      kind: 'accepted',
      value: {
        transactionId: id,
        meaning: 'success',
        responseCode: 'DP00900001001',
        referenceId: expect.any(String),
      },
    });
    await adapter.disburse(payout());
    expect(fake.processed('encryption-key')).toBe(1);
    const sent = fake.requests.find((r) => r.operation === 'disbursement')!;
    expect(sent.path).toBe('/standard/v1/disbursements/');
    expect(sent.body).toMatchObject({ payee: { msisdn: LOCAL_MSISDN }, transaction: { amount: 500, id } });
    expect((sent.body as { pin: string }).pin).toMatch(/^[A-Za-z0-9+/]{342}==$/);
    expect(JSON.stringify(outcome.exchanges)).not.toContain((sent.body as { pin: string }).pin);
    expect(await adapter.disbursementEnquiry(id)).toMatchObject({
      value: { transactionStatus: 'TS', status: 'SUCCESS' },
    });
  });

  it('uses a configured key without asking for one', async () => {
    const { fake, config } = await start();
    const withKey = createAirtelAdapter({ ...config, rsaPublicKey: fake.publicKey });
    expect((await withKey.disburse(payout())).kind).toBe('accepted');
    expect(fake.processed('encryption-key')).toBe(0);
  });

  it.each([
    ['pkcs1', 'pkcs1', 'accepted'],
    ['oaep-sha256', 'oaep-sha256', 'accepted'],
    ['oaep-sha1', 'oaep-sha1', 'accepted'],
    ['pkcs1', 'oaep-sha256', 'rejected'],
    ['oaep-sha256', 'pkcs1', 'rejected'],
  ] as const)('PIN padding %s against a wallet expecting %s: %s', async (ours, theirs, kind) => {
    const { fake, adapter } = await start({ pinPadding: theirs as RsaPadding }, { pinPadding: ours });
    const outcome = await adapter.disburse(payout());
    expect(outcome.kind).toBe(kind);
    if (kind === 'rejected') {
      expect(outcome).toMatchObject({ code: 'DP00900001013', message: 'Incorrect Encrypted Pin' });
      expect(fake.processed('disbursement')).toBe(0);
      // The fetched key may have been rotated: it is fetched again for the next payout.
      await adapter.disburse(payout());
      expect(fake.processed('encryption-key')).toBe(2);
    }
  });

  it('v2 sends type B2C and the currency; v3 is signed; enquiries follow the version', async () => {
    const { fake, adapter } = await start({}, { disbursementApi: 'v2' });
    const id = newId('po');
    expect((await adapter.disburse(payout(id))).kind).toBe('accepted');
    expect(fake.requests.find((r) => r.operation === 'disbursement')).toMatchObject({
      path: '/standard/v2/disbursements/',
      body: { payee: { currency: 'KES' }, transaction: { type: 'B2C', id } },
    });
    expect((await adapter.disbursementEnquiry(id)).kind).toBe('accepted');
    const { fake: v3fake, adapter: v3 } = await start({}, { disbursementApi: 'v3' });
    expect((await v3.disburse(payout())).kind).toBe('accepted');
    expect(v3fake.requests.find((r) => r.operation === 'disbursement')).toMatchObject({
      path: '/standard/v3/disbursements',
      headers: { 'x-signature': expect.any(String), 'x-key': expect.any(String) },
    });
  });

  it("a v3 payout's status is asked at v2's documented endpoint (none is documented for v3) and found", async () => {
    const { fake, adapter } = await start({}, { disbursementApi: 'v3' });
    const id = newId('po');
    expect((await adapter.disburse(payout(id))).kind).toBe('accepted');
    expect(await adapter.disbursementEnquiry(id)).toMatchObject({
      kind: 'accepted',
      value: { status: 'SUCCESS' },
    });
    const asked = fake.requests.filter((r) => r.operation === 'disbursement-enquiry');
    expect(asked.map((r) => r.path)).toEqual([`/standard/v2/disbursements/${id}`]);
    // The fake, like the documentation, has no v3 status path.
    const v3 = await fetch(`${fake.url}/standard/v3/disbursements/${id}?transactionType=B2C`);
    expect(v3.status).toBe(404);
  });

  it('insufficient funds: refused at once (DP00900001007) and the enquiry says TF', async () => {
    const { adapter } = await start();
    const id = newId('po');
    expect(await adapter.disburse(payout(id, 1111))).toMatchObject({
      kind: 'rejected',
      code: 'DP00900001007',
      httpStatus: 200,
    });
    expect(await adapter.disbursementEnquiry(id)).toMatchObject({ value: { status: 'FAILED' } });
  });

  it('a 500 or a reset is ambiguous; the retry with the same id is a duplicate and pays nothing more', async () => {
    const { fake, adapter } = await start();
    fake.queue('disbursement', 'http-500');
    expect((await adapter.disburse(payout())).kind).toBe('ambiguous');
    const id = newId('po');
    fake.queue('disbursement', 'reset');
    expect((await adapter.disburse(payout(id))).kind).toBe('ambiguous');
    expect(await adapter.disburse(payout(id))).toMatchObject({ kind: 'duplicate', code: 'DP00900001017' });
    expect(fake.processed('disbursement')).toBe(1);
  });

  it('an in-process payout (TIP) is accepted with meaning in-process and settles later', async () => {
    const { adapter } = await start({ tipMs: 200 });
    const id = newId('po');
    expect(await adapter.disburse(payout(id, 4001))).toMatchObject({
      kind: 'accepted',
      value: { meaning: 'in-process', responseCode: 'DP00900001006' },
    });
    expect(await adapter.disbursementEnquiry(id)).toMatchObject({ value: { status: 'PENDING' } });
    await new Promise((r) => setTimeout(r, 300));
    expect(await adapter.disbursementEnquiry(id)).toMatchObject({ value: { status: 'SUCCESS' } });
  });
});
