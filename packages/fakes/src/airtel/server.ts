import type { IncomingMessage } from 'node:http';
import {
  type Answer,
  alnum,
  commonApi,
  commonControl,
  digits,
  type FakeApi,
  FakeCore,
  header,
  isObject,
  type Received,
  serveFake,
  TokenStore,
  upper,
} from '../kit/index.ts';
import {
  callbackHash,
  type FakeAirtelHashInput,
  type FakeAirtelRsaPadding,
  openSignature,
  rsaDecrypt,
} from './crypto.ts';
import {
  AIRTEL_MAGIC_AMOUNTS,
  type FakeAirtelScenario,
  type FakeAirtelStatus,
  finalOf,
} from './scenarios.ts';
import {
  airtelAmount,
  COLLECTION_CODES,
  DISBURSEMENT_CODES,
  envelope,
  FAKE_AIRTEL_CLIENT_ID,
  FAKE_AIRTEL_CLIENT_SECRET,
  FAKE_AIRTEL_PIN,
  keyPair,
  moneyIdLike,
  refused,
  serverError,
  type TxRecord,
  yymmdd,
} from './wire.ts';

export type { FakeAirtelHashInput, FakeAirtelRsaPadding } from './crypto.ts';
export {
  FAKE_AIRTEL_CLIENT_ID,
  FAKE_AIRTEL_CLIENT_SECRET,
  FAKE_AIRTEL_ENV,
  FAKE_AIRTEL_PIN,
} from './wire.ts';

export type FakeAirtelOperation =
  | 'token'
  | 'encryption-key'
  | 'ussd-push'
  | 'collection-enquiry'
  | 'disbursement'
  | 'disbursement-enquiry';

export type FakeAirtelOptions = {
  /** 0 (the default) picks a free port. */
  port?: number;
  host?: string;
  clientId?: string;
  clientSecret?: string;
  /** The wallet's X-Country / X-Currency; default KE / KES. */
  country?: string;
  currency?: string;
  /** Digits of a local msisdn; default 9. */
  msisdnLength?: number;
  /** `expires_in` of each token, sent as a string as in Airtel's docs; default 180. */
  tokenTtlSeconds?: number;
  expiresInAsNumber?: boolean;
  /** The URL configured in the portal; callbacks go nowhere until it is set. */
  callbackUrl?: string;
  /** "Callback with authentication": the key the `hash` is made with; unset: no `hash`. */
  callbackHmacKey?: string;
  callbackHashInput?: FakeAirtelHashInput;
  /** Send the (undocumented) payout callbacks, same shape as collections'; default true. */
  disbursementCallbacks?: boolean;
  /** The wallet PIN the encrypted `pin` must decrypt to; default 1234. */
  disbursementPin?: string;
  /** The paddings the fake decrypts `pin` and `x-key` with; default pkcs1 both. */
  pinPadding?: FakeAirtelRsaPadding;
  signingKeyPadding?: FakeAirtelRsaPadding;
  /** The fake's RSA private key (PEM); default one generated at start. */
  rsaPrivateKey?: string;
  /** From an accepted request to its outcome and callback; default 50 ms. */
  callbackDelayMs?: number;
  /** The `late-callback` delay; default 1 s. */
  lateCallbackMs?: number;
  /** The `slow` answer delay; default 3 s. */
  slowResponseMs?: number;
  /** How long `long-tip` stays TIP (and `ambiguous-ta` TA); default 180 s, as Airtel advises. */
  tipMs?: number;
};

export type FakeAirtelRequest = {
  operation: FakeAirtelOperation | 'unknown';
  method: string;
  path: string;
  headers: Record<string, string | undefined>;
  body: unknown;
  raw: string;
  scenario: FakeAirtelScenario | null;
  /** The HTTP status answered, or null for `reset` (and until a `slow` answer is written). */
  status: number | null;
  at: Date;
};

export type FakeAirtelCallback = {
  kind: 'collection' | 'disbursement';
  url: string;
  body: unknown;
  /** Our route's HTTP status, or null when the POST failed (`error`). */
  status: number | null;
  error: string | null;
  at: Date;
};

