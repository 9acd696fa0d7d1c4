import { describe, expect, it } from 'vitest';
import {
  parseQueueTimeoutCallback,
  parseResultCallback,
  parseStkCallback,
} from '../../../src/services/payments/providers/mpesa/callbacks.ts';
import { createMpesaAdapter } from '../../../src/services/payments/providers/mpesa/client.ts';
import { mpesaPerTest, type MpesaSetup as Setup } from './harness.ts';

const setup = mpesaPerTest();

const push = { msisdn: '254708374149', amount: 100, accountReference: 'ORDER1', description: 'Shares' };
const payout = { msisdn: '254708374149', amount: 500, remarks: 'Sale proceeds' };
const tokenRequests = (s: Setup) => s.fake.requests.filter((r) => r.operation === 'token').length;

describe('Daraja adapter: the OAuth token', () => {
  it('fetches one token for concurrent calls (single flight) and reuses it', async () => {
    const s = await setup();
    const outcomes = await Promise.all(Array.from({ length: 5 }, () => s.adapter.stkPush(push)));
    expect(outcomes.map((o) => o.kind)).toEqual(Array(5).fill('accepted'));
    await s.adapter.stkPush(push);
    expect(tokenRequests(s)).toBe(1);
    // The token exchange is recorded once, on the call that made it.
    expect(outcomes.flatMap((o) => o.exchanges).filter((e) => e.operation === 'token')).toHaveLength(1);
  });

  it('refreshes shortly before expires_in (a string here), by the clock it is given', async () => {
    let now = Date.parse('2026-01-01T00:00:00Z');
    const s = await setup({ tokenTtlSeconds: 3599, expiresInAsString: true });
    const adapter = createMpesaAdapter(s.config, { now: () => new Date(now) });
    await adapter.stkPush(push);
    now += (3599 - 301) * 1000;
    await adapter.stkPush(push);
    expect(tokenRequests(s)).toBe(1);
    now += 2000; // inside the 300 s margin
    await adapter.stkPush(push);
    expect(tokenRequests(s)).toBe(2);
  });

  it.each(['404.001.03', '400.003.01', '401.003.01'] as const)(
    'drops a token refused with %s and retries once with a new one',
    async (invalidTokenCode) => {
      const s = await setup({ invalidTokenCode });
      await s.adapter.stkPush(push);
      s.fake.expireTokens();
      const outcome = await s.adapter.stkPush(push);
      expect(outcome.kind).toBe('accepted');
      expect(outcome.exchanges.map((e) => [e.operation, e.status])).toEqual([
        ['stk-push', Number(invalidTokenCode.slice(0, 3))],
        ['token', 200],
        ['stk-push', 200],
      ]);
      expect(s.fake.processed('stk-push')).toBe(2);
    },
  );

  it('concurrent calls refused with a stale token share one new token', async () => {
    const t = await setup();
    const adapter = createMpesaAdapter({ ...t.config, baseUrl: `${t.fake.url}/` });
    await adapter.stkPush(push);
    t.fake.expireTokens();
    const outcomes = await Promise.all(Array.from({ length: 4 }, () => adapter.stkPush(push)));
    expect(outcomes.map((o) => o.kind)).toEqual(Array(4).fill('accepted'));
    expect(tokenRequests(t)).toBe(2);
  });

  it('replaces a token that stops working before its stated expiry', async () => {
    const s = await setup();
    s.fake.queue('token', 'expires-early');
    expect((await s.adapter.stkPush(push)).kind).toBe('accepted');
    expect((await s.adapter.stkPush(push)).kind).toBe('accepted');
    expect(tokenRequests(s)).toBe(2);
  });

  it('sends nothing when no token can be had (wrong secret, token endpoint down)', async () => {
    const s = await setup({}, { consumerSecret: 'wrong' });
    const refused = await s.adapter.stkPush(push);
    expect(refused).toMatchObject({ kind: 'not-sent', detail: expect.stringContaining('400.008.01') });
    const t = await setup();
    t.fake.queue('token', 'http-500');
    expect((await t.adapter.b2cPayment({ ...payout, originatorConversationId: 'oc-1' })).kind).toBe(
      'not-sent',
    );
    expect(s.fake.processed('stk-push') + t.fake.processed('b2c-payment')).toBe(0);
  });
  it('a token request that times out sends nothing and leaves no token behind', async () => {
    const s = await setup();
    s.fake.queue('token', 'slow');
    expect(await s.adapter.stkPush(push)).toMatchObject({
      kind: 'not-sent',
      detail: expect.stringContaining('timeout'),
    });
    expect((await s.adapter.stkPush(push)).kind).toBe('accepted');
    expect(s.fake.processed('stk-push')).toBe(1);
  });
});

