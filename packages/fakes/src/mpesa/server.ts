import { randomInt } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import {
  type Answer,
  alnum,
  commonApi,
  commonControl,
  digits,
  type FakeApi,
  FakeCore,
  httpUrl,
  isObject,
  type Received,
  serveFake,
  TokenStore,
} from '../kit/index.ts';
import { ddmmyyyyhhmmss, stkPassword } from './daraja-time.ts';
import { type FakeScenario, MAGIC_AMOUNTS, SCENARIO_RESULTS, SUCCESS_RESULT } from './scenarios.ts';
import {
  asyncAccepted,
  type B2cRecord,
  b2cResultBody,
  collectionStatusResultBody,
  conversationIdLike,
  envelope,
  firstInvalid,
  internalError,
  invalidField,
  msisdn,
  ownIds,
  type Result,
  receiptLike,
  requestIdLike,
  type StkRecord,
  shortcode,
  statusResultBody,
  stkCallbackBody,
  stringOfLength,
  wholeAmount,
} from './wire.ts';

/** The public sandbox pair: shortcode 174379 and its passkey (Daraja's own sample). */
export const SANDBOX_SHORTCODE = '174379';
export const SANDBOX_PASSKEY = 'bfb279f9aa9bdbcf158e97dd71a467cd2e0c893059b10f78e6b72ada1ed2c919';

export type FakeOperation = 'token' | 'stk-push' | 'stk-query' | 'b2c-payment' | 'transaction-status';

export type FakeDarajaOptions = {
  /** 0 (the default) picks a free port. */
  port?: number;
  host?: string;
  consumerKey?: string;
  consumerSecret?: string;
  /** STK shortcodes and their passkeys; default the sandbox pair. */
  passkeys?: Record<string, string>;
  /** B2C credentials; a request with others ends in ResultCode 2001, as Daraja's does. */
  initiatorName?: string;
  securityCredential?: string;
  /** `expires_in` of each token (default 3599); sent as a string when `expiresInAsString`. */
  tokenTtlSeconds?: number;
  expiresInAsString?: boolean;
  /** Which invalid-token envelope to answer (Daraja's pages disagree); default 404.001.03. */
  invalidTokenCode?: '404.001.03' | '400.003.01' | '401.003.01';
  /** From an accepted request to its outcome and callback; default 50 ms. */
  callbackDelayMs?: number;
  /** The `late-callback` delay; default 1 s. */
  lateCallbackMs?: number;
  /** The `slow` answer delay; default 3 s. */
  slowResponseMs?: number;
};

/** One request the fake received, as it received it (tests count prompts and payouts here). */
export type FakeRequest = {
  operation: FakeOperation | 'unknown';
  method: string;
  path: string;
  body: unknown;
  scenario: FakeScenario | null;
  /** The HTTP status answered, or null for `reset` (and until a `slow` answer is written). */
  status: number | null;
  at: Date;
};

export type FakeCallback = {
  kind: 'stk' | 'b2c-result' | 'b2c-timeout' | 'status-result';
  url: string;
  body: unknown;
  /** Our route's HTTP status, or null when the POST failed (`error`). */
  status: number | null;
  error: string | null;
  at: Date;
};

export type FakeDaraja = FakeApi<FakeOperation, FakeScenario, FakeRequest, FakeCallback>;

const ROUTES: Record<string, FakeOperation> = {
  '/oauth/v1/generate': 'token',
  '/mpesa/stkpush/v1/processrequest': 'stk-push',
  '/mpesa/stkpushquery/v1/query': 'stk-query',
  '/mpesa/b2c/v3/paymentrequest': 'b2c-payment',
  '/mpesa/transactionstatus/v1/query': 'transaction-status',
};

/**
 * A local Daraja: the OAuth, STK Push, STK Query, B2C v3 and Transaction Status endpoints with
 * Daraja's checks and bodies, callbacks POSTed to the URLs given, and the failure modes of
 * `scenarios.ts`. Control endpoints (for an operator rehearsing by hand): `POST /__fake/queue`
 * `{operation, scenario}`, `POST /__fake/expire-tokens`, `GET /__fake/state`.
 */