export type FakeAirtel = FakeApi<
  FakeAirtelOperation,
  FakeAirtelScenario,
  FakeAirtelRequest,
  FakeAirtelCallback
> & {
  /** The RSA public key as the portal shows it (bare base64 SPKI). */
  publicKey: string;
  /** The callback URL "configured in the portal". */
  setCallbackUrl(url: string): void;
  /** Ends a TIP/TA transaction now with its scenario's outcome (and its callback); false if none. */
  settleNow(transactionId: string): boolean;
};

/**
 * A local Airtel Africa Open API: OAuth (JSON body, string `expires_in`), the RSA key, USSD push
 * v1/v2 (v2 checks `x-signature`/`x-key`), collection enquiry, disbursements v1/v2/v3 (the PIN is
 * decrypted and checked; v3 is signed) and their enquiry, callbacks POSTed to the portal URL (with
 * `hash` when a key is set), and the failure modes of `scenarios.ts`. Control endpoints:
 * `POST /__fake/queue` `{operation, scenario}`, `POST /__fake/expire-tokens`,
 * `POST /__fake/callback-url` `{url}`, `POST /__fake/settle` `{id}`, `GET /__fake/state`.
 */
export async function startFakeAirtel(options: FakeAirtelOptions = {}): Promise<FakeAirtel> {
  const clientId = options.clientId ?? FAKE_AIRTEL_CLIENT_ID;
  const clientSecret = options.clientSecret ?? FAKE_AIRTEL_CLIENT_SECRET;
  const country = options.country ?? 'KE';
  const currency = options.currency ?? 'KES';
  const msisdnLength = options.msisdnLength ?? 9;
  const callbackDelayMs = options.callbackDelayMs ?? 50;
  const lateCallbackMs = options.lateCallbackMs ?? 1000;
  const tipMs = options.tipMs ?? 180_000;
  const pin = options.disbursementPin ?? FAKE_AIRTEL_PIN;
  const pinPadding = options.pinPadding ?? 'pkcs1';
  const signingKeyPadding = options.signingKeyPadding ?? 'pkcs1';
  let callbackUrl = options.callbackUrl;
  const { privateKey, publicKey } = keyPair(options.rsaPrivateKey);

  const core = new FakeCore<FakeAirtelOperation, FakeAirtelScenario, FakeAirtelRequest, FakeAirtelCallback>(
    'fake Airtel',
  );
  const tokens = new TokenStore();
  const transactions = new Map<string, TxRecord>();

  function scenarioFor(operation: FakeAirtelOperation, amount?: number): FakeAirtelScenario {
    const next = core.takeQueued(operation);
    if (next) return next;
    return (amount !== undefined && AIRTEL_MAGIC_AMOUNTS[amount]) || 'success';
  }

  /** Callbacks go to the URL "configured in the portal"; none is sent while it is unset. */
  async function postCallback(kind: FakeAirtelCallback['kind'], body: unknown) {
    const url = callbackUrl;
    if (!url) return;
    await core.sendCallback({ kind, url, body, status: null, error: null, at: new Date() });
  }

  function callbackBody(record: TxRecord, claim: { status: FakeAirtelStatus; message: string }) {
    const transaction: Record<string, unknown> = {
      id: record.id,
      message: claim.status === 'TS' ? paidMessage(record) : claim.message,
      status_code: claim.status,
      airtel_money_id: claim.status === 'TS' ? record.airtelMoneyId : '',
    };
    const body: Record<string, unknown> = { transaction };
    if (record.scenario === 'with-amount') {
      // Third-party samples add these; Airtel's documented callback has none of them.
      Object.assign(transaction, { amount: record.amount, currency, msisdn: record.msisdn });
    }
    const key = record.scenario === 'wrong-hash' ? 'not-the-portal-key' : options.callbackHmacKey;
    if (key) body.hash = callbackHash(key, body, options.callbackHashInput ?? 'transaction');
    return body;
  }

  function paidMessage(record: TxRecord): string {
    const amount = record.amount.toLocaleString('en-US');
    return record.kind === 'collection'
      ? `Paid ${currency} ${amount} to FAKE MERCHANT Charge ${currency} 0, Trans ID ${record.airtelMoneyId}.`
      : `You have sent ${currency} ${amount} to ${record.msisdn} FAKE CUSTOMER. TID: ${record.referenceId}`;
  }

  /**
   * Settles `record` after its scenario's delay (TIP/TA until then) and sends the callback(s) it
   * calls for: none, once, twice, late, contradicting.
   */
  function schedule(record: TxRecord, settleAfterMs: number) {
    const scenario = record.scenario;
    const final = finalOf(scenario);
    const claim =
      scenario === 'contradicting-callback' ? { status: 'TS' as const, message: 'success' } : final;
    const sendsCallback = record.kind === 'collection' || options.disbursementCallbacks !== false;
    let done = false;
    const settle = () => {
      if (done) return;
      done = true;
      record.settle = null;
      record.status = final.status;
      record.message = final.message;
      if (!sendsCallback || scenario === 'no-callback') return;
      const delay = scenario === 'late-callback' ? lateCallbackMs : 0;
      core.later(delay, () => void postCallback(record.kind, callbackBody(record, claim)));
      if (scenario === 'duplicate-callback')
        core.later(delay + 20, () => void postCallback(record.kind, callbackBody(record, claim)));
    };
    record.settle = settle;
    if (settleAfterMs <= 0) settle();
    else core.later(settleAfterMs, settle);
  }

  function settleDelay(scenario: FakeAirtelScenario): number {
    if (scenario === 'long-tip' || scenario === 'ambiguous-ta') return tipMs;
    if (scenario === 'late-callback') return 0;
    return callbackDelayMs;
  }

  function newRecord(
    kind: TxRecord['kind'],
    id: string,
    amount: number,
    msisdn: string,
    scenario: FakeAirtelScenario,
  ): TxRecord {
    const record: TxRecord = {
      kind,
      id,
      amount,
      msisdn,
      scenario,
      status: scenario === 'ambiguous-ta' ? 'TA' : 'TIP',
      message: scenario === 'ambiguous-ta' ? 'Transaction ambiguous' : 'Transaction in progress',
      airtelMoneyId: kind === 'collection' ? moneyIdLike() : `disbursement-${alnum(10)}-${alnum(20)}`,
      referenceId: `CI${yymmdd()}.${digits(4)}.${upper(1)}${digits(5)}`,
      settle: null,
    };
    transactions.set(id, record);
    return record;
  }

  // ---- OAuth and the RSA key --------------------------------------------------------------------

  function token(req: IncomingMessage, body: unknown, request: FakeAirtelRequest): Answer {
    const invalidClient = {
      status: 400,
      body: { error_description: 'Invalid client authentication', error: 'invalid_client' },
    };
    if (req.method !== 'POST') return { status: 405, body: { error: 'method_not_allowed' } };
    if (!String(req.headers['content-type']).startsWith('application/json') || !isObject(body))
      return invalidClient;
    if (body.grant_type !== 'client_credentials')
      return {
        status: 400,
        body: { error_description: 'Unsupported grant type', error: 'unsupported_grant_type' },
      };
    if (body.client_id !== clientId || body.client_secret !== clientSecret) return invalidClient;
    const scenario = scenarioFor('token');
    request.scenario = scenario;
    if (scenario === 'http-500') return serverError();
    const ttl = options.tokenTtlSeconds ?? 180;
    const accessToken = alnum(32);
    tokens.issue(accessToken, ttl, scenario === 'expires-early', {});
    core.markProcessed('token');
    return {
      status: 200,
      body: {
        access_token: accessToken,
        expires_in: options.expiresInAsNumber ? ttl : String(ttl),
        token_type: 'bearer',
      },
    };
  }

  function bearerRefused(req: IncomingMessage): Answer | null {
    if (tokens.accepts(req.headers.authorization)) return null;
    return {
      status: 403,
      body: { error_description: 'The access token is invalid or has expired', error: 'invalid_token' },
    };
  }

  /** X-Country: missing is the gateway's ROUTER110; X-Currency: Airtel's 200 with success false. */
  function walletRefused(req: IncomingMessage, disbursement: boolean): Answer | null {
    const c = req.headers['x-country'];
    if (!c)
      return {
        status: 400,
        body: { status_message: `Partner with the given country not found`, status_code: 'ROUTER110' },
      };
    if (c !== country)
      return { status: 400, body: { status_message: 'Invalid country', status_code: 'ROUTER006' } };
    if (req.headers['x-currency'] !== currency)
      return refused(
        'Invalid/Missing Currency',
        disbursement ? { response_code: 'DP00900001013' } : { result_code: 'ESB000035' },
      );
    return null;
  }

  function encryptionKey(): Answer {
    core.markProcessed('encryption-key');
    return envelope(
      true,
      '200',
      'Success',
      { response_code: 'DP02010001001', result_code: 'ESB000010' },
      { key_id: 100, key: publicKey, valid_upto: '31-12-2099 23:59:59' },
    );
  }

  /** v2 pushes and v3 payouts: `x-signature` must decrypt (with `x-key`) to the exact body sent. */
  function signatureRefused(req: IncomingMessage, raw: string, disbursement: boolean): Answer | null {
    const signature = req.headers['x-signature'];
    const key = req.headers['x-key'];
    const payload =
      typeof signature === 'string' && typeof key === 'string'
        ? openSignature(signature, key, privateKey, signingKeyPadding)
        : null;
    if (payload === raw) return null;
    return refused('Forbidden - X-signature and payload did not match', {
      response_code: disbursement ? 'DP00900001016' : 'DP00800001026',
    });
  }

  // ---- Collections -------------------------------------------------------------------------------

  function ussdPush(body: Record<string, unknown>, request: FakeAirtelRequest): Answer {
    const subscriber = isObject(body.subscriber) ? body.subscriber : {};
    const transaction = isObject(body.transaction) ? body.transaction : {};
    const msisdn = String(subscriber.msisdn ?? '');
    if (typeof body.reference !== 'string' || body.reference.trim() === '')
      return refused('Reference is mandatory', { result_code: 'ESB000008' });
    if (!new RegExp(`^\\d{${msisdnLength}}$`).test(msisdn))
      return refused(`Invalid Msisdn Length. Msisdn Length should be ${msisdnLength}`, {
        result_code: 'ESB000033',
      });
    const amount = airtelAmount(transaction.amount);
    if (amount === null)
      return refused(
        'Amount should contain only numeric characters, be greater than zero, and have a limited number of decimal places',
        {
          result_code: 'ESB000008',
        },
      );
    if (transaction.currency !== currency || transaction.country !== country)
      return refused('Invalid/Missing Currency or Country', { result_code: 'ESB000035' });
    const id = typeof transaction.id === 'string' ? transaction.id : '';
    if (id === '') return refused('Transaction id is mandatory', { result_code: 'ESB000008' });
    if (transactions.has(id))
      return refused('External transaction ID already exists', { result_code: 'ESB000041' });
    const scenario = scenarioFor('ussd-push', amount);
    request.scenario = scenario;
    if (scenario === 'http-500') return serverError();
    if (scenario === 'refused-200') return refused('Msisdn Not Found', { response_code: 'DP00800001005' });
    core.markProcessed('ussd-push');
    schedule(newRecord('collection', id, amount, msisdn, scenario), settleDelay(scenario));
    return envelope(
      true,
      '200',
      'Success.',
      { result_code: 'ESB000010', response_code: 'DP00800001006' },
      { transaction: { id, status: 'Success.' } },
    );
  }

  function enquiry(kind: TxRecord['kind'], id: string, request: FakeAirtelRequest): Answer {
    request.scenario = scenarioFor(kind === 'collection' ? 'collection-enquiry' : 'disbursement-enquiry');
    if (request.scenario === 'http-500') return serverError();
    const record = transactions.get(id);
    const codes = kind === 'collection' ? COLLECTION_CODES : DISBURSEMENT_CODES;
    if (!record || record.kind !== kind)
      return envelope(false, '404', 'No transaction found', {
        result_code: 'ESB000045',
        response_code: kind === 'collection' ? 'DP00800001025' : 'DP00900001015',
      });
    core.markProcessed(kind === 'collection' ? 'collection-enquiry' : 'disbursement-enquiry');
    return envelope(
      true,
      '200',
      'SUCCESS',
      { result_code: 'ESB000010', response_code: codes[record.status] },
      {
        transaction: {
          airtel_money_id: record.status === 'TS' ? record.airtelMoneyId : null,
          id: record.id,
          message: record.status === 'TS' ? 'success' : record.message,
          status: record.status,
        },
      },
    );
  }

  // ---- Disbursements -----------------------------------------------------------------------------

  function disburse(body: Record<string, unknown>, version: string, request: FakeAirtelRequest): Answer {
    const payee = isObject(body.payee) ? body.payee : {};
    const transaction = isObject(body.transaction) ? body.transaction : {};
    const msisdn = String(payee.msisdn ?? '');
    if (!new RegExp(`^\\d{${msisdnLength}}$`).test(msisdn))
      return refused('Invalid mobile number', { response_code: 'DP00900001012' });
    const amount = airtelAmount(transaction.amount);
    if (amount === null) return refused('Invalid amount', { response_code: 'DP00900001004' });
    if (typeof body.reference !== 'string' || !/^[A-Za-z0-9 ]{4,64}$/.test(body.reference))
      return refused('Reference should be alphanumeric and 4 - 64 characters long', {
        response_code: 'DP00900001013',
      });
    if (version !== 'v1' && transaction.type !== 'B2C' && transaction.type !== 'B2B')
      return refused('Invalid transaction type', { response_code: 'DP00900001013' });
    let decrypted: string | null = null;
    try {
      decrypted = typeof body.pin === 'string' ? rsaDecrypt(privateKey, body.pin, pinPadding) : null;
    } catch {
      decrypted = null;
    }
    if (decrypted !== pin) return refused('Incorrect Encrypted Pin', { response_code: 'DP00900001013' });
    const id = typeof transaction.id === 'string' ? transaction.id : '';
    if (id === '') return refused('Transaction id is mandatory', { response_code: 'DP00900001013' });
    if (transactions.has(id))
      return refused('Duplicate transaction id', {
        response_code: 'DP00900001017',
        result_code: 'ESB000041',
      });
    const scenario = scenarioFor('disbursement', amount);
    request.scenario = scenario;
    if (scenario === 'http-500') return serverError();
    if (scenario === 'refused-200') return refused('Refused', { response_code: 'DP00900001013' });
    core.markProcessed('disbursement');
    const record = newRecord('disbursement', id, amount, msisdn, scenario);
    if (scenario === 'insufficient') {
      // Refused at once; the enquiry (and the callback) say TF.
      schedule(record, 0);
      return refused('Insufficient funds', { response_code: 'DP00900001007', result_code: 'ESB000011' });
    }
    const immediate = [
      'success',
      'no-callback',
      'duplicate-callback',
      'late-callback',
      'with-amount',
      'wrong-hash',
      'slow',
      'reset',
    ];
    const now = immediate.includes(scenario);
    schedule(record, now ? 0 : settleDelay(scenario));
    return envelope(
      true,
      '200',
      now ? paidMessage(record) : 'In process',
      { result_code: 'ESB000010', response_code: now ? 'DP00900001001' : 'DP00900001006' },
      {
        transaction: {
          reference_id: record.referenceId,
          airtel_money_id: record.airtelMoneyId,
          id,
          status: now ? 'TS' : 'TIP',
        },
      },
    );
  }

  // ---- HTTP plumbing -----------------------------------------------------------------------------

  function route(
    method: string,
    pathname: string,
  ): { operation: FakeAirtelOperation; version: string; id?: string } | null {
    if (pathname === '/auth/oauth2/token') return { operation: 'token', version: '' };
    if (pathname === '/v1/rsa/encryption-keys' && method === 'GET')
      return { operation: 'encryption-key', version: 'v1' };
    let m = /^\/merchant\/(v1|v2)\/payments\/?$/.exec(pathname);
    if (m && method === 'POST') return { operation: 'ussd-push', version: m[1]! };
    m = /^\/standard\/v1\/payments\/([^/]+)$/.exec(pathname);
    if (m && method === 'GET')
      return { operation: 'collection-enquiry', version: 'v1', id: decodeURIComponent(m[1]!) };
    m = /^\/standard\/(v1|v2|v3)\/disbursements\/?$/.exec(pathname);
    if (m && method === 'POST') return { operation: 'disbursement', version: m[1]! };
    // No documentation names a v3 status endpoint: only v1's and v2's exist here (404 otherwise).
    m = /^\/standard\/(v1|v2)\/disbursements\/([^/]+)$/.exec(pathname);
    if (m && method === 'GET')
      return { operation: 'disbursement-enquiry', version: m[1]!, id: decodeURIComponent(m[2]!) };
    return null;
  }

  function answer(received: Received, request: FakeAirtelRequest): Answer {
    const { req, raw, body } = received;
    const matched = route(received.method, received.url.pathname);
    if (!matched)
      return { status: 404, body: { status_message: 'Resource not found', status_code: 'ROUTER404' } };
    if (matched.operation === 'token') return token(req, body, request);
    const disbursement = matched.operation.startsWith('disbursement');
    const refusal = bearerRefused(req) ?? walletRefused(req, disbursement);
    if (refusal) return refusal;
    switch (matched.operation) {
      case 'encryption-key':
        return encryptionKey();
      case 'collection-enquiry':
        return enquiry('collection', matched.id!, request);
      case 'disbursement-enquiry':
        return enquiry('disbursement', matched.id!, request);
      default: {
        if (!isObject(body)) return refused('Invalid request body', { result_code: 'ESB000008' });
        const signed =
          (matched.operation === 'ussd-push' && matched.version === 'v2') ||
          (disbursement && matched.version === 'v3');
        const bad = signed ? signatureRefused(req, raw, disbursement) : null;
        if (bad) return bad;
        return matched.operation === 'ussd-push'
          ? ussdPush(body, request)
          : disburse(body, matched.version, request);
      }
    }
  }

  const settleNow = (transactionId: string): boolean => {
    const settle = transactions.get(transactionId)?.settle;
    if (!settle) return false;
    settle();
    return true;
  };

  const server = await serveFake(
    core,
    { host: options.host, port: options.port, slowResponseMs: options.slowResponseMs ?? 3000 },
    {
      describe: ({ req, url, method, body, raw }): FakeAirtelRequest => ({
        operation: route(method, url.pathname)?.operation ?? 'unknown',
        method,
        path: url.pathname,
        headers: {
          'x-country': header(req, 'x-country'),
          'x-currency': header(req, 'x-currency'),
          'x-signature': header(req, 'x-signature'),
          'x-key': header(req, 'x-key'),
        },
        body: body ?? raw,
        raw,
        scenario: null,
        status: null,
        at: new Date(),
      }),
      answer,
      control: {
        ...commonControl(core, tokens, () => ({
          callbackUrl,
          requests: core.requests,
          callbacks: core.callbacks,
          transactions: [...transactions.values()].map(({ settle: _s, ...t }) => t),
          processed: core.processedCounts(),
        })),
        'POST /__fake/callback-url': ({ url }) => {
          if (!url) return { status: 400, body: { error: 'url is required' } };
          callbackUrl = url as string;
          return { status: 200, body: { callbackUrl: url } };
        },
        'POST /__fake/settle': ({ id }) =>
          settleNow((id as string | undefined) ?? '')
            ? { status: 200, body: { settled: id } }
            : { status: 404, body: { error: 'no such pending transaction' } },
      },
      controlNotFound: () => ({ status: 404, body: { error: 'not found' } }),
      crashBody: (err) => ({ status: { code: '500', message: String(err), success: false } }),
    },
  );

  return {
    ...commonApi(core, tokens, server),
    publicKey,
    setCallbackUrl(next) {
      callbackUrl = next;
    },
    settleNow,
  };
}
