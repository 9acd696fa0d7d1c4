import { FAKE_AIRTEL_ENV, startFakeAirtel } from '@partner-api/fakes';
import { describe, expect, it } from 'vitest';
import {
  parseAirtelCallback,
  verifyCallbackHash,
} from '../../../src/services/payments/providers/airtel/callbacks.ts';
import { createAirtelAdapter } from '../../../src/services/payments/providers/airtel/client.ts';
import { callbackHash } from '../../../src/services/payments/providers/airtel/crypto.ts';
import { airtelSettingsFrom } from '../../../src/services/payments/providers/airtel/settings.ts';
import { startCallbackReceiver } from '../callback-receiver.ts';
import { airtelPerTest, LOCAL_MSISDN, newId } from './harness.ts';

const start = airtelPerTest();

async function token(url: string) {
  const res = await fetch(`${url}/auth/oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_id: 'fake-airtel-client-id',
      client_secret: 'fake-airtel-client-secret',
      grant_type: 'client_credentials',
    }),
  });
  return (await res.json()) as { access_token: string; expires_in: string };
}

describe('the fake Airtel', () => {
  it('answers the token as documented: expires_in "180" as a string; a form body is invalid_client', async () => {
    const fake = await startFakeAirtel();
    try {
      const t = await token(fake.url);
      expect(t).toEqual({ access_token: expect.any(String), expires_in: '180', token_type: 'bearer' });
      const form = await fetch(`${fake.url}/auth/oauth2/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'client_id=a&client_secret=b&grant_type=client_credentials',
      });
      expect(form.status).toBe(400);
      expect(await form.json()).toEqual({
        error_description: 'Invalid client authentication',
        error: 'invalid_client',
      });
    } finally {
      await fake.close();
    }
  });

  it('checks the bearer, X-Country (ROUTER110), X-Currency and the msisdn length (country code refused)', async () => {
    const fake = await startFakeAirtel();
    try {
      const { access_token } = await token(fake.url);
      const body = (msisdn: string) =>
        JSON.stringify({
          reference: 'r1',
          subscriber: { country: 'KE', currency: 'KES', msisdn },
          transaction: { amount: 10, country: 'KE', currency: 'KES', id: newId() },
        });
      const post = (headers: Record<string, string>, payload = body(LOCAL_MSISDN)) =>
        fetch(`${fake.url}/merchant/v1/payments/`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body: payload,
        }).then(async (r) => [r.status, await r.json()] as const);
      const auth = { authorization: `Bearer ${access_token}` };
      expect(await post({ authorization: 'Bearer nope', 'x-country': 'KE', 'x-currency': 'KES' })).toEqual([
        403,
        { error_description: 'The access token is invalid or has expired', error: 'invalid_token' },
      ]);
      expect(await post(auth)).toEqual([400, expect.objectContaining({ status_code: 'ROUTER110' })]);
      expect(await post({ ...auth, 'x-country': 'KE', 'x-currency': 'UGX' })).toEqual([
        200,
        { status: expect.objectContaining({ success: false, result_code: 'ESB000035' }) },
      ]);
      expect(await post({ ...auth, 'x-country': 'KE', 'x-currency': 'KES' }, body('254733123456'))).toEqual([
        200,
        {
          status: expect.objectContaining({
            success: false,
            result_code: 'ESB000033',
            message: 'Invalid Msisdn Length. Msisdn Length should be 9',
          }),
        },
      ]);
      expect(fake.processed('ussd-push')).toBe(0);
    } finally {
      await fake.close();
    }
  });

  it('sends the documented callback (no amount) with a valid hash when the portal key is set', async () => {
    const { fake, adapter, receiver } = await start({ callbackHmacKey: 'k' });
    const id = newId();
    await adapter.ussdPush({ transactionId: id, msisdn: LOCAL_MSISDN, amount: 100, reference: 'r123' });
    const [hit] = await receiver.waitFor((r) => r.raw.includes(id));
    const body = hit!.body as { transaction: Record<string, unknown>; hash: string };
    expect(Object.keys(body.transaction).sort()).toEqual(['airtel_money_id', 'id', 'message', 'status_code']);
    expect(body.hash).toBe(callbackHash('k', JSON.stringify(body.transaction)));
    const parsed = parseAirtelCallback(hit!.raw);
    expect(parsed.ok && verifyCallbackHash(parsed.value, 'k')).toBe('valid');
    await fake.waitForCallbacks(1);
    expect(fake.callbacks.at(-1)).toMatchObject({ kind: 'collection', status: 200 });
  });

  it('failure modes: a wrong hash; third-party extras; TIP for tipMs, cut short by /__fake/settle', async () => {
    const { fake, adapter, receiver } = await start({ callbackHmacKey: 'k', tipMs: 60_000 });
    const send = async (amount: number) => {
      const id = newId();
      await adapter.ussdPush({ transactionId: id, msisdn: LOCAL_MSISDN, amount, reference: 'r123' });
      return id;
    };
    const wrong = await send(4004);
    const [w] = await receiver.waitFor((r) => r.raw.includes(wrong));
    const parsed = parseAirtelCallback(w!.raw);
    expect(parsed.ok && verifyCallbackHash(parsed.value, 'k')).toBe('mismatch');
    const extras = await send(4003);
    const [e] = await receiver.waitFor((r) => r.raw.includes(extras));
    expect((e!.body as { transaction: object }).transaction).toMatchObject({ amount: 4003, currency: 'KES' });
    const tip = await send(4001);
    await new Promise((r) => setTimeout(r, 150));
    expect(await adapter.collectionEnquiry(tip)).toMatchObject({ value: { transactionStatus: 'TIP' } });
    expect(receiver.received.some((r) => r.raw.includes(tip))).toBe(false);
    const settled = await fetch(`${fake.url}/__fake/settle`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id: tip }),
    });
    expect(settled.status).toBe(200);
    expect(await adapter.collectionEnquiry(tip)).toMatchObject({ value: { transactionStatus: 'TS' } });
    await receiver.waitFor((r) => r.raw.includes(tip));
  });

  it('control endpoints: queue a scenario, set the callback URL, read the state', async () => {
    const receiver = await startCallbackReceiver();
    const fake = await startFakeAirtel({ callbackDelayMs: 10 });
    try {
      const control = (path: string, body: unknown) =>
        fetch(`${fake.url}/__fake/${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
      expect((await control('queue', { operation: 'ussd-push', scenario: 'cancelled' })).status).toBe(200);
      expect((await control('callback-url', { url: `${receiver.url}/cb` })).status).toBe(200);
      expect((await control('queue', {})).status).toBe(400);
      const settings = airtelSettingsFrom(
        { ...FAKE_AIRTEL_ENV(fake.url), AIRTEL_CALLBACK_TOKEN: 'x'.repeat(32) },
        'http://127.0.0.1',
      )!;
      const adapter = createAirtelAdapter(settings);
      const id = newId();
      await adapter.ussdPush({ transactionId: id, msisdn: LOCAL_MSISDN, amount: 100, reference: 'r123' });
      const [hit] = await receiver.waitFor((r) => r.path === '/cb');
      expect(hit!.body).toMatchObject({ transaction: { id, status_code: 'TF' } });
      // The fake's defaults are exactly what FAKE_AIRTEL_ENV tells a server, payouts included.
      expect(
        (
          await adapter.disburse({
            transactionId: newId(),
            msisdn: LOCAL_MSISDN,
            amount: 10,
            reference: 'ref1',
          })
        ).kind,
      ).toBe('accepted');
      const state = (await (await fetch(`${fake.url}/__fake/state`)).json()) as {
        callbackUrl: string;
        transactions: Array<{ id: string; status: string }>;
        processed: Record<string, number>;
      };
      expect(state.callbackUrl).toBe(`${receiver.url}/cb`);
      expect(state.transactions).toContainEqual(expect.objectContaining({ id, status: 'TF' }));
      expect(state.processed).toMatchObject({ 'ussd-push': 1, disbursement: 1 });
    } finally {
      await fake.close();
      await receiver.close();
    }
  });
});
