import {
  FAKE_AT_SMS_API_KEY,
  type FakeAtSmsApi,
  type FakeAtSmsScenario,
  startFakeAtSms,
} from '@partner-api/fakes';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { createAtSmsGateway, outcomeOf } from '../../src/services/sms/gateway/client.ts';
import { atSmsSettingsFrom } from '../../src/services/sms/gateway/settings.ts';

const TOKEN = 'sms-callback-token-abcdefghijklmnopqrstuvwxyz';

/** The Africa's Talking SMS client over HTTP against the fake (docs/sms.md, "The wire format"). */
describe("Africa's Talking SMS gateway against its fake", () => {
  let fake: FakeAtSmsApi;
  let reports: Array<{ type: string | null; body: string }>;
  let receiver: import('node:http').Server;
  beforeAll(async () => {
    reports = [];
    const http = await import('node:http');
    receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        reports.push({ type: req.headers['content-type'] ?? null, body });
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const port = (receiver.address() as import('node:net').AddressInfo).port;
    fake = await startFakeAtSms({
      callbackUrl: `http://127.0.0.1:${port}/reports`,
      reportDelayMs: 20,
      lateReportMs: 400,
    });
  });
  afterAll(async () => {
    await fake.close();
    await new Promise((r) => receiver.close(r));
  });

  const gateway = (overrides: Partial<{ apiKey: string; senderId: string; timeoutMs: number }> = {}) =>
    createAtSmsGateway({
      baseUrl: fake.url,
      username: 'sandbox',
      apiKey: FAKE_AT_SMS_API_KEY,
      callbackToken: TOKEN,
      callbackUrl: 'unused',
      timeoutMs: 2000,
      ...overrides,
    });

  it('sends one form-encoded POST /version1/messaging with apiKey, and reads statusCode 101 as accepted', async () => {
    const before = fake.requests.length;
    const outcome = await gateway({ senderId: 'INVEST' }).send({ to: '254712345678', message: 'Hello' });
    expect(outcome).toMatchObject({
      kind: 'accepted',
      statusCode: 101,
      status: 'Success',
      cost: 'KES 0.8000',
    });
    const request = fake.requests[before]!;
    expect(request).toMatchObject({ method: 'POST', path: '/version1/messaging', status: 201 });
    expect(request.form).toEqual({
      username: 'sandbox',
      to: '+254712345678',
      message: 'Hello',
      from: 'INVEST',
    });
    const sms = fake.messages.at(-1)!;
    expect(outcome.kind === 'accepted' && outcome.messageId).toBe(sms.messageId);
    // The delivery report: form-encoded, the send's message id, Success.
    await expect
      .poll(() => reports.some((r) => r.body.includes(encodeURIComponent(sms.messageId))))
      .toBe(true);
    const report = reports.find((r) => r.body.includes(sms.messageId))!;
    expect(report.type).toBe('application/x-www-form-urlencoded');
    expect(Object.fromEntries(new URLSearchParams(report.body))).toEqual({
      id: sms.messageId,
      status: 'Success',
      phoneNumber: '+254712345678',
      networkCode: '99999',
      retryCount: '0',
    });
  });

  it.each([
    ['insufficient-balance', 405, 'InsufficientBalance'],
    ['invalid-number', 403, 'InvalidPhoneNumber'],
    ['blacklisted', 406, 'UserInBlacklist'],
    ['dnd', 409, 'DoNotDisturbRejection'],
  ] as const)('%s is a refusal (%i %s): nothing taken, no report', async (scenario, statusCode, status) => {
    const taken = fake.messages.length;
    fake.queue(scenario as FakeAtSmsScenario);
    expect(await gateway().send({ to: '254712345678', message: 'x' })).toEqual({
      kind: 'refused',
      statusCode,
      status,
    });
    expect(fake.messages.length).toBe(taken);
  });

  it('a gateway 5xx is a certain failure (nothing went out); a wrong key too (HTTP 401)', async () => {
    fake.queue('gateway-error');
    expect(await gateway().send({ to: '254712345678', message: 'x' })).toEqual({
      kind: 'failed',
      error: 'HTTP 500',
    });
    expect(await gateway({ apiKey: 'wrong' }).send({ to: '254712345678', message: 'x' })).toEqual({
      kind: 'failed',
      error: 'HTTP 401',
    });
  });

  it('a timeout is unconfirmed: the gateway may have taken it', async () => {
    fake.queue('slow');
    expect(await gateway({ timeoutMs: 200 }).send({ to: '254712345678', message: 'slow' })).toEqual({
      kind: 'unconfirmed',
      error: 'timeout',
    });
  });

  it('a refused connection is a certain failure', async () => {
    const http = await import('node:http');
    const spare = http.createServer();
    await new Promise<void>((r) => spare.listen(0, '127.0.0.1', r));
    const port = (spare.address() as import('node:net').AddressInfo).port;
    await new Promise((r) => spare.close(r));
    const closed = createAtSmsGateway({
      baseUrl: `http://127.0.0.1:${port}`,
      username: 'sandbox',
      apiKey: 'k',
      callbackToken: TOKEN,
      callbackUrl: 'unused',
      timeoutMs: 2000,
    });
    expect(await closed.send({ to: '254712345678', message: 'x' })).toMatchObject({ kind: 'failed' });
  });

  it('no-report sends no report; late-report sends it late', async () => {
    fake.queue('no-report');
    const quiet = await gateway().send({ to: '254700000001', message: 'quiet' });
    fake.queue('late-report');
    const late = await gateway().send({ to: '254700000002', message: 'late' });
    const idOf = (o: typeof quiet) => (o.kind === 'accepted' ? o.messageId : '');
    await new Promise((r) => setTimeout(r, 200));
    expect(reports.some((r) => r.body.includes(idOf(late)))).toBe(false);
    await expect.poll(() => reports.some((r) => r.body.includes(idOf(late))), { timeout: 3000 }).toBe(true);
    expect(reports.some((r) => r.body.includes(idOf(quiet)))).toBe(false);
  });

  it('reads a recipient code whatever the HTTP status, and an unknown code as a refusal', () => {
    const body = (statusCode: number, messageId = 'None') =>
      JSON.stringify({
        SMSMessageData: {
          Message: 'x',
          Recipients: [{ statusCode, number: '+1', status: 'S', cost: '0', messageId }],
        },
      });
    expect(outcomeOf(409, body(409))).toMatchObject({ kind: 'refused', statusCode: 409 });
    expect(outcomeOf(201, body(501))).toMatchObject({ kind: 'failed', statusCode: 501 });
    expect(outcomeOf(201, body(999))).toMatchObject({ kind: 'refused', statusCode: 999 });
    expect(outcomeOf(201, body(101))).toMatchObject({ kind: 'unconfirmed' });
    expect(outcomeOf(201, 'not json')).toMatchObject({ kind: 'unconfirmed' });
  });
});

