import { randomBytes, randomInt } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { darajaTimestamp, stkPassword } from '../password.ts';
import { type FakeScenario, MAGIC_AMOUNTS, SCENARIO_RESULTS, SUCCESS_RESULT } from './scenarios.ts';

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

export type FakeDaraja = {
  url: string;
  port: number;
  /** Everything received, in order. */
  requests: FakeRequest[];
  /** Every callback POST made, in order. */
  callbacks: FakeCallback[];
  /** Requests of `operation` that were processed (a prompt sent, a payout made): not refused ones. */
  processed(operation: FakeOperation): number;
  /** The next request of `operation` gets `scenario`, before any magic amount. */
  queue(operation: FakeOperation, scenario: FakeScenario): void;
  /** Every token issued so far is refused from now on (a token that expired early). */
  expireTokens(): void;
  /** Resolves once `count` callbacks have been sent (or rejects after `timeoutMs`). */
  waitForCallbacks(count: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
};

type StkRecord = {
  merchantRequestId: string;
  checkoutRequestId: string;
  amount: number;
  phone: string;
  /** What the query says; null while the customer has not answered. */
  outcome: { code: number | string; desc: string } | null;
  /** The receipt of the money that moved (Transaction Status finds it); null: none moved. */
  receipt: string | null;
};

type B2cRecord = {
  originatorConversationId: string;
  conversationId: string;
  transactionId: string;
  amount: number;
  partyB: string;
  /** What Transaction Status says; null while in progress. */
  outcome: { code: number | string; desc: string } | null;
};

type Answer = { status: number; body: unknown };

const envelope = (status: number, errorCode: string, errorMessage: string): Answer => ({
  status,
  body: { requestId: requestIdLike(), errorCode, errorMessage },
});
const invalidField = (field: string) => envelope(400, '400.002.02', `Bad Request - Invalid ${field}`);

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
  const slowResponseMs = options.slowResponseMs ?? 3000;
  const invalidTokenCode = options.invalidTokenCode ?? '404.001.03';

  const requests: FakeRequest[] = [];
  const callbacks: FakeCallback[] = [];
  const queued = new Map<FakeOperation, FakeScenario[]>();
  /** token → uses left before it is refused (Infinity for a normal token). */
  const tokens = new Map<string, { expiresAt: number; usesLeft: number }>();
  const stk = new Map<string, StkRecord>();
  const b2c = new Map<string, B2cRecord>();
  const processedCount = new Map<FakeOperation, number>();
  const timers = new Set<NodeJS.Timeout>();
  const aborter = new AbortController();
  let callbackWaiters: Array<() => void> = [];

  function later(ms: number, fn: () => void) {
    const timer = setTimeout(() => {
      timers.delete(timer);
      fn();
    }, ms);
    timers.add(timer);
  }

  function scenarioFor(operation: FakeOperation, amount?: number): FakeScenario {
    const next = queued.get(operation)?.shift();
    if (next) return next;
    return (amount !== undefined && MAGIC_AMOUNTS[amount]) || 'success';
  }

  function markProcessed(operation: FakeOperation) {
    processedCount.set(operation, (processedCount.get(operation) ?? 0) + 1);
  }

  async function postCallback(kind: FakeCallback['kind'], url: string, body: unknown) {
    const entry: FakeCallback = { kind, url, body, status: null, error: null, at: new Date() };
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.any([aborter.signal, AbortSignal.timeout(5000)]),
      });
      entry.status = response.status;
      await response.arrayBuffer();
    } catch (err) {
      entry.error = err instanceof Error ? err.message : String(err);
    }
    callbacks.push(entry);
    for (const wake of callbackWaiters) wake();
  }

  /** Sends the callback(s) a scenario calls for: none, once, twice, or late. */
  function deliver(scenario: FakeScenario, kind: FakeCallback['kind'], url: string, body: unknown) {
    if (scenario === 'no-callback' || scenario === 'never-answered' || scenario === 'declined-no-callback')
      return;
    const delay = scenario === 'late-callback' ? lateCallbackMs : callbackDelayMs;
    later(delay, () => void postCallback(kind, url, body));
    if (scenario === 'duplicate-callback') later(delay + 20, () => void postCallback(kind, url, body));
  }

  function resultOf(scenario: FakeScenario) {
    return SCENARIO_RESULTS[scenario] ?? SUCCESS_RESULT;
  }

  // ---- OAuth ---------------------------------------------------------------------------------

  function token(req: IncomingMessage, url: URL, request: FakeRequest): Answer {
    if (req.method !== 'GET') return envelope(405, '405.001', 'Method Not Allowed');
    if (url.searchParams.get('grant_type') !== 'client_credentials') {
      return envelope(400, '400.008.02', 'Invalid grant type passed');
    }
    const expected = `Basic ${Buffer.from(`${consumerKey}:${consumerSecret}`).toString('base64')}`;
    if (req.headers.authorization !== expected)
      return envelope(400, '400.008.01', 'Invalid authentication type passed');
    const scenario = scenarioFor('token');
    request.scenario = scenario;
    if (scenario === 'http-500') return envelope(500, '500.003.1001', 'Internal Server Error');
    // Each token request invalidates the previous token (Daraja's FAQ).
    tokens.clear();
    const ttl = options.tokenTtlSeconds ?? 3599;
    const accessToken = alnum(28);
    tokens.set(accessToken, {
      expiresAt: Date.now() + ttl * 1000,
      usesLeft: scenario === 'expires-early' ? 1 : Number.POSITIVE_INFINITY,
    });
    markProcessed('token');
    return {
      status: 200,
      body: { access_token: accessToken, expires_in: options.expiresInAsString ? String(ttl) : ttl },
    };
  }

  function bearerRefused(req: IncomingMessage): Answer | null {
    const match = /^Bearer (.+)$/.exec(req.headers.authorization ?? '');
    const entry = match ? tokens.get(match[1]!) : undefined;
    if (!entry || entry.expiresAt <= Date.now() || entry.usesLeft <= 0) {
      return envelope(Number(invalidTokenCode.slice(0, 3)), invalidTokenCode, 'Invalid Access Token');
    }
    entry.usesLeft -= 1;
    return null;
  }

  // ---- STK Push and Query ----------------------------------------------------------------------

  function credentialsRefused(body: Record<string, unknown>): Answer | null {
    const shortcode = String(body.BusinessShortCode ?? '');
    if (!/^\d{5,7}$/.test(shortcode)) return invalidField('BusinessShortCode');
    if (typeof body.Timestamp !== 'string' || !/^\d{14}$/.test(body.Timestamp))
      return invalidField('Timestamp');
    if (typeof body.Password !== 'string' || body.Password === '') return invalidField('Password');
    const passkey = passkeys[shortcode];
    if (passkey === undefined) return envelope(500, '500.001.1001', 'Merchant does not exist');
    if (body.Password !== stkPassword(shortcode, passkey, body.Timestamp)) {
      return envelope(500, '500.001.1001', '[MerchantValidate] - Wrong credentials');
    }
    return null;
  }

  function stkPush(body: Record<string, unknown>, request: FakeRequest): Answer {
    const refused =
      credentialsRefused(body) ??
      (['CustomerPayBillOnline', 'CustomerBuyGoodsOnline'].includes(String(body.TransactionType))
        ? null
        : invalidField('TransactionType')) ??
      (wholeAmount(body.Amount) === null ? invalidField('Amount') : null) ??
      (msisdn(body.PartyA) ? null : invalidField('PartyA')) ??
      (/^\d{5,7}$/.test(String(body.PartyB ?? '')) ? null : invalidField('PartyB')) ??
      (msisdn(body.PhoneNumber) ? null : invalidField('PhoneNumber')) ??
      (httpUrl(body.CallBackURL) ? null : invalidField('CallBackURL')) ??
      (stringOfLength(body.AccountReference, 1, 12) ? null : invalidField('AccountReference')) ??
      (body.TransactionDesc === undefined || stringOfLength(body.TransactionDesc, 0, 13)
        ? null
        : invalidField('TransactionDesc'));
    if (refused) return refused;
    const amount = wholeAmount(body.Amount)!;
    const scenario = scenarioFor('stk-push', amount);
    request.scenario = scenario;
    if (scenario === 'http-500') return envelope(500, '500.003.1001', 'Internal Server Error');
    markProcessed('stk-push');
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
      later(settle, () => {
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

  function stkCallbackBody(record: StkRecord, result: { code: number | string; desc: string }) {
    const stkCallback: Record<string, unknown> = {
      MerchantRequestID: record.merchantRequestId,
      CheckoutRequestID: record.checkoutRequestId,
      ResultCode: result.code,
      ResultDesc: result.desc,
    };
    if (result.code === 0) {
      stkCallback.CallbackMetadata = {
        Item: [
          { Name: 'Amount', Value: record.amount },
          { Name: 'MpesaReceiptNumber', Value: record.receipt ?? receiptLike() },
          { Name: 'Balance' },
          { Name: 'TransactionDate', Value: Number(darajaTimestamp(new Date())) },
          { Name: 'PhoneNumber', Value: Number(record.phone) },
        ],
      };
    }
    return { Body: { stkCallback } };
  }

  function stkQuery(body: Record<string, unknown>, request: FakeRequest): Answer {
    const refused = credentialsRefused(body);
    if (refused) return refused;
    const record = stk.get(String(body.CheckoutRequestID ?? ''));
    if (!record) return invalidField('CheckoutRequestID');
    request.scenario = scenarioFor('stk-query');
    if (request.scenario === 'http-500') return envelope(500, '500.003.1001', 'Internal Server Error');
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
    const refused =
      (stringOfLength(body.OriginatorConversationID, 1, 100)
        ? null
        : invalidField('OriginatorConversationID')) ??
      (stringOfLength(body.InitiatorName, 1, 100) ? null : invalidField('InitiatorName')) ??
      (stringOfLength(body.SecurityCredential, 1, 4096) ? null : invalidField('SecurityCredential')) ??
      (['BusinessPayment', 'SalaryPayment', 'PromotionPayment'].includes(String(body.CommandID))
        ? null
        : invalidField('CommandID')) ??
      (wholeAmount(body.Amount) === null ? invalidField('Amount') : null) ??
      (/^\d{5,7}$/.test(String(body.PartyA ?? '')) ? null : invalidField('PartyA')) ??
      (msisdn(body.PartyB) ? null : invalidField('PartyB')) ??
      (stringOfLength(body.Remarks, 2, 100) ? null : invalidField('Remarks')) ??
      (httpUrl(body.QueueTimeOutURL) ? null : invalidField('QueueTimeOutURL')) ??
      (httpUrl(body.ResultURL) ? null : invalidField('ResultURL')) ??
      (body.Occassion === undefined || stringOfLength(body.Occassion, 1, 100)
        ? null
        : invalidField('Occassion'));
    if (refused) return refused;
    const originator = String(body.OriginatorConversationID);
    if (b2c.has(originator)) return envelope(500, '500.002.1001', 'Duplicate OriginatorConversationID.');
    const amount = wholeAmount(body.Amount)!;
    const scenario = scenarioFor('b2c-payment', amount);
    request.scenario = scenario;
    if (scenario === 'http-500') return envelope(500, '500.003.1001', 'Internal Server Error');
    markProcessed('b2c-payment');
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
    let final: { code: number | string; desc: string } = resultOf(scenario);
    if (wrongCredentials) final = SCENARIO_RESULTS['initiator-invalid']!;
    else if (amount < 10) final = SCENARIO_RESULTS['below-minimum']!;
    const callbackResult = scenario === 'contradicting-callback' ? SUCCESS_RESULT : final;
    later(scenario === 'late-callback' ? 0 : callbackDelayMs, () => {
      record.outcome = scenario === 'contradicting-callback' ? SCENARIO_RESULTS['initiator-invalid']! : final;
    });
    if (scenario === 'queue-timeout') {
      later(callbackDelayMs, () => void postCallback('b2c-timeout', String(body.QueueTimeOutURL), body));
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

  function b2cResultBody(record: B2cRecord, result: { code: number | string; desc: string }) {
    const body: Record<string, unknown> = {
      ResultType: 0,
      ResultCode: result.code,
      ResultDesc: result.desc,
      OriginatorConversationID: record.originatorConversationId,
      ConversationID: record.conversationId,
      TransactionID: record.transactionId,
    };
    if (result.code === 0) {
      body.ResultParameters = {
        ResultParameter: [
          { Key: 'TransactionAmount', Value: record.amount },
          { Key: 'TransactionReceipt', Value: record.transactionId },
          { Key: 'ReceiverPartyPublicName', Value: `${record.partyB} - FAKE CUSTOMER` },
          { Key: 'TransactionCompletedDateTime', Value: dottedDateTime(new Date()) },
          { Key: 'B2CUtilityAccountAvailableFunds', Value: 8959269.6 },
          { Key: 'B2CWorkingAccountAvailableFunds', Value: 1199371.0 },
          { Key: 'B2CRecipientIsRegisteredCustomer', Value: 'Y' },
          { Key: 'B2CChargesPaidAccountAvailableFunds', Value: -1980.0 },
        ],
      };
    }
    body.ReferenceData = {
      ReferenceItem: {
        Key: 'QueueTimeoutURL',
        Value: 'https://internalsandbox.safaricom.co.ke/mpesa/b2cresults/v1/submit',
      },
    };
    return { Result: body };
  }

  function transactionStatus(body: Record<string, unknown>, request: FakeRequest): Answer {
    const refused =
      (stringOfLength(body.Initiator, 1, 100) ? null : invalidField('Initiator')) ??
      (stringOfLength(body.SecurityCredential, 1, 4096) ? null : invalidField('SecurityCredential')) ??
      (body.CommandID === 'TransactionStatusQuery' ? null : invalidField('CommandID')) ??
      (stringOfLength(body.TransactionID, 1, 100) || stringOfLength(body.OriginalConversationID, 1, 100)
        ? null
        : invalidField('TransactionID')) ??
      (/^\d{5,7}$/.test(String(body.PartyA ?? '')) ? null : invalidField('PartyA')) ??
      (['1', '2', '4'].includes(String(body.IdentifierType)) ? null : invalidField('IdentifierType')) ??
      (httpUrl(body.ResultURL) ? null : invalidField('ResultURL')) ??
      (httpUrl(body.QueueTimeOutURL) ? null : invalidField('QueueTimeOutURL')) ??
      (stringOfLength(body.Remarks, 1, 100) ? null : invalidField('Remarks'));
    if (refused) return refused;
    request.scenario = scenarioFor('transaction-status');
    if (request.scenario === 'http-500') return envelope(500, '500.003.1001', 'Internal Server Error');
    markProcessed('transaction-status');
    const own = {
      originatorConversationId: `${randomInt(1000, 9999)}-${hex(4)}-${hex(20)}`,
      conversationId: conversationIdLike(),
    };
    const paid = [...stk.values()].find((r) => r.receipt !== null && r.receipt === body.TransactionID);
    if (paid) {
      const result = collectionStatusResultBody(own, paid, String(body.PartyA));
      later(callbackDelayMs, () => void postCallback('status-result', String(body.ResultURL), result));
      return asyncAccepted(own);
    }
    const wanted = [...b2c.values()].find(
      (r) =>
        r.originatorConversationId === body.OriginalConversationID ||
        r.conversationId === body.OriginalConversationID ||
        r.transactionId === body.TransactionID,
    );
    later(
      callbackDelayMs,
      () =>
        void postCallback(
          'status-result',
          String(body.ResultURL),
          statusResultBody(own, wanted, request.scenario),
        ),
    );
    return asyncAccepted(own);
  }

  function asyncAccepted(own: { originatorConversationId: string; conversationId: string }): Answer {
    return {
      status: 200,
      body: {
        OriginatorConversationID: own.originatorConversationId,
        ConversationID: own.conversationId,
        ResponseCode: '0',
        ResponseDescription: 'Accept the service request successfully.',
      },
    };
  }

  /**
   * Transaction Status about a collection's receipt at the paybill: completed, with the amount and
   * the paying party as Daraja's sample names them (DebitPartyName "<MSISDN> - <name>").
   */
  function collectionStatusResultBody(
    own: { originatorConversationId: string; conversationId: string },
    paid: StkRecord,
    shortcode: string,
  ) {
    return {
      Result: {
        ResultType: 0,
        ResultCode: 0,
        ResultDesc: 'The service request is processed successfully.',
        OriginatorConversationID: own.originatorConversationId,
        ConversationID: own.conversationId,
        TransactionID: paid.receipt,
        ResultParameters: {
          ResultParameter: [
            { Key: 'ReceiptNo', Value: paid.receipt },
            { Key: 'TransactionStatus', Value: 'Completed' },
            { Key: 'Amount', Value: paid.amount },
            { Key: 'DebitPartyName', Value: `${paid.phone} - FAKE CUSTOMER` },
            { Key: 'CreditPartyName', Value: `${shortcode} - FAKE PAYBILL` },
            { Key: 'ReasonType', Value: 'Pay Bill Online' },
            { Key: 'FinalisedTime', Value: Number(darajaTimestamp(new Date())) },
          ],
        },
      },
    };
  }

  /**
   * The Transaction Status answer. Daraja's sample shows a completed payout only; for a failed one
   * (whatever its Result's code: 1, 2, 2001, SFC_IC0003…) the query succeeds (ResultCode 0) with
   * TransactionStatus "Failed", as an emulator built from the documentation answered; for one in
   * progress TransactionStatus "Pending"; with the `unread-status` scenario "Reversed"; and for an
   * unknown id the string code "TS_NOT_FOUND" (an invention: the real answer is not documented).
   */
  function statusResultBody(
    own: { originatorConversationId: string; conversationId: string },
    wanted: B2cRecord | undefined,
    scenario: FakeScenario | null,
  ) {
    const head = {
      ResultType: 0,
      OriginatorConversationID: own.originatorConversationId,
      ConversationID: own.conversationId,
    };
    if (!wanted)
      return {
        Result: { ...head, ResultCode: 'TS_NOT_FOUND', ResultDesc: 'No transaction found for the given id.' },
      };
    const outcome = wanted.outcome;
    // The query itself succeeds (ResultCode 0); the payout's fate is in TransactionStatus.
    const fate =
      scenario === 'unread-status'
        ? 'Reversed'
        : !outcome
          ? 'Pending'
          : outcome.code === 0
            ? 'Completed'
            : 'Failed';
    return {
      Result: {
        ...head,
        ResultCode: 0,
        ResultDesc: 'The service request is processed successfully.',
        TransactionID: wanted.transactionId,
        ResultParameters: {
          ResultParameter: [
            { Key: 'ReceiptNo', Value: wanted.transactionId },
            { Key: 'TransactionStatus', Value: fate },
            { Key: 'Amount', Value: wanted.amount },
            { Key: 'OriginatorConversationID', Value: wanted.originatorConversationId },
            { Key: 'ConversationID', Value: wanted.conversationId },
            { Key: 'CreditPartyName', Value: `${wanted.partyB} - FAKE CUSTOMER` },
            { Key: 'FinalisedTime', Value: Number(darajaTimestamp(new Date())) },
          ],
        },
      },
    };
  }

  // ---- HTTP plumbing ---------------------------------------------------------------------------

  const routes: Record<string, FakeOperation> = {
    '/oauth/v1/generate': 'token',
    '/mpesa/stkpush/v1/processrequest': 'stk-push',
    '/mpesa/stkpushquery/v1/query': 'stk-query',
    '/mpesa/b2c/v3/paymentrequest': 'b2c-payment',
    '/mpesa/transactionstatus/v1/query': 'transaction-status',
  };
  const handlers = {
    'stk-push': stkPush,
    'stk-query': stkQuery,
    'b2c-payment': b2cPayment,
    'transaction-status': transactionStatus,
  };

  function control(req: IncomingMessage, url: URL, body: unknown): Answer {
    if (url.pathname === '/__fake/queue' && req.method === 'POST') {
      const { operation, scenario } = (body ?? {}) as { operation?: FakeOperation; scenario?: FakeScenario };
      if (!operation || !scenario)
        return { status: 400, body: { error: 'operation and scenario are required' } };
      fake.queue(operation, scenario);
      return { status: 200, body: { queued: { operation, scenario } } };
    }
    if (url.pathname === '/__fake/expire-tokens' && req.method === 'POST') {
      fake.expireTokens();
      return { status: 200, body: { expired: true } };
    }
    if (url.pathname === '/__fake/state' && req.method === 'GET') {
      return { status: 200, body: { requests, callbacks, processed: Object.fromEntries(processedCount) } };
    }
    return envelope(404, '404.001.01', 'Resource not found');
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? '/', 'http://fake');
    const raw = await readBody(req);
    let body: unknown;
    try {
      body = raw === '' ? undefined : JSON.parse(raw);
    } catch {
      body = null;
    }
    const operation = routes[url.pathname];
    const request: FakeRequest = {
      operation: operation ?? 'unknown',
      method: req.method ?? '',
      path: url.pathname,
      body: body ?? raw,
      scenario: null,
      status: null,
      at: new Date(),
    };
    let answer: Answer;
    if (url.pathname.startsWith('/__fake/')) {
      answer = control(req, url, body);
    } else {
      requests.push(request);
      if (!operation) answer = envelope(404, '404.001.01', 'Resource not found');
      else if (operation === 'token') answer = token(req, url, request);
      else if (req.method !== 'POST') answer = envelope(405, '405.001', 'Method Not Allowed');
      else if (!String(req.headers['content-type']).startsWith('application/json') || !isObject(body)) {
        // Daraja answers a body it cannot read as if the first field were wrong (its FAQ 9).
        answer =
          bearerRefused(req) ?? invalidField(operation.startsWith('stk') ? 'BusinessShortCode' : 'Request');
      } else answer = bearerRefused(req) ?? handlers[operation](body, request);
    }
    // A scenario is set only once the request passed Daraja's checks, so these act on real work.
    const scenario = request.scenario;
    if (scenario === 'reset') {
      req.socket.destroy();
      return;
    }
    if (scenario === 'slow') {
      await new Promise<void>((resolve) => later(slowResponseMs, resolve));
    }
    request.status = answer.status;
    if (res.destroyed) return;
    res.writeHead(answer.status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(answer.body));
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({ requestId: requestIdLike(), errorCode: '500.003.1001', errorMessage: String(err) }),
      );
    });
  });
  await new Promise<void>((resolve) =>
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve),
  );
  const { port } = server.address() as AddressInfo;

  const fake: FakeDaraja = {
    url: `http://${options.host ?? '127.0.0.1'}:${port}`,
    port,
    requests,
    callbacks,
    processed: (operation) => processedCount.get(operation) ?? 0,
    queue(operation, scenario) {
      const list = queued.get(operation) ?? [];
      list.push(scenario);
      queued.set(operation, list);
    },
    expireTokens() {
      for (const entry of tokens.values()) entry.usesLeft = 0;
    },
    waitForCallbacks(count, timeoutMs = 5000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (callbacks.length < count) return false;
          callbackWaiters = callbackWaiters.filter((w) => w !== check);
          clearTimeout(timer);
          resolve();
          return true;
        };
        const timer = setTimeout(() => {
          callbackWaiters = callbackWaiters.filter((w) => w !== check);
          reject(new Error(`fake Daraja: ${callbacks.length} of ${count} callbacks after ${timeoutMs} ms`));
        }, timeoutMs);
        if (!check()) callbackWaiters.push(check);
      });
    },
    async close() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      aborter.abort();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return fake;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Amount as Daraja reads it: a whole number ≥ 1, as a JSON number or a numeric string. */
