import {
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  randomInt,
} from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { callbackHash, callbackHashSubject, openSignature, rsaDecrypt } from '../crypto.ts';
import type { AirtelTransactionStatus } from '../result-codes.ts';
import type { CallbackHashInput, RsaPadding } from '../settings.ts';
import { AIRTEL_MAGIC_AMOUNTS, type FakeAirtelScenario, finalOf } from './scenarios.ts';

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
  callbackHashInput?: CallbackHashInput;
  /** Send the (undocumented) payout callbacks, same shape as collections'; default true. */
  disbursementCallbacks?: boolean;
  /** The wallet PIN the encrypted `pin` must decrypt to; default 1234. */
  disbursementPin?: string;
  /** The paddings the fake decrypts `pin` and `x-key` with; default pkcs1 both. */
  pinPadding?: RsaPadding;
  signingKeyPadding?: RsaPadding;
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

export type FakeAirtel = {
  url: string;
  port: number;
  /** The RSA public key as the portal shows it (bare base64 SPKI). */
  publicKey: string;
  requests: FakeAirtelRequest[];
  callbacks: FakeAirtelCallback[];
  /** Requests of `operation` that were processed (a prompt sent, a payout made): not refused ones. */
  processed(operation: FakeAirtelOperation): number;
  /** The next request of `operation` gets `scenario`, before any magic amount. */
  queue(operation: FakeAirtelOperation, scenario: FakeAirtelScenario): void;
  /** Every token issued so far is refused from now on (a token that expired early). */
  expireTokens(): void;
  /** The callback URL "configured in the portal". */
  setCallbackUrl(url: string): void;
  /** Ends a TIP/TA transaction now with its scenario's outcome (and its callback); false if none. */
  settleNow(transactionId: string): boolean;
  /** Resolves once `count` callbacks have been sent (or rejects after `timeoutMs`). */
  waitForCallbacks(count: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
};

type TxRecord = {
  kind: 'collection' | 'disbursement';
  id: string;
  amount: number;
  msisdn: string;
  scenario: FakeAirtelScenario;
  status: AirtelTransactionStatus;
  message: string;
  airtelMoneyId: string;
  referenceId: string;
  settle: (() => void) | null;
};

type Answer = { status: number; body: unknown };

/** Airtel's answer envelope; `success: false` under HTTP 200 is how most failures come. */
const envelope = (
  success: boolean,
  code: string,
  message: string,
  codes: { result_code?: string; response_code?: string },
  data?: unknown,
  httpStatus = 200,
): Answer => ({
  status: httpStatus,
  body: { ...(data === undefined ? {} : { data }), status: { code, message, ...codes, success } },
});
const refused = (message: string, codes: { result_code?: string; response_code?: string }) =>
  envelope(false, '400', message, codes);
const serverError = (): Answer =>
  envelope(false, '500', 'Internal Server Error', { result_code: 'ESB000001' }, undefined, 500);

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
  const slowResponseMs = options.slowResponseMs ?? 3000;
  const tipMs = options.tipMs ?? 180_000;
  const pin = options.disbursementPin ?? FAKE_AIRTEL_PIN;
  const pinPadding = options.pinPadding ?? 'pkcs1';
  const signingKeyPadding = options.signingKeyPadding ?? 'pkcs1';
  let callbackUrl = options.callbackUrl;
  const { privateKey, publicKey } = keyPair(options.rsaPrivateKey);

  const requests: FakeAirtelRequest[] = [];
  const callbacks: FakeAirtelCallback[] = [];
  const queued = new Map<FakeAirtelOperation, FakeAirtelScenario[]>();
  const tokens = new Map<string, { expiresAt: number; usesLeft: number }>();
  const transactions = new Map<string, TxRecord>();
  const processedCount = new Map<FakeAirtelOperation, number>();
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

  function scenarioFor(operation: FakeAirtelOperation, amount?: number): FakeAirtelScenario {
    const next = queued.get(operation)?.shift();
    if (next) return next;
    return (amount !== undefined && AIRTEL_MAGIC_AMOUNTS[amount]) || 'success';
  }

  function markProcessed(operation: FakeAirtelOperation) {
    processedCount.set(operation, (processedCount.get(operation) ?? 0) + 1);
  }

  async function postCallback(kind: FakeAirtelCallback['kind'], body: unknown) {
    const url = callbackUrl;
    if (!url) return;
    const entry: FakeAirtelCallback = { kind, url, body, status: null, error: null, at: new Date() };
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

  function callbackBody(record: TxRecord, claim: { status: AirtelTransactionStatus; message: string }) {
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
    if (key)
      body.hash = callbackHash(key, callbackHashSubject(body, options.callbackHashInput ?? 'transaction'));
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
      later(delay, () => void postCallback(record.kind, callbackBody(record, claim)));
      if (scenario === 'duplicate-callback')
        later(delay + 20, () => void postCallback(record.kind, callbackBody(record, claim)));
    };
    record.settle = settle;
    if (settleAfterMs <= 0) settle();
    else later(settleAfterMs, settle);
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
    tokens.set(accessToken, {
      expiresAt: Date.now() + ttl * 1000,
      usesLeft: scenario === 'expires-early' ? 1 : Number.POSITIVE_INFINITY,
    });
    markProcessed('token');
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
    const match = /^Bearer (.+)$/.exec(req.headers.authorization ?? '');
    const entry = match ? tokens.get(match[1]!) : undefined;
    if (!entry || entry.expiresAt <= Date.now() || entry.usesLeft <= 0) {
      return {
        status: 403,
        body: { error_description: 'The access token is invalid or has expired', error: 'invalid_token' },
      };
    }
    entry.usesLeft -= 1;
    return null;
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
    markProcessed('encryption-key');
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
        ? openSignature({ signature, key }, privateKey, signingKeyPadding)
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
    markProcessed('ussd-push');
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
    markProcessed(kind === 'collection' ? 'collection-enquiry' : 'disbursement-enquiry');
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
    markProcessed('disbursement');
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

  function control(req: IncomingMessage, url: URL, body: unknown): Answer {
    const b = (isObject(body) ? body : {}) as Record<string, string | undefined>;
    if (url.pathname === '/__fake/queue' && req.method === 'POST') {
      const { operation, scenario } = b as { operation?: FakeAirtelOperation; scenario?: FakeAirtelScenario };
      if (!operation || !scenario)
        return { status: 400, body: { error: 'operation and scenario are required' } };
      fake.queue(operation, scenario);
      return { status: 200, body: { queued: { operation, scenario } } };
    }
    if (url.pathname === '/__fake/expire-tokens' && req.method === 'POST') {
      fake.expireTokens();
      return { status: 200, body: { expired: true } };
    }
    if (url.pathname === '/__fake/callback-url' && req.method === 'POST') {
      if (!b.url) return { status: 400, body: { error: 'url is required' } };
      fake.setCallbackUrl(b.url);
      return { status: 200, body: { callbackUrl: b.url } };
    }
    if (url.pathname === '/__fake/settle' && req.method === 'POST') {
      return fake.settleNow(b.id ?? '')
        ? { status: 200, body: { settled: b.id } }
        : { status: 404, body: { error: 'no such pending transaction' } };
    }
    if (url.pathname === '/__fake/state' && req.method === 'GET') {
      const txs = [...transactions.values()].map(({ settle: _s, ...t }) => t);
      return {
        status: 200,
        body: {
          callbackUrl,
          requests,
          callbacks,
          transactions: txs,
          processed: Object.fromEntries(processedCount),
        },
      };
    }
    return { status: 404, body: { error: 'not found' } };
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
    const method = req.method ?? '';
    const matched = route(method, url.pathname);
    const request: FakeAirtelRequest = {
      operation: matched?.operation ?? 'unknown',
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
    };
    let answer: Answer;
    if (url.pathname.startsWith('/__fake/')) {
      answer = control(req, url, body);
    } else {
      requests.push(request);
      if (!matched)
        answer = { status: 404, body: { status_message: 'Resource not found', status_code: 'ROUTER404' } };
      else if (matched.operation === 'token') answer = token(req, body, request);
      else {
        const disbursement = matched.operation.startsWith('disbursement');
        answer =
          bearerRefused(req) ??
          walletRefused(req, disbursement) ??
          (() => {
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
          })();
      }
    }
    // A scenario is set only once the request passed Airtel's checks, so these act on real work.
    const scenario = request.scenario;
    if (scenario === 'reset') {
      req.socket.destroy();
      return;
    }
    if (scenario === 'slow') await new Promise<void>((resolve) => later(slowResponseMs, resolve));
    request.status = answer.status;
    if (res.destroyed) return;
    res.writeHead(answer.status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(answer.body));
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: { code: '500', message: String(err), success: false } }));
    });
  });
  await new Promise<void>((resolve) =>
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve),
  );
  const { port } = server.address() as AddressInfo;

  const fake: FakeAirtel = {
    url: `http://${options.host ?? '127.0.0.1'}:${port}`,
    port,
    publicKey,
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
    setCallbackUrl(next) {
      callbackUrl = next;
    },
    settleNow(transactionId) {
      const settle = transactions.get(transactionId)?.settle;
      if (!settle) return false;
      settle();
      return true;
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
          reject(new Error(`fake Airtel: ${callbacks.length} of ${count} callbacks after ${timeoutMs} ms`));
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

/** The fake's default credentials (not secrets: they open nothing but a local fake). */
export const FAKE_AIRTEL_CLIENT_ID = 'fake-airtel-client-id';
export const FAKE_AIRTEL_CLIENT_SECRET = 'fake-airtel-client-secret';
export const FAKE_AIRTEL_PIN = '1234';

/**
 * What a server needs to talk to a fake started with its defaults. The RSA key is not among them:
 * the adapter fetches it from the fake's `/v1/rsa/encryption-keys`. The fake must be told our
 * callback URL (`--callback-url`, `POST /__fake/callback-url` or `setCallbackUrl`), as Airtel's portal is.
 */
export function FAKE_AIRTEL_ENV(fakeUrl: string): Record<string, string> {
  return {
    AIRTEL_BASE_URL: fakeUrl,
    AIRTEL_CLIENT_ID: FAKE_AIRTEL_CLIENT_ID,
    AIRTEL_CLIENT_SECRET: FAKE_AIRTEL_CLIENT_SECRET,
    AIRTEL_COUNTRY: 'KE',
    AIRTEL_CURRENCY: 'KES',
    AIRTEL_DISBURSEMENT_PIN: FAKE_AIRTEL_PIN,
  };
}

const COLLECTION_CODES: Record<AirtelTransactionStatus, string> = {
  TS: 'DP00800001001',
  TF: 'DP00800001005',
  TA: 'DP00800001000',
  TIP: 'DP00800001006',
  TE: 'DP00800001029',
};
const DISBURSEMENT_CODES: Record<AirtelTransactionStatus, string> = {
  TS: 'DP00900001001',
  TF: 'DP00900001005',
  TA: 'DP00900001000',
  TIP: 'DP00900001006',
  TE: 'DP00900001014',
};

function keyPair(pem?: string): { privateKey: KeyObject | string; publicKey: string } {
  if (pem) {
    const privateKey = createPrivateKey(pem);
    return {
      privateKey,
      publicKey: createPublicKey(privateKey).export({ type: 'spki', format: 'der' }).toString('base64'),
    };
  }
  const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    privateKey: pair.privateKey,
    publicKey: pair.publicKey.export({ type: 'spki', format: 'der' }).toString('base64'),
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

const header = (req: IncomingMessage, name: string) => {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
};

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** An amount as Airtel reads it: a JSON number > 0 with at most 2 decimals (or a numeric string). */
function airtelAmount(value: unknown): number | null {
  const n =
    typeof value === 'number'
      ? value
      : typeof value === 'string' && /^\d+(\.\d{1,2})?$/.test(value)
        ? Number(value)
        : Number.NaN;
  return Number.isFinite(n) && n > 0 && Math.round(n * 100) === n * 100 ? n : null;
}

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const alnum = (n: number) => Array.from({ length: n }, () => ALNUM[randomInt(ALNUM.length)]).join('');
const upper = (n: number) => Array.from({ length: n }, () => ALNUM[randomInt(26)]).join('');
const digits = (n: number) => Array.from({ length: n }, () => randomInt(10)).join('');
const yymmdd = () => new Date().toISOString().slice(2, 10).replaceAll('-', '');
/** Like `MP210603.1234.L06941`. */
const moneyIdLike = () => `MP${yymmdd()}.${digits(4)}.${upper(1)}${digits(5)}`;
