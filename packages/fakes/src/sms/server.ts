import { randomBytes } from 'node:crypto';
import {
  type Answer,
  FakeCore,
  type Listening,
  type LoggedRequest,
  type SentCallback,
  serveFake,
} from '../kit/index.ts';
import {
  type AtRecipient,
  answerBody,
  COST_PER_SMS,
  FAKE_AT_SMS_SCENARIOS,
  type FakeAtSmsScenario,
  PHONE,
  REFUSALS,
  refusedRecipient,
  UNAUTHORIZED_TEXT,
} from './wire.ts';

export * from './wire.ts';

export type FakeAtSmsOptions = {
  host?: string;
  /** 0 (the default) picks a free port. */
  port?: number;
  /** The application's username and API key it accepts; default `sandbox` and FAKE_AT_SMS_API_KEY. */
  username?: string;
  apiKey?: string;
  /** The delivery-report callback URL (Africa's Talking's dashboard setting); none: no reports. */
  callbackUrl?: string;
  /** The scenario of every send nothing is queued for; default `normal`. */
  scenario?: FakeAtSmsScenario;
  /** From a send to its delivery report; default 200 ms (`late-report`: lateReportMs, default 5 s). */
  reportDelayMs?: number;
  lateReportMs?: number;
  /** The `slow` answer delay; default 20 s. */
  slowResponseMs?: number;
};

export type FakeAtSmsRequest = LoggedRequest & {
  method: string;
  path: string;
  /** The form fields as received. */
  form: Record<string, string>;
  at: Date;
};

/** An SMS the fake took (statusCode 101): what a phone would receive. */
export type FakeAtSms = { messageId: string; to: string; message: string; from: string | null; at: Date };

export type FakeAtSmsReport = SentCallback;