export async function startFakeDaraja(options: FakeDarajaOptions = {}): Promise<FakeDaraja> {
  const consumerKey = options.consumerKey ?? 'fake-consumer-key';
  const consumerSecret = options.consumerSecret ?? 'fake-consumer-secret';
  const passkeys = options.passkeys ?? { [SANDBOX_SHORTCODE]: SANDBOX_PASSKEY };
  const initiatorName = options.initiatorName ?? 'testapi';
  const securityCredential = options.securityCredential ?? 'fake-security-credential';
  const callbackDelayMs = options.callbackDelayMs ?? 50;
  const lateCallbackMs = options.lateCallbackMs ?? 1000;
  const invalidTokenCode = options.invalidTokenCode ?? '404.001.03';

  const core = new FakeCore<FakeOperation, FakeScenario, FakeRequest, FakeCallback>('fake Daraja');
  const tokens = new TokenStore();
  const stk = new Map<string, StkRecord>();
  const b2c = new Map<string, B2cRecord>();

  function scenarioFor(operation: FakeOperation, amount?: number): FakeScenario {
    const next = core.takeQueued(operation);
    if (next) return next;
    return (amount !== undefined && MAGIC_AMOUNTS[amount]) || 'success';
  }

  const postCallback = (kind: FakeCallback['kind'], url: string, body: unknown) =>
    core.sendCallback({ kind, url, body, status: null, error: null, at: new Date() });

  /** Sends the callback(s) a scenario calls for: none, once, twice, or late. */
  function deliver(scenario: FakeScenario, kind: FakeCallback['kind'], url: string, body: unknown) {
    if (scenario === 'no-callback' || scenario === 'never-answered' || scenario === 'declined-no-callback')
      return;
    const delay = scenario === 'late-callback' ? lateCallbackMs : callbackDelayMs;
    core.later(delay, () => void postCallback(kind, url, body));
    if (scenario === 'duplicate-callback') core.later(delay + 20, () => void postCallback(kind, url, body));
  }

  const resultOf = (scenario: FakeScenario): Result => SCENARIO_RESULTS[scenario] ?? SUCCESS_RESULT;

  // ---- OAuth ---------------------------------------------------------------------------------

  function token({ req, url }: Received, request: FakeRequest): Answer {
    if (req.method !== 'GET') return envelope(405, '405.001', 'Method Not Allowed');
    if (url.searchParams.get('grant_type') !== 'client_credentials') {
      return envelope(400, '400.008.02', 'Invalid grant type passed');
    }
    const expected = `Basic ${Buffer.from(`${consumerKey}:${consumerSecret}`).toString('base64')}`;
    if (req.headers.authorization !== expected)
      return envelope(400, '400.008.01', 'Invalid authentication type passed');
    const scenario = scenarioFor('token');
    request.scenario = scenario;
    if (scenario === 'http-500') return internalError();
    // Each token request invalidates the previous token (Daraja's FAQ).
    tokens.clear();
    const ttl = options.tokenTtlSeconds ?? 3599;
    const accessToken = alnum(28);
    tokens.issue(accessToken, ttl, scenario === 'expires-early', {});
    core.markProcessed('token');
    return {
      status: 200,
      body: { access_token: accessToken, expires_in: options.expiresInAsString ? String(ttl) : ttl },
    };
  }

  function bearerRefused(req: IncomingMessage): Answer | null {
    if (tokens.accepts(req.headers.authorization)) return null;
    return envelope(Number(invalidTokenCode.slice(0, 3)), invalidTokenCode, 'Invalid Access Token');
  }

  // ---- STK Push and Query ----------------------------------------------------------------------

  function credentialsRefused(body: Record<string, unknown>): Answer | null {
    const code = String(body.BusinessShortCode ?? '');
    const refused = firstInvalid([
      ['BusinessShortCode', shortcode(code)],
      ['Timestamp', typeof body.Timestamp === 'string' && /^\d{14}$/.test(body.Timestamp)],
      ['Password', typeof body.Password === 'string' && body.Password !== ''],
    ]);
    if (refused) return refused;
    const passkey = passkeys[code];
    if (passkey === undefined) return envelope(500, '500.001.1001', 'Merchant does not exist');
    if (body.Password !== stkPassword(code, passkey, body.Timestamp as string)) {
      return envelope(500, '500.001.1001', '[MerchantValidate] - Wrong credentials');
    }
    return null;
  }

  function stkPush(body: Record<string, unknown>, request: FakeRequest): Answer {
    const refused =
      credentialsRefused(body) ??
      firstInvalid([
        [
          'TransactionType',
          ['CustomerPayBillOnline', 'CustomerBuyGoodsOnline'].includes(String(body.TransactionType)),
        ],
        ['Amount', wholeAmount(body.Amount) !== null],
        ['PartyA', msisdn(body.PartyA)],
        ['PartyB', shortcode(body.PartyB)],
        ['PhoneNumber', msisdn(body.PhoneNumber)],
        ['CallBackURL', httpUrl(body.CallBackURL)],
        ['AccountReference', stringOfLength(body.AccountReference, 1, 12)],
        [
          'TransactionDesc',
          body.TransactionDesc === undefined || stringOfLength(body.TransactionDesc, 0, 13),
        ],
      ]);
    if (refused) return refused;
    const amount = wholeAmount(body.Amount)!;
    const scenario = scenarioFor('stk-push', amount);
    request.scenario = scenario;
    if (scenario === 'http-500') return internalError();
    core.markProcessed('stk-push');
    const record: StkRecord = {
      merchantRequestId: `${randomInt(10000, 99999)}-${randomInt(10_000_000, 99_999_999)}-1`,
      checkoutRequestId: `ws_CO_${ddmmyyyyhhmmss(new Date())}${digits(11)}`,
      amount,
      phone: String(body.PhoneNumber),
      outcome: null,
      receipt: null,
    };
    stk.set(record.checkoutRequestId, record);
    if (scenario !== 'never-answered') {
      const final = resultOf(scenario);
      // Contradicting: the callback claims a payment that never moved. Query contradicts paid: the
      // money moved (Transaction Status by the receipt says Completed), STK Query says 1032.
      const claimsPaid = scenario === 'contradicting-callback' || scenario === 'query-contradicts-paid';
      const callbackResult = claimsPaid ? SUCCESS_RESULT : final;
      if (scenario === 'query-contradicts-paid' || (final.code === 0 && !claimsPaid))
        record.receipt = receiptLike();
      const settle =
        scenario === 'late-callback' || scenario === 'declined-no-callback' ? 0 : callbackDelayMs;
      core.later(settle, () => {
        record.outcome = claimsPaid ? SCENARIO_RESULTS.cancelled! : final;
      });
      deliver(scenario, 'stk', String(body.CallBackURL), stkCallbackBody(record, callbackResult));
    }
    return {
      status: 200,
      body: {
        MerchantRequestID: record.merchantRequestId,
        CheckoutRequestID: record.checkoutRequestId,
        ResponseCode: '0',
        ResponseDescription: 'Success. Request accepted for processing',
        CustomerMessage: 'Success. Request accepted for processing',
      },
    };
  }

  function stkQuery(body: Record<string, unknown>, request: FakeRequest): Answer {
    const refused = credentialsRefused(body);
    if (refused) return refused;
    const record = stk.get(String(body.CheckoutRequestID ?? ''));
    if (!record) return invalidField('CheckoutRequestID');
    request.scenario = scenarioFor('stk-query');
    if (request.scenario === 'http-500') return internalError();
    if (!record.outcome) return envelope(500, '500.001.1001', 'The transaction is being processed');
    return {
      status: 200,
      body: {
        ResponseCode: '0',
        ResponseDescription: 'The service request has been accepted successsfully',
        MerchantRequestID: record.merchantRequestId,
        CheckoutRequestID: record.checkoutRequestId,
        ResultCode: String(record.outcome.code),
        ResultDesc: record.outcome.desc,
      },
    };
  }

  // ---- B2C and Transaction Status --------------------------------------------------------------

  function b2cPayment(body: Record<string, unknown>, request: FakeRequest): Answer {
    const refused = firstInvalid([
      ['OriginatorConversationID', stringOfLength(body.OriginatorConversationID, 1, 100)],
      ['InitiatorName', stringOfLength(body.InitiatorName, 1, 100)],
      ['SecurityCredential', stringOfLength(body.SecurityCredential, 1, 4096)],
      [
        'CommandID',
        ['BusinessPayment', 'SalaryPayment', 'PromotionPayment'].includes(String(body.CommandID)),
      ],
      ['Amount', wholeAmount(body.Amount) !== null],
      ['PartyA', shortcode(body.PartyA)],
      ['PartyB', msisdn(body.PartyB)],
      ['Remarks', stringOfLength(body.Remarks, 2, 100)],
      ['QueueTimeOutURL', httpUrl(body.QueueTimeOutURL)],
      ['ResultURL', httpUrl(body.ResultURL)],
      ['Occassion', body.Occassion === undefined || stringOfLength(body.Occassion, 1, 100)],
    ]);
    if (refused) return refused;
    const originator = String(body.OriginatorConversationID);
    if (b2c.has(originator)) return envelope(500, '500.002.1001', 'Duplicate OriginatorConversationID.');
    const amount = wholeAmount(body.Amount)!;
    const scenario = scenarioFor('b2c-payment', amount);
    request.scenario = scenario;
    if (scenario === 'http-500') return internalError();
    core.markProcessed('b2c-payment');
    const record: B2cRecord = {
      originatorConversationId: originator,
      conversationId: conversationIdLike(),
      transactionId: receiptLike(),
      amount,
      partyB: String(body.PartyB),
      outcome: null,
    };
    b2c.set(originator, record);
    const wrongCredentials =
      body.InitiatorName !== initiatorName || body.SecurityCredential !== securityCredential;
    let final: Result = resultOf(scenario);
    if (wrongCredentials) final = SCENARIO_RESULTS['initiator-invalid']!;
    else if (amount < 10) final = SCENARIO_RESULTS['below-minimum']!;
    const callbackResult = scenario === 'contradicting-callback' ? SUCCESS_RESULT : final;
    core.later(scenario === 'late-callback' ? 0 : callbackDelayMs, () => {
      record.outcome = scenario === 'contradicting-callback' ? SCENARIO_RESULTS['initiator-invalid']! : final;
    });
    if (scenario === 'queue-timeout') {
      core.later(callbackDelayMs, () => void postCallback('b2c-timeout', String(body.QueueTimeOutURL), body));
    } else {
      deliver(scenario, 'b2c-result', String(body.ResultURL), b2cResultBody(record, callbackResult));
    }
    return {
      status: 200,
      body: {
        ConversationID: record.conversationId,
        OriginatorConversationID: originator,
        ResponseCode: '0',
        ResponseDescription: 'Accept the service request successfully.',
      },
    };
  }

  function transactionStatus(body: Record<string, unknown>, request: FakeRequest): Answer {
    const refused = firstInvalid([
      ['Initiator', stringOfLength(body.Initiator, 1, 100)],
      ['SecurityCredential', stringOfLength(body.SecurityCredential, 1, 4096)],
      ['CommandID', body.CommandID === 'TransactionStatusQuery'],
      [
        'TransactionID',
        stringOfLength(body.TransactionID, 1, 100) || stringOfLength(body.OriginalConversationID, 1, 100),
      ],
      ['PartyA', shortcode(body.PartyA)],
      ['IdentifierType', ['1', '2', '4'].includes(String(body.IdentifierType))],
      ['ResultURL', httpUrl(body.ResultURL)],
      ['QueueTimeOutURL', httpUrl(body.QueueTimeOutURL)],
      ['Remarks', stringOfLength(body.Remarks, 1, 100)],
    ]);
    if (refused) return refused;
    request.scenario = scenarioFor('transaction-status');
    if (request.scenario === 'http-500') return internalError();
    core.markProcessed('transaction-status');
    const own = ownIds();
    const resultUrl = String(body.ResultURL);
    const paid = [...stk.values()].find((r) => r.receipt !== null && r.receipt === body.TransactionID);
    if (paid) {
      const result = collectionStatusResultBody(own, paid, String(body.PartyA));
      core.later(callbackDelayMs, () => void postCallback('status-result', resultUrl, result));
      return asyncAccepted(own);
    }
    const wanted = [...b2c.values()].find(
      (r) =>
        r.originatorConversationId === body.OriginalConversationID ||
        r.conversationId === body.OriginalConversationID ||
        r.transactionId === body.TransactionID,
    );
    const scenario = request.scenario;
    core.later(
      callbackDelayMs,
      () => void postCallback('status-result', resultUrl, statusResultBody(own, wanted, scenario)),
    );
    return asyncAccepted(own);
  }

  // ---- HTTP ------------------------------------------------------------------------------------

  const handlers = {
    'stk-push': stkPush,
    'stk-query': stkQuery,
    'b2c-payment': b2cPayment,
    'transaction-status': transactionStatus,
  };

  function answer(received: Received, request: FakeRequest): Answer {
    const { req, body } = received;
    const operation = ROUTES[received.url.pathname];
    if (!operation) return envelope(404, '404.001.01', 'Resource not found');
    if (operation === 'token') return token(received, request);
    if (req.method !== 'POST') return envelope(405, '405.001', 'Method Not Allowed');
    if (!String(req.headers['content-type']).startsWith('application/json') || !isObject(body)) {
      // Daraja answers a body it cannot read as if the first field were wrong (its FAQ 9).
      return (
        bearerRefused(req) ?? invalidField(operation.startsWith('stk') ? 'BusinessShortCode' : 'Request')
      );
    }
    return bearerRefused(req) ?? handlers[operation](body, request);
  }

  const server = await serveFake(
    core,
    { host: options.host, port: options.port, slowResponseMs: options.slowResponseMs ?? 3000 },
    {
      describe: ({ url, method, body, raw }): FakeRequest => ({
        operation: ROUTES[url.pathname] ?? 'unknown',
        method,
        path: url.pathname,
        body: body ?? raw,
        scenario: null,
        status: null,
        at: new Date(),
      }),
      answer,
      control: commonControl(core, tokens),
      controlNotFound: () => envelope(404, '404.001.01', 'Resource not found'),
      crashBody: (err) => ({
        requestId: requestIdLike(),
        errorCode: '500.003.1001',
        errorMessage: String(err),
      }),
    },
  );

  return commonApi(core, tokens, server);
}
