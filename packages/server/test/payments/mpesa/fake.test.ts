import { type FakeDaraja, SANDBOX_PASSKEY, SANDBOX_SHORTCODE, startFakeDaraja } from '@partner-api/fakes';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { darajaTimestamp, stkPassword } from '../../../src/services/payments/providers/mpesa/password.ts';

/** The fake's own checks, spoken to in raw HTTP as Daraja would be. */
describe('fake Daraja: what it checks', () => {
  let fake: FakeDaraja;
  beforeEach(async () => {
    fake = await startFakeDaraja();
  });
  afterEach(async () => {
    await fake.close();
  });

  const basic = `Basic ${Buffer.from('fake-consumer-key:fake-consumer-secret').toString('base64')}`;
  const get = (path: string, authorization?: string) =>
    fetch(`${fake.url}${path}`, { headers: authorization ? { authorization } : {} });
  async function token() {
    const res = await get('/oauth/v1/generate?grant_type=client_credentials', basic);
    return ((await res.json()) as { access_token: string }).access_token;
  }
  async function post(path: string, body: unknown, bearer?: string) {
    const res = await fetch(`${fake.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${bearer ?? (await token())}` },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }
  const timestamp = darajaTimestamp(new Date());
  const stk = {
    BusinessShortCode: Number(SANDBOX_SHORTCODE),
    Password: stkPassword(SANDBOX_SHORTCODE, SANDBOX_PASSKEY, timestamp),
    Timestamp: timestamp,
    TransactionType: 'CustomerPayBillOnline',
    Amount: '1',
    PartyA: '254722000000',
    PartyB: '174379',
    PhoneNumber: '254722111111',
    CallBackURL: 'https://mydomain.com/path',
    AccountReference: 'accountref',
    TransactionDesc: 'txndesc',
  };

  it('issues a token only for Basic auth and grant_type=client_credentials', async () => {
    const wrongGrant = await get('/oauth/v1/generate?grant_type=password', basic);
    expect([wrongGrant.status, await wrongGrant.json()]).toEqual([
      400,
      expect.objectContaining({ errorCode: '400.008.02', errorMessage: 'Invalid grant type passed' }),
    ]);
    const noAuth = await get('/oauth/v1/generate?grant_type=client_credentials');
    expect(await noAuth.json()).toMatchObject({ errorCode: '400.008.01' });
    const ok = await get('/oauth/v1/generate?grant_type=client_credentials', basic);
    expect(await ok.json()).toEqual({ access_token: expect.stringMatching(/^\w{28}$/), expires_in: 3599 });
  });

  it('accepts the documented sample request shape (numbers and strings as Daraja shows them)', async () => {
    const res = await post('/mpesa/stkpush/v1/processrequest', stk);
    expect(res).toMatchObject({
      status: 200,
      body: { ResponseCode: '0', ResponseDescription: 'Success. Request accepted for processing' },
    });
  });

  it('refuses an unknown or superseded Bearer token with 404.001.03', async () => {
    const first = await token();
    await token(); // each token request invalidates the previous one
    expect(await post('/mpesa/stkpush/v1/processrequest', stk, first)).toMatchObject({
      status: 404,
      body: { errorCode: '404.001.03', errorMessage: 'Invalid Access Token', requestId: expect.any(String) },
    });
  });

  it.each([
    ['Timestamp', { Timestamp: '2021-06-28' }],
    ['TransactionType', { TransactionType: 'Pay' }],
    ['Amount', { Amount: 1.5 }],
    ['PartyA', { PartyA: '0722000000' }],
    ['PhoneNumber', { PhoneNumber: undefined }],
    ['CallBackURL', { CallBackURL: 'https://mydomain.com/ path' }],
    ['AccountReference', { AccountReference: 'much-too-long-ref' }],
    ['TransactionDesc', { TransactionDesc: 'fourteen chars' }],
  ])('refuses a bad %s with 400.002.02', async (field, change) => {
    const res = await post('/mpesa/stkpush/v1/processrequest', { ...stk, ...change });
    expect(res).toMatchObject({
      status: 400,
      body: { errorCode: '400.002.02', errorMessage: `Bad Request - Invalid ${field}` },
    });
  });

  it('refuses a Password not made from this Timestamp with 500.001.1001 Wrong credentials', async () => {
    const res = await post('/mpesa/stkpush/v1/processrequest', { ...stk, Timestamp: '20210628092408' });
    expect(res).toMatchObject({ status: 500, body: { errorCode: '500.001.1001' } });
    expect(res.body.errorMessage).toMatch(/Wrong credentials/);
    expect(fake.processed('stk-push')).toBe(0);
  });

  it('takes scenarios from its control endpoint and shows what it received', async () => {
    await fetch(`${fake.url}/__fake/queue`, {
      method: 'POST',
      body: JSON.stringify({ operation: 'stk-push', scenario: 'http-500' }),
    });
    expect(await post('/mpesa/stkpush/v1/processrequest', stk)).toMatchObject({
      status: 500,
      body: { errorCode: '500.003.1001' },
    });
    const state = (await (await get('/__fake/state')).json()) as { requests: { operation: string }[] };
    expect(state.requests.map((r) => r.operation)).toEqual(['token', 'stk-push']);
  });
});