function wholeAmount(value: unknown): number | null {
  const n =
    typeof value === 'number'
      ? value
      : typeof value === 'string' && /^\d+$/.test(value)
        ? Number(value)
        : Number.NaN;
  return Number.isSafeInteger(n) && n >= 1 ? n : null;
}
const msisdn = (v: unknown) => /^254\d{9}$/.test(String(v ?? ''));
const stringOfLength = (v: unknown, min: number, max: number) =>
  typeof v === 'string' && v.length >= min && v.length <= max;
function httpUrl(v: unknown): boolean {
  if (typeof v !== 'string' || /\s/.test(v)) return false;
  try {
    return ['http:', 'https:'].includes(new URL(v).protocol);
  } catch {
    return false;
  }
}

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const alnum = (n: number) => Array.from({ length: n }, () => ALNUM[randomInt(ALNUM.length)]).join('');
const upper = (n: number) => Array.from({ length: n }, () => ALNUM[randomInt(26)]).join('');
const digits = (n: number) => Array.from({ length: n }, () => randomInt(10)).join('');
const hex = (n: number) =>
  randomBytes(Math.ceil(n / 2))
    .toString('hex')
    .slice(0, n);
/** Like `1c5b-4ba8-815c-ac45c57a3db01495926`. */
const requestIdLike = () => `${hex(4)}-${hex(4)}-${hex(4)}-${hex(12)}${digits(7)}`;
/** Like `AG_20240706_20106e9209f64bebd05b`. */
const conversationIdLike = () => `AG_${darajaTimestamp(new Date()).slice(0, 8)}_${hex(20)}`;
/** Like `SG632NMUAB`: M-Pesa receipts are ten upper-case letters and digits. */
const receiptLike = () => `${upper(2)}${digits(1)}${upper(1)}${digits(2)}${upper(4)}`;

/** `DDMMYYYYHHmmss` in EAT, as in CheckoutRequestID `ws_CO_10072024091526…`. */
function ddmmyyyyhhmmss(now: Date): string {
  const t = darajaTimestamp(now);
  return `${t.slice(6, 8)}${t.slice(4, 6)}${t.slice(0, 4)}${t.slice(8)}`;
}
/** `DD.MM.YYYY HH:mm:ss` in EAT, B2C's TransactionCompletedDateTime. */
function dottedDateTime(now: Date): string {
  const t = darajaTimestamp(now);
  return `${t.slice(6, 8)}.${t.slice(4, 6)}.${t.slice(0, 4)} ${t.slice(8, 10)}:${t.slice(10, 12)}:${t.slice(12)}`;
}