describe('Daraja adapter: STK Push and Query', () => {
  it('records each exchange with secrets redacted', async () => {
    const s = await setup();
    const outcome = await s.adapter.stkPush(push);
    const [token, call] = outcome.exchanges;
    expect(token).toMatchObject({
      provider: 'MPESA',
      operation: 'token',
      method: 'GET',
      path: '/oauth/v1/generate',
      status: 200,
    });
    expect(token!.responseBody).toMatchObject({ access_token: '[REDACTED]', expires_in: 3599 });
    expect(call).toMatchObject({
      operation: 'stk-push',
      path: '/mpesa/stkpush/v1/processrequest',
      status: 200,
      error: null,
    });
    expect(call!.requestBody).toMatchObject({ Password: '[REDACTED]', Amount: 100, PartyA: '254708374149' });
    expect(call!.latencyMs).toBeGreaterThanOrEqual(0);
    expect(JSON.stringify(outcome.exchanges)).not.toContain('fake-consumer-secret');
    // The callback URL carries the token under our path, without the word the note says Daraja rejects.
    const sent = s.fake.requests.find((r) => r.operation === 'stk-push')!.body as { CallBackURL: string };
    expect(sent.CallBackURL).toBe(`${s.config.callbackBaseUrl}/${s.config.callbackToken}/stk`);
  });

  it('is refused with 500.001.1001 Wrong credentials when the passkey is wrong', async () => {
    const s = await setup({}, { passkey: 'not-the-passkey' });
    expect(await s.adapter.stkPush(push)).toMatchObject({
      kind: 'rejected',
      code: '500.001.1001',
      message: '[MerchantValidate] - Wrong credentials',
      httpStatus: 500,
    });
    expect(s.fake.processed('stk-push')).toBe(0);
  });

  it('reads "The transaction is being processed" as PENDING, and the outcome once there', async () => {
    const s = await setup();
    s.fake.queue('stk-push', 'never-answered');
    const pending = await s.adapter.stkPush(push);
    if (pending.kind !== 'accepted') throw new Error(pending.kind);
    expect(pending.value.checkoutRequestId).toMatch(/^ws_CO_\d{25}$/);
    expect(pending.value.merchantRequestId).toMatch(/^\d{5}-\d{8}-1$/);
    const query = await s.adapter.stkQuery(pending.value.checkoutRequestId);
    expect(query).toMatchObject({ kind: 'accepted', value: { status: 'PENDING' } });
    expect(query.exchanges.at(-1)).toMatchObject({
      status: 500,
      responseBody: { errorCode: '500.001.1001' },
    });
  });

  it('a query that fails is ambiguous too (500, timeout), never a status', async () => {
    const s = await setup();
    const pushed = await s.adapter.stkPush(push);
    if (pushed.kind !== 'accepted') throw new Error(pushed.kind);
    s.fake.queue('stk-query', 'http-500');
    s.fake.queue('stk-query', 'slow');
    expect(await s.adapter.stkQuery(pushed.value.checkoutRequestId)).toMatchObject({
      kind: 'ambiguous',
      reason: 'server-error',
    });
    expect(await s.adapter.stkQuery(pushed.value.checkoutRequestId)).toMatchObject({
      kind: 'ambiguous',
      reason: 'timeout',
    });
    s.fake.queue('transaction-status', 'reset');
    expect(await s.adapter.transactionStatus({ originatorConversationId: 'oc-x' })).toMatchObject({
      kind: 'ambiguous',
      reason: 'network',
    });
  });

  it('refuses a query about an unknown CheckoutRequestID', async () => {
    const s = await setup();
    expect(await s.adapter.stkQuery('ws_CO_0000')).toMatchObject({ kind: 'rejected', code: '400.002.02' });
  });

  it('plays magic amounts: 1032 cancels, 3003 answers the string code SFC_IC0003', async () => {
    const s = await setup();
    const cancelled = await s.adapter.stkPush({ ...push, amount: 1032 });
    const stringCode = await s.adapter.stkPush({ ...push, amount: 3003 });
    await s.receiver.waitFor((r) => r.path.endsWith('/stk'), 2);
    const statuses = s.receiver.received.map((r) => {
      const parsed = parseStkCallback(r.body);
      return parsed.ok ? [parsed.value.checkoutRequestId, parsed.value.code] : parsed.error;
    });
    const id = (o: typeof cancelled) => (o.kind === 'accepted' ? o.value.checkoutRequestId : o.kind);
    expect(statuses).toEqual(
      expect.arrayContaining([
        [id(cancelled), '1032'],
        [id(stringCode), 'SFC_IC0003'],
      ]),
    );
  });

  it('is ambiguous on a timeout, a reset and a 500, each with its reason and record', async () => {
    const s = await setup();
    for (const [scenario, reason] of [
      ['slow', 'timeout'],
      ['reset', 'network'],
      ['http-500', 'server-error'],
    ] as const) {
      s.fake.queue('stk-push', scenario);
      const outcome = await s.adapter.stkPush(push);
      expect(outcome).toMatchObject({ kind: 'ambiguous', reason });
      expect(outcome.exchanges.at(-1)!.status).toBe(reason === 'server-error' ? 500 : null);
    }
    expect(s.fake.processed('stk-push')).toBe(2);
  });

  it('refuses what Daraja cannot take before sending anything', async () => {
    const s = await setup();
    for (const input of [
      { ...push, amount: 10.5 },
      { ...push, amount: 0 },
      { ...push, msisdn: '0708374149' },
      { ...push, msisdn: '+254708374149' },
      { ...push, accountReference: 'THIRTEEN-CHAR' },
      { ...push, description: 'fourteen chars' },
    ]) {
      expect(() => s.adapter.stkPush(input)).toThrow(RangeError);
    }
    expect(() => s.adapter.b2cPayment({ ...payout, amount: 99.99, originatorConversationId: 'x' })).toThrow(
      RangeError,
    );
    expect(s.fake.requests).toHaveLength(0);
  });
});