describe('SMS gateway settings', () => {
  it('is configured by username, key and callback token together, or not at all', () => {
    expect(loadConfig({}).sms).toBeUndefined();
    expect(() => loadConfig({ AT_SMS_USERNAME: 'sandbox' })).toThrow(
      /AT_SMS_API_KEY: required with the other/,
    );
    const config = loadConfig({
      AT_SMS_USERNAME: 'sandbox',
      AT_SMS_API_KEY: 'k',
      AT_SMS_CALLBACK_TOKEN: TOKEN,
      PUBLIC_BASE_URL: 'https://api.example.com',
    });
    expect(config.sms).toEqual({
      baseUrl: 'https://api.sandbox.africastalking.com',
      username: 'sandbox',
      apiKey: 'k',
      callbackToken: TOKEN,
      callbackUrl: `https://api.example.com/v1/sms/callbacks/africastalking/${TOKEN}`,
      timeoutMs: 15_000,
    });
    expect(() =>
      loadConfig({
        AT_SMS_USERNAME: 'sandbox',
        AT_SMS_API_KEY: 'k',
        AT_SMS_CALLBACK_TOKEN: TOKEN,
        SMS_LEASE_SECONDS: '10',
        AT_SMS_REQUEST_TIMEOUT_MS: '15000',
      }),
    ).toThrow('AT_SMS_REQUEST_TIMEOUT_MS: must be below SMS_LEASE_SECONDS (10000 ms)');
    expect(
      atSmsSettingsFrom(
        { AT_SMS_USERNAME: 'acme', AT_SMS_API_KEY: 'k', AT_SMS_CALLBACK_TOKEN: TOKEN },
        'http://x',
      )?.baseUrl,
    ).toBe('https://api.africastalking.com');
  });
});