export type FakeAtSmsApi = {
  url: string;
  port: number;
  requests: FakeAtSmsRequest[];
  /** Every SMS taken, in order: the phones' inbox. */
  messages: FakeAtSms[];
  /** Delivery reports posted, with our route's answer. */
  reports: FakeAtSmsReport[];
  queue(scenario: FakeAtSmsScenario): void;
  setScenario(scenario: FakeAtSmsScenario): void;
  setCallbackUrl(url: string | undefined): void;
  waitForReports(count: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
};

export const FAKE_AT_SMS_API_KEY = 'fake-at-sms-api-key';
export const FAKE_AT_SMS_CALLBACK_TOKEN = 'fake-sms-callback-token-0123456789abcdef';

/** What a server needs to send through this fake. */
export function FAKE_AT_SMS_ENV(fake: Pick<FakeAtSmsApi, 'url'>): Record<string, string> {
  return {
    AT_SMS_BASE_URL: fake.url,
    AT_SMS_USERNAME: 'sandbox',
    AT_SMS_API_KEY: FAKE_AT_SMS_API_KEY,
    AT_SMS_CALLBACK_TOKEN: FAKE_AT_SMS_CALLBACK_TOKEN,
  };
}

/**
 * A fake of Africa's Talking's SMS API (docs/sms.md, "The wire format"): `POST /version1/messaging`,
 * form-encoded, `apiKey` header; answers 201 with `SMSMessageData`; posts form-encoded delivery
 * reports to `callbackUrl`. Scenarios: `normal`, `insufficient-balance` (405), `invalid-number` (403;
 * a number that is not 7–15 digits always is), `blacklisted` (406), `dnd` (409, as HTTP 409),
 * `gateway-error` (HTTP 500), `no-report`, `late-report`, `failed-report`, `slow`, `reset`.
 */
export async function startFakeAtSms(options: FakeAtSmsOptions = {}): Promise<FakeAtSmsApi> {
  const username = options.username ?? 'sandbox';
  const apiKey = options.apiKey ?? FAKE_AT_SMS_API_KEY;
  const core = new FakeCore<'send', FakeAtSmsScenario, FakeAtSmsRequest, FakeAtSmsReport>(
    'fake Africa’s Talking SMS',
  );
  const messages: FakeAtSms[] = [];
  let sticky: FakeAtSmsScenario = options.scenario ?? 'normal';
  let callbackUrl = options.callbackUrl;

  const report = (sms: FakeAtSms, scenario: FakeAtSmsScenario) => {
    if (!callbackUrl || scenario === 'no-report') return;
    const url = callbackUrl;
    const delay =
      scenario === 'late-report' ? (options.lateReportMs ?? 5000) : (options.reportDelayMs ?? 200);
    const failed = scenario === 'failed-report';
    const body: Record<string, string> = {
      id: sms.messageId,
      status: failed ? 'Failed' : 'Success',
      phoneNumber: sms.to,
      // 99999 (Athena): the network code of Africa's Talking's sandbox.
      networkCode: '99999',
      retryCount: '0',
      ...(failed ? { failureReason: 'DeliveryFailure' } : {}),
    };
    core.later(
      delay,
      () => void core.sendCallback({ url, body, status: null, error: null }, 'POST', 5000, 'form'),
    );
  };

  const send = (form: Record<string, string>, scenario: FakeAtSmsScenario): Answer => {
    if (scenario === 'gateway-error')
      return { status: 500, body: 'Internal Server Error', contentType: 'text/plain' };
    const refusal = REFUSALS[scenario];
    const recipients: AtRecipient[] = form.to!.split(',').map((raw) => {
      const number = raw.trim();
      if (!PHONE.test(number)) return refusedRecipient(number, 403, 'InvalidPhoneNumber');
      if (refusal) return refusedRecipient(number, refusal.statusCode, refusal.status);
      const sms: FakeAtSms = {
        messageId: `ATXid_${randomBytes(16).toString('hex')}`,
        to: number.startsWith('+') ? number : `+${number}`,
        message: form.message!,
        from: form.from ?? null,
        at: new Date(),
      };
      messages.push(sms);
      report(sms, scenario);
      return {
        statusCode: 101,
        number: sms.to,
        status: 'Success',
        cost: COST_PER_SMS,
        messageId: sms.messageId,
      };
    });
    core.markProcessed('send');
    // The documentation's DND example comes with HTTP 409; every other answer is 201 Created.
    return { status: scenario === 'dnd' ? 409 : 201, body: answerBody(recipients) };
  };

  const server = await serveFake<FakeAtSmsRequest>(
    { requests: core.requests, sleep: (ms) => core.sleep(ms), stop: () => core.stop() },
    { host: options.host, port: options.port, slowResponseMs: options.slowResponseMs ?? 20_000 },
    {
      describe: (received) => ({
        scenario: null,
        status: null,
        method: received.method,
        path: received.url.pathname,
        form: Object.fromEntries(new URLSearchParams(received.raw)),
        at: new Date(),
      }),
      answer: (received, request) => {
        if (received.method !== 'POST' || received.url.pathname !== '/version1/messaging')
          return { status: 404, body: 'Not Found', contentType: 'text/plain' };
        const given = received.req.headers.apikey;
        if (given !== apiKey || request.form.username !== username)
          return { status: 401, body: UNAUTHORIZED_TEXT, contentType: 'text/plain' };
        const contentType = String(received.req.headers['content-type'] ?? '');
        if (!contentType.startsWith('application/x-www-form-urlencoded'))
          return {
            status: 400,
            body: 'Request must be application/x-www-form-urlencoded',
            contentType: 'text/plain',
          };
        for (const field of ['to', 'message'] as const)
          if (!request.form[field])
            return { status: 400, body: `Missing required field: ${field}`, contentType: 'text/plain' };
        const scenario = core.takeQueued('send') ?? sticky;
        request.scenario = scenario;
        return send(request.form, scenario);
      },
      control: {
        'POST /__fake/queue': ({ scenario }) => {
          if (!FAKE_AT_SMS_SCENARIOS.includes(scenario as FakeAtSmsScenario))
            return {
              status: 400,
              body: { error: `scenario must be one of ${FAKE_AT_SMS_SCENARIOS.join(', ')}` },
            };
          core.queue('send', scenario as FakeAtSmsScenario);
          return { status: 200, body: { queued: { operation: 'send', scenario } } };
        },
        'POST /__fake/scenario': ({ scenario }) => {
          if (!FAKE_AT_SMS_SCENARIOS.includes(scenario as FakeAtSmsScenario))
            return {
              status: 400,
              body: { error: `scenario must be one of ${FAKE_AT_SMS_SCENARIOS.join(', ')}` },
            };
          sticky = scenario as FakeAtSmsScenario;
          return { status: 200, body: { scenario } };
        },
        'POST /__fake/callback-url': ({ url }) => {
          if (url !== undefined && (typeof url !== 'string' || !/^https?:\/\//.test(url)))
            return { status: 400, body: { error: 'url must be a http:// or https:// URL' } };
          callbackUrl = url as string | undefined;
          return { status: 200, body: { callbackUrl: callbackUrl ?? null } };
        },
        'GET /__fake/state': () => ({
          status: 200,
          body: {
            scenario: sticky,
            callbackUrl: callbackUrl ?? null,
            messages,
            requests: core.requests,
            reports: core.callbacks,
          },
        }),
      },
      controlNotFound: () => ({ status: 404, body: { error: 'no such control route' } }),
      crashBody: () => 'Internal Server Error',
    },
  );
  return api(server, core, messages, {
    setScenario: (scenario) => (sticky = scenario),
    setCallbackUrl: (url) => (callbackUrl = url),
  });
}

function api(
  server: Listening,
  core: FakeCore<'send', FakeAtSmsScenario, FakeAtSmsRequest, FakeAtSmsReport>,
  messages: FakeAtSms[],
  more: Pick<FakeAtSmsApi, 'setScenario' | 'setCallbackUrl'>,
): FakeAtSmsApi {
  return {
    url: server.url,
    port: server.port,
    requests: core.requests,
    messages,
    reports: core.callbacks,
    queue: (scenario) => core.queue('send', scenario),
    waitForReports: (count, timeoutMs) => core.waitForCallbacks(count, timeoutMs),
    ...more,
    close: () => server.close(),
  };
}