describe('Daraja adapter: B2C and Transaction Status', () => {
  it('reports a reused OriginatorConversationID as duplicate: one payout', async () => {
    const s = await setup();
    const first = await s.adapter.b2cPayment({ ...payout, originatorConversationId: 'oc-dup' });
    expect(first).toMatchObject({
      kind: 'accepted',
      value: {
        originatorConversationId: 'oc-dup',
        conversationId: expect.stringMatching(/^AG_\d{8}_[0-9a-f]{20}$/),
      },
    });
    const again = await s.adapter.b2cPayment({ ...payout, originatorConversationId: 'oc-dup' });
    expect(again).toMatchObject({ kind: 'duplicate', originatorConversationId: 'oc-dup' });
    expect(again.exchanges.at(-1)).toMatchObject({
      status: 500,
      responseBody: { errorCode: '500.002.1001', errorMessage: 'Duplicate OriginatorConversationID.' },
    });
    expect(s.fake.processed('b2c-payment')).toBe(1);
    expect(first.exchanges.at(-1)!.requestBody).toMatchObject({ SecurityCredential: '[REDACTED]' });
  });

  it('ends in 2001 when the security credential is wrong, as Daraja does', async () => {
    const s = await setup({}, { securityCredential: 'stale-credential' });
    await s.adapter.b2cPayment({ ...payout, originatorConversationId: 'oc-cred' });
    const [result] = await s.receiver.waitFor((r) => r.path.endsWith('/b2c-result'));
    expect(parseResultCallback(result!.body)).toMatchObject({
      ok: true,
      value: { status: 'FAILED', code: '2001' },
    });
  });

  it('a queue timeout echoes the request to QueueTimeOutURL; Transaction Status then says SUCCESS', async () => {
    const s = await setup();
    s.fake.queue('b2c-payment', 'queue-timeout');
    await s.adapter.b2cPayment({ ...payout, originatorConversationId: 'oc-queue' });
    const [echo] = await s.receiver.waitFor((r) => r.path.endsWith('/b2c-timeout'));
    expect(parseQueueTimeoutCallback(echo!.body)).toMatchObject({
      ok: true,
      value: { originatorConversationId: 'oc-queue' },
    });
    const asked = await s.adapter.transactionStatus({ originatorConversationId: 'oc-queue' });
    expect(asked.kind).toBe('accepted');
    const [answer] = await s.receiver.waitFor((r) => r.path.endsWith('/status-result'));
    const parsed = parseResultCallback(answer!.body);
    expect(parsed.ok && parsed.value.parameters).toMatchObject({
      TransactionStatus: 'Completed',
      Amount: 500,
    });
    expect(s.receiver.received.some((r) => r.path.endsWith('/b2c-result'))).toBe(false);
  });
});
