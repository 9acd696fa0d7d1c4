import { randomUUID } from 'node:crypto';
import { FAKE_MTN_CREDENTIALS, FAKE_MTN_ENV, MTN_SANDBOX_NUMBERS } from '@partner-api/fakes';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MTN_ENV_SHAPE, mtnSettingsFrom } from '../../../src/services/payments/providers/mtn/settings.ts';
import { mtnPerTest, paymentInput } from './harness.ts';

const start = mtnPerTest();
const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));
const basic = (c: { apiUser: string; apiKey: string }) =>
  `Basic ${Buffer.from(`${c.apiUser}:${c.apiKey}`).toString('base64')}`;

describe('the fake MTN', () => {
  it('token: MTN gateway answers to a missing key, wrong credentials and a body; a JWT-like token otherwise', async () => {
    const s = await start();
    const c = FAKE_MTN_CREDENTIALS.collection;
    const token = (headers: Record<string, string>, body?: string) =>
      fetch(`${s.fake.url}/collection/token/`, { method: 'POST', headers, body });
    const noKey = await token({ authorization: basic(c) });
    expect(noKey.status).toBe(401);
    expect(await noKey.json()).toEqual({
      statusCode: 401,
      message: expect.stringMatching(/subscription key/),
    });
    const wrong = await token({
      authorization: basic({ ...c, apiKey: 'x' }),
      'ocp-apim-subscription-key': c.subscriptionKey,
    });
    expect(wrong.status).toBe(401);
    const withBody = await token(
      { authorization: basic(c), 'ocp-apim-subscription-key': c.subscriptionKey },
      'grant_type=client_credentials',
    );
    expect(withBody.status).toBe(400);
    const ok = await token({ authorization: basic(c), 'ocp-apim-subscription-key': c.subscriptionKey });
    expect(await ok.json()).toEqual({
      access_token: expect.stringMatching(/^[\w-]+\.[\w-]+\.[\w-]+$/),
      token_type: 'access_token',
      expires_in: 3600,
    });
  });

  it('refuses a reference that is not a UUID v4, and a collection token on the disbursement product', async () => {
    const s = await start();
    const c = FAKE_MTN_CREDENTIALS.collection;
    const { access_token } = (await (
      await fetch(`${s.fake.url}/collection/token/`, {
        method: 'POST',
        headers: { authorization: basic(c), 'ocp-apim-subscription-key': c.subscriptionKey },
      })
    ).json()) as { access_token: string };
    const headers = {
      authorization: `Bearer ${access_token}`,
      'x-target-environment': 'sandbox',
      'content-type': 'application/json',
    };
    const body = JSON.stringify({
      amount: '5',
      currency: 'EUR',
      externalId: 'x',
      payer: { partyIdType: 'MSISDN', partyId: '46733123499' },
    });
    const badRef = await fetch(`${s.fake.url}/collection/v1_0/requesttopay`, {
      method: 'POST',
      headers: { ...headers, 'ocp-apim-subscription-key': c.subscriptionKey, 'x-reference-id': 'abc' },
      body,
    });
    expect(badRef.status).toBe(400);
    const crossProduct = await fetch(`${s.fake.url}/disbursement/v1_0/transfer`, {
      method: 'POST',
      headers: {
        ...headers,
        'ocp-apim-subscription-key': FAKE_MTN_CREDENTIALS.disbursement.subscriptionKey,
        'x-reference-id': randomUUID(),
      },
      body,
    });
    expect(crossProduct.status).toBe(401);
    expect(s.fake.processed('transfer')).toBe(0);
  });

  it('the callback: the status body without the reference, by POST (default) or PUT', async () => {
    for (const method of ['POST', 'PUT'] as const) {
      const s = await start({ callbackMethod: method });
      const input = paymentInput();
      await s.adapter.transfer(input);
      const [hit] = await s.receiver.waitFor((r) => r.path.endsWith(input.referenceId));
      await s.fake.waitForCallbacks(1);
      expect(s.fake.callbacks[0]).toMatchObject({ method, status: 200, referenceId: input.referenceId });
      expect(hit!.body).toEqual({
        financialTransactionId: expect.stringMatching(/^\d+$/),
        externalId: input.externalId,
        amount: '100',
        currency: 'EUR',
        payee: { partyIdType: 'MSISDN', partyId: '46733123499' },
        payerMessage: 'Investment',
        payeeNote: 'Investment',
        status: 'SUCCESSFUL',
      });
    }
  });

  it('a callback sent once and never again, even when retries are on and ours failed', async () => {
    // Our side refuses the connection: retries (MTN's older page) resend; `callback-once` never does.
    const s = await start(
      { callbackRetries: { times: 3, intervalMs: 20 } },
      { callbackBaseUrl: 'http://127.0.0.1:1/v1/payments/callbacks/mtn' },
    );
    s.fake.queue('request-to-pay', 'callback-once');
    const once = paymentInput();
    await s.adapter.requestToPay(once);
    await s.adapter.requestToPay(paymentInput());
    await settle(400);
    const attempts = (ref: string) => s.fake.callbacks.filter((c) => c.referenceId === ref);
    expect(attempts(once.referenceId)).toHaveLength(1);
    expect(attempts(once.referenceId)[0]).toMatchObject({ status: null, error: expect.any(String) });
    expect(s.fake.callbacks).toHaveLength(1 + 4);
    // The outcome is still there to be queried.
    const status = await s.adapter.requestToPayStatus(once.referenceId);
    expect(status).toMatchObject({ kind: 'accepted', value: { status: 'SUCCESS' } });
  });

  it('the sandbox test numbers: rejected, ongoing, delayed, not-enough-funds payee', async () => {
    const s = await start({ callbackDelayMs: 10, delayedMs: 300 });
    const send = async (msisdn: string, transfer = false) => {
      const input = paymentInput({ msisdn });
      await (transfer ? s.adapter.transfer(input) : s.adapter.requestToPay(input));
      return input.referenceId;
    };
    const rejected = await send('46733123451');
    const ongoing = await send('46733123453');
    const delayed = await send('46733123454');
    const poor = await send('46733123455', true);
    await settle(100);
    const status = async (ref: string, transfer = false) => {
      const o = await (transfer ? s.adapter.transferStatus(ref) : s.adapter.requestToPayStatus(ref));
      return o.kind === 'accepted' ? [o.value.mtnStatus, o.value.reasonCode] : o.kind;
    };
    expect(await status(rejected)).toEqual(['FAILED', 'APPROVAL_REJECTED']);
    expect(await status(ongoing)).toEqual(['PENDING', null]);
    expect(await status(delayed)).toEqual(['PENDING', null]);
    expect(await status(poor, true)).toEqual(['FAILED', 'NOT_ENOUGH_FUNDS']);
    await settle(350);
    expect(await status(delayed)).toEqual(['SUCCESSFUL', null]);
    expect(await status(ongoing)).toEqual(['PENDING', null]);
    expect(Object.keys(MTN_SANDBOX_NUMBERS)).toHaveLength(14);
  });

  it('control endpoints queue a scenario and show the state', async () => {
    const s = await start();
    const queued = await fetch(`${s.fake.url}/__fake/queue`, {
      method: 'POST',
      body: JSON.stringify({ operation: 'request-to-pay', scenario: 'failed:PAYER_LIMIT_REACHED' }),
    });
    expect(queued.status).toBe(200);
    const input = paymentInput();
    await s.adapter.requestToPay(input);
    const state = (await (await fetch(`${s.fake.url}/__fake/state`)).json()) as {
      requests: { scenario: string | null }[];
      processed: Record<string, number>;
    };
    expect(state.requests.map((r) => r.scenario)).toEqual(['success', 'failed:PAYER_LIMIT_REACHED']);
    expect(state.processed).toEqual({ token: 1, 'request-to-pay': 1 });
  });

  it('FAKE_MTN_ENV configures a server for the fake', async () => {
    const env = FAKE_MTN_ENV('http://127.0.0.1:9');
    const config = mtnSettingsFrom(z.object(MTN_ENV_SHAPE).parse(env), 'https://api.example.com');
    expect(config).toMatchObject({
      baseUrl: 'http://127.0.0.1:9',
      targetEnvironment: 'sandbox',
      currency: 'EUR',
      countryCode: '46',
      collection: FAKE_MTN_CREDENTIALS.collection,
      disbursement: FAKE_MTN_CREDENTIALS.disbursement,
      callbackBaseUrl: 'https://api.example.com/v1/payments/callbacks/mtn',
    });
  });
});
