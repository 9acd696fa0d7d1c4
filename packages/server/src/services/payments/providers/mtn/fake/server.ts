import { randomBytes, randomInt } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { MtnCredentials, MtnProduct } from '../settings.ts';
import { UUID_V4 } from '../settings.ts';
import { type FakeMtnScenario, MTN_MAGIC_AMOUNTS, MTN_SANDBOX_NUMBERS, scenarioReason } from './scenarios.ts';

export type FakeMtnOperation =
  | 'token'
  | 'request-to-pay'
  | 'request-to-pay-status'
  | 'transfer'
  | 'transfer-status';

/** The credentials the fake accepts by default (FAKE_MTN_ENV hands them to a server). */
export const FAKE_MTN_CREDENTIALS: Readonly<Record<MtnProduct, MtnCredentials>> = {
  collection: {
    subscriptionKey: 'fake-collection-subscription-key',
    apiUser: '0b6a3a1e-7c1f-4d7e-9a53-3b1f1e0c2a11',
    apiKey: 'fake-collection-api-key',
  },
  disbursement: {
    subscriptionKey: 'fake-disbursement-subscription-key',
    apiUser: '5d2c8f4b-1e3a-4b6c-8d9e-0f1a2b3c4d22',
    apiKey: 'fake-disbursement-api-key',
  },
};

export type FakeMtnOptions = {
  /** 0 (the default) picks a free port. */
  port?: number;
  host?: string;
  /** The only X-Target-Environment accepted; default `sandbox`. */
  targetEnvironment?: string;
  /** The only currency accepted; default EUR (the sandbox's only one). */
  currency?: string;
  credentials?: Partial<Record<MtnProduct, MtnCredentials>>;
  /** `expires_in` of each token; default 3600. */
  tokenTtlSeconds?: number;
  /** From an accepted request to its outcome and callback; default 50 ms. */
  callbackDelayMs?: number;
  /** The `late-callback` delay; default 1 s. */
  lateCallbackMs?: number;
  /** The `slow` answer delay; default 3 s. */
  slowResponseMs?: number;
  /** How long `delayed` stays PENDING; default 1 s. */
  delayedMs?: number;
  /** The callback's method (the sources say PUT and POST, the newest POST); default POST. */
  callbackMethod?: 'PUT' | 'POST';
  /**
   * MTN's older callback page: a callback not answered 2xx within 2 s is sent again, `times` more
   * times `intervalMs` apart. Default none: "the callback is sent once, there is no retry".
   */
  callbackRetries?: { times: number; intervalMs: number };
};

/** One request the fake received, as it received it (tests count prompts and payouts here). */
export type FakeMtnRequest = {
  operation: FakeMtnOperation | 'unknown';
  method: string;
  path: string;
  headers: Record<string, string | undefined>;
  body: unknown;
  scenario: FakeMtnScenario | null;
  /** The HTTP status answered, or null for `reset` (and until a `slow` answer is written). */
  status: number | null;
  at: Date;
};

export type FakeMtnCallback = {
  product: MtnProduct;
  referenceId: string;
  method: 'PUT' | 'POST';
  url: string;
  body: unknown;
  /** Our route's HTTP status, or null when the call failed (`error`). */
  status: number | null;
  error: string | null;
  at: Date;
};

export type FakeMtn = {
  url: string;
  port: number;
  requests: FakeMtnRequest[];
  callbacks: FakeMtnCallback[];
  /** Requests of `operation` that were processed (a prompt sent, a payout made, a token issued). */
  processed(operation: FakeMtnOperation): number;
  /** The next request of `operation` gets `scenario`, before any magic amount or number. */
  queue(operation: FakeMtnOperation, scenario: FakeMtnScenario): void;
  /** Every token issued so far is refused from now on. */
  expireTokens(): void;
  /** Resolves once `count` callbacks have been sent (or rejects after `timeoutMs`). */
  waitForCallbacks(count: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
};

type Outcome = { status: 'SUCCESSFUL' } | { status: 'FAILED'; reason: string } | null;

type Payment = {
  product: MtnProduct;
  referenceId: string;
  body: Record<string, unknown>;
  amount: string;
  msisdn: string;
  financialTransactionId: string;
  scenario: FakeMtnScenario;
  /** What the status query says; null while PENDING. */
  outcome: Outcome;
};

type Answer = { status: number; body?: unknown };

const error = (status: number, code: string, message: string): Answer => ({
  status,
  body: { code, message },
});
/** Azure API Management's answer to a missing or wrong subscription key or token. */
const accessDenied = (what: string): Answer => ({
  status: 401,
  body: { statusCode: 401, message: `Access denied due to invalid ${what}.` },
});

/**
 * A local MTN MoMo Open API: per-product tokens, request-to-pay and transfer with their status
 * queries, MTN's checks (subscription key, Bearer, X-Target-Environment, UUID v4 X-Reference-Id,
 * 409 on a reused reference, currency, 160-character notes), 202 with an empty body, callbacks PUT or
 * POSTed to X-Callback-Url without the reference, the sandbox test numbers and the failure modes of
 * `scenarios.ts`. Control endpoints: `POST /__fake/queue` `{operation, scenario}`,
 * `POST /__fake/expire-tokens`, `GET /__fake/state`.
 */
export async function startFakeMtn(options: FakeMtnOptions = {}): Promise<FakeMtn> {
  const targetEnvironment = options.targetEnvironment ?? 'sandbox';
  const currency = options.currency ?? 'EUR';
  const credentials = { ...FAKE_MTN_CREDENTIALS, ...options.credentials };
  const callbackDelayMs = options.callbackDelayMs ?? 50;
  const lateCallbackMs = options.lateCallbackMs ?? 1000;
  const slowResponseMs = options.slowResponseMs ?? 3000;
  const delayedMs = options.delayedMs ?? 1000;
  const callbackMethod = options.callbackMethod ?? 'POST';

  const requests: FakeMtnRequest[] = [];
  const callbacks: FakeMtnCallback[] = [];
  const queued = new Map<FakeMtnOperation, FakeMtnScenario[]>();
  const tokens = new Map<string, { product: MtnProduct; expiresAt: number; usesLeft: number }>();
  const payments: Record<MtnProduct, Map<string, Payment>> = {
    collection: new Map(),
    disbursement: new Map(),
  };
  const processedCount = new Map<FakeMtnOperation, number>();
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
  const markProcessed = (operation: FakeMtnOperation) =>
    processedCount.set(operation, (processedCount.get(operation) ?? 0) + 1);

  function scenarioFor(operation: FakeMtnOperation, amount?: string, msisdn?: string): FakeMtnScenario {
    const next = queued.get(operation)?.shift();
    if (next) return next;
    const magic = amount === undefined ? undefined : MTN_MAGIC_AMOUNTS[Math.trunc(Number(amount))];
    if (magic) return magic;
    const number = msisdn === undefined ? undefined : MTN_SANDBOX_NUMBERS[msisdn];
    if (number) return operation === 'transfer' ? number.transfer : number.requestToPay;
    return 'success';
  }

  // ---- tokens ----------------------------------------------------------------------------------

  function token(req: IncomingMessage, product: MtnProduct, raw: string, request: FakeMtnRequest): Answer {
    if (req.method !== 'POST') return error(405, 'METHOD_NOT_ALLOWED', 'Method not allowed.');
    const c = credentials[product];
    if (req.headers['ocp-apim-subscription-key'] !== c.subscriptionKey)
      return accessDenied('subscription key');
    const basic = `Basic ${Buffer.from(`${c.apiUser}:${c.apiKey}`).toString('base64')}`;
    if (req.headers.authorization !== basic) return { status: 401, body: { error: 'login_failed' } };
    // MTN's common errors: a body on /token is a 400.
    if (raw !== '') return error(400, 'BAD_REQUEST', 'The token request takes no body.');
    const scenario = scenarioFor('token');
    request.scenario = scenario;
    if (scenario === 'http-500') return error(500, 'INTERNAL_PROCESSING_ERROR', 'Internal error.');
    const ttl = options.tokenTtlSeconds ?? 3600;
    const accessToken = `${b64url(24)}.${b64url(64)}.${b64url(32)}`;
    tokens.set(accessToken, {
      product,
      expiresAt: Date.now() + ttl * 1000,
      usesLeft: scenario === 'expires-early' ? 1 : Number.POSITIVE_INFINITY,
    });
    markProcessed('token');
    return { status: 200, body: { access_token: accessToken, token_type: 'access_token', expires_in: ttl } };
  }

  /** Subscription key, Bearer token of this product, X-Target-Environment: MTN's gateway checks. */
  function gatewayRefused(req: IncomingMessage, product: MtnProduct): Answer | null {
    if (req.headers['ocp-apim-subscription-key'] !== credentials[product].subscriptionKey)
      return accessDenied('subscription key');
    const match = /^Bearer (.+)$/.exec(req.headers.authorization ?? '');
    const entry = match ? tokens.get(match[1]!) : undefined;
    if (!entry || entry.product !== product || entry.expiresAt <= Date.now() || entry.usesLeft <= 0)
      return accessDenied('access token');
    entry.usesLeft -= 1;
    if (req.headers['x-target-environment'] !== targetEnvironment)
      return error(500, 'NOT_ALLOWED_TARGET_ENVIRONMENT', 'Access to target environment is forbidden.');
    return null;
  }

  // ---- request-to-pay and transfer ---------------------------------------------------------------

  function paymentRefused(req: IncomingMessage, product: MtnProduct, body: unknown): Answer | null {
    const referenceId = req.headers['x-reference-id'];
    if (typeof referenceId !== 'string' || !UUID_V4.test(referenceId))
      return error(400, 'BAD_REQUEST', 'X-Reference-Id must be a UUID version 4.');
    const callbackUrl = header(req, 'x-callback-url');
    if (callbackUrl !== undefined && !httpUrl(callbackUrl))
      return error(400, 'BAD_REQUEST', 'X-Callback-Url must be a URL when present.');
    if (!isObject(body)) return error(400, 'BAD_REQUEST', 'The body must be a JSON object.');
    const partyKey = product === 'collection' ? 'payer' : 'payee';
    const party = body[partyKey];
    if (typeof body.amount !== 'string' || !/^\d+(\.\d+)?$/.test(body.amount) || !(Number(body.amount) > 0))
      return error(400, 'BAD_REQUEST', 'amount must be a positive decimal string.');
    if (body.currency !== currency) return error(400, 'INVALID_CURRENCY', 'Currency not supported.');
    if (typeof body.externalId !== 'string' || body.externalId === '')
      return error(400, 'BAD_REQUEST', 'externalId is required.');
    if (!isObject(party) || party.partyIdType !== 'MSISDN' || !/^\d{6,15}$/.test(String(party.partyId)))
      return error(400, 'BAD_REQUEST', `${partyKey} must be an MSISDN party.`);
    for (const field of ['payerMessage', 'payeeNote']) {
      const text = body[field];
      if (text !== undefined && (typeof text !== 'string' || text.length > 160 || /['"<>&]/.test(text)))
        return error(400, 'BAD_REQUEST', `${field}: at most 160 characters, no special characters.`);
    }
    if (payments[product].has(referenceId.toLowerCase()))
      return error(409, 'RESOURCE_ALREADY_EXIST', 'Duplicated reference id. Creation of resource failed.');
    return null;
  }

  function pay(req: IncomingMessage, product: MtnProduct, body: unknown, request: FakeMtnRequest): Answer {
    const refused = paymentRefused(req, product, body);
    if (refused) return refused;
    const b = body as Record<string, unknown>;
    const operation = product === 'collection' ? 'request-to-pay' : 'transfer';
    const msisdn = String((b[product === 'collection' ? 'payer' : 'payee'] as { partyId: unknown }).partyId);
    const scenario = scenarioFor(operation, String(b.amount), msisdn);
    request.scenario = scenario;
    if (scenario === 'http-500')
      return error(500, 'INTERNAL_PROCESSING_ERROR', 'An internal error occurred while processing.');
    markProcessed(operation);
    const payment: Payment = {
      product,
      referenceId: String(req.headers['x-reference-id']).toLowerCase(),
      body: b,
      amount: String(b.amount),
      msisdn,
      financialTransactionId: String(randomInt(100_000_000, 2_000_000_000)),
      scenario,
      outcome: null,
    };
    payments[product].set(payment.referenceId, payment);
    settle(payment, header(req, 'x-callback-url'));
    if (scenario === 'http-500-accepted')
      return error(500, 'INTERNAL_PROCESSING_ERROR', 'An internal error occurred while processing.');
    return { status: 202 };
  }

  /** Reaches the scenario's outcome and sends its callback(s): none, once, twice, late. */
  function settle(payment: Payment, callbackUrl: string | undefined) {
    const { scenario } = payment;
    if (scenario === 'pending') return;
    const reason = scenarioReason(scenario);
    const final: Outcome = reason ? { status: 'FAILED', reason } : { status: 'SUCCESSFUL' };
    const queryOutcome: Outcome =
      scenario === 'contradicting-callback' ? { status: 'FAILED', reason: 'APPROVAL_REJECTED' } : final;
    const settleAfter =
      scenario === 'late-callback' ? 0 : scenario === 'delayed' ? delayedMs : callbackDelayMs;
    later(settleAfter, () => {
      payment.outcome = queryOutcome;
    });
    if (callbackUrl === undefined || scenario === 'no-callback') return;
    const callbackAfter = scenario === 'late-callback' ? lateCallbackMs : settleAfter;
    const body = statusBody(payment, final, true);
    const retries = scenario === 'callback-once' ? 0 : (options.callbackRetries?.times ?? 0);
    later(callbackAfter, () => void sendCallback(payment, callbackUrl, body, retries));
    if (scenario === 'duplicate-callback')
      later(callbackAfter + 20, () => void sendCallback(payment, callbackUrl, body, 0));
  }

  /** The status body, as the query answers it and the callback carries it (without the reference). */
  function statusBody(payment: Payment, outcome: Outcome, forCallback = false) {
    const b = payment.body;
    const partyKey = payment.product === 'collection' ? 'payer' : 'payee';
    const status = outcome?.status ?? 'PENDING';
    const reason =
      outcome?.status !== 'FAILED'
        ? {}
        : payment.scenario === 'reason-object' && !forCallback
          ? { reason: { code: outcome.reason, message: 'The payer does not have enough funds.' } }
          : { reason: outcome.reason };
    return {
      ...(status === 'SUCCESSFUL' ? { financialTransactionId: payment.financialTransactionId } : {}),
      externalId: b.externalId,
      // MTN answers "5" to "5.0": the shortest decimal.
      amount: shortestDecimal(payment.amount),
      currency: b.currency,
      [partyKey]: { partyIdType: 'MSISDN', partyId: payment.msisdn },
      payerMessage: b.payerMessage,
      payeeNote: b.payeeNote,
      status,
      ...reason,
    };
  }

  async function sendCallback(payment: Payment, url: string, body: unknown, retriesLeft: number) {
    const entry: FakeMtnCallback = {
      product: payment.product,
      referenceId: payment.referenceId,
      method: callbackMethod,
      url,
      body,
      status: null,
      error: null,
      at: new Date(),
    };
    try {
      const response = await fetch(url, {
        method: callbackMethod,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        // MTN's older page: the callback times out after 2 seconds.
        signal: AbortSignal.any([aborter.signal, AbortSignal.timeout(2000)]),
      });
      entry.status = response.status;
      await response.arrayBuffer();
    } catch (err) {
      entry.error = err instanceof Error ? err.message : String(err);
    }
    callbacks.push(entry);
    for (const wake of callbackWaiters) wake();
    const delivered = entry.status !== null && entry.status >= 200 && entry.status < 300;
    if (!delivered && retriesLeft > 0 && !aborter.signal.aborted)
      later(
        options.callbackRetries?.intervalMs ?? 1000,
        () => void sendCallback(payment, url, body, retriesLeft - 1),
      );
  }

  function status(product: MtnProduct, referenceId: string): Answer {
    const payment = payments[product].get(referenceId.toLowerCase());
    if (!payment) return error(404, 'RESOURCE_NOT_FOUND', 'Requested resource was not found.');
    markProcessed(product === 'collection' ? 'request-to-pay-status' : 'transfer-status');
    return { status: 200, body: statusBody(payment, payment.outcome) };
  }

  // ---- HTTP plumbing ---------------------------------------------------------------------------

  function route(
    method: string,
    path: string,
  ): { operation: FakeMtnOperation; product: MtnProduct; ref?: string } | null {
    const tokenMatch = /^\/(collection|disbursement)\/token\/?$/.exec(path);
    if (tokenMatch) return { operation: 'token', product: tokenMatch[1] as MtnProduct };
    if (path === '/collection/v1_0/requesttopay' && method === 'POST')
      return { operation: 'request-to-pay', product: 'collection' };
    if (path === '/disbursement/v1_0/transfer' && method === 'POST')
      return { operation: 'transfer', product: 'disbursement' };
    const statusMatch = /^\/(collection\/v1_0\/requesttopay|disbursement\/v1_0\/transfer)\/([^/]+)$/.exec(
      path,
    );
    if (statusMatch && method === 'GET') {
      const collection = statusMatch[1]!.startsWith('collection');
      return {
        operation: collection ? 'request-to-pay-status' : 'transfer-status',
        product: collection ? 'collection' : 'disbursement',
        ref: decodeURIComponent(statusMatch[2]!),
      };
    }
    return null;
  }

  function control(req: IncomingMessage, url: URL, body: unknown): Answer {
    if (url.pathname === '/__fake/queue' && req.method === 'POST') {
      const { operation, scenario } = (body ?? {}) as {
        operation?: FakeMtnOperation;
        scenario?: FakeMtnScenario;
      };
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
    return error(404, 'RESOURCE_NOT_FOUND', 'Requested resource was not found.');
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
    const matched = route(req.method ?? '', url.pathname);
    const request: FakeMtnRequest = {
      operation: matched?.operation ?? 'unknown',
      method: req.method ?? '',
      path: url.pathname,
      headers: {
        'x-reference-id': header(req, 'x-reference-id'),
        'x-target-environment': header(req, 'x-target-environment'),
        'x-callback-url': header(req, 'x-callback-url'),
      },
      body: body ?? (raw === '' ? null : raw),
      scenario: null,
      status: null,
      at: new Date(),
    };
    let answer: Answer;
    if (url.pathname.startsWith('/__fake/')) {
      answer = control(req, url, body);
    } else {
      requests.push(request);
      if (!matched) answer = error(404, 'RESOURCE_NOT_FOUND', 'Requested resource was not found.');
      else if (matched.operation === 'token') answer = token(req, matched.product, raw, request);
      else
        answer =
          gatewayRefused(req, matched.product) ??
          (matched.ref !== undefined
            ? status(matched.product, matched.ref)
            : pay(req, matched.product, body, request));
    }
    // A scenario is set only once the request passed MTN's checks, so these act on real work.
    if (request.scenario === 'reset') {
      req.socket.destroy();
      return;
    }
    if (request.scenario === 'slow') await new Promise<void>((resolve) => later(slowResponseMs, resolve));
    request.status = answer.status;
    if (res.destroyed) return;
    if (answer.body === undefined) {
      res.writeHead(answer.status, { 'content-length': '0' }).end();
      return;
    }
    res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body));
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ code: 'INTERNAL_PROCESSING_ERROR', message: String(err) }));
    });
  });
  await new Promise<void>((resolve) =>
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve),
  );
  const { port } = server.address() as AddressInfo;

  const fake: FakeMtn = {
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
          reject(new Error(`fake MTN: ${callbacks.length} of ${count} callbacks after ${timeoutMs} ms`));
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

/**
 * The environment variables a server needs to talk to a fake MTN at `fakeUrl` (with the fake's
 * default options): credentials, target environment and currency, and a fresh callback token.
 */
export function FAKE_MTN_ENV(
  fakeUrl: string,
  overrides: { targetEnvironment?: string; currency?: string; callbackToken?: string } = {},
): Record<string, string> {
  const { collection, disbursement } = FAKE_MTN_CREDENTIALS;
  return {
    MTN_BASE_URL: fakeUrl,
    MTN_TARGET_ENVIRONMENT: overrides.targetEnvironment ?? 'sandbox',
    MTN_CURRENCY: overrides.currency ?? 'EUR',
    MTN_COLLECTION_SUBSCRIPTION_KEY: collection.subscriptionKey,
    MTN_COLLECTION_API_USER: collection.apiUser,
    MTN_COLLECTION_API_KEY: collection.apiKey,
    MTN_DISBURSEMENT_SUBSCRIPTION_KEY: disbursement.subscriptionKey,
    MTN_DISBURSEMENT_API_USER: disbursement.apiUser,
    MTN_DISBURSEMENT_API_KEY: disbursement.apiKey,
    MTN_CALLBACK_TOKEN: overrides.callbackToken ?? randomBytes(24).toString('base64url'),
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
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(',') : value;
};
const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
function httpUrl(v: string): boolean {
  if (v === '' || /\s/.test(v)) return false;
  try {
    return ['http:', 'https:'].includes(new URL(v).protocol);
  } catch {
    return false;
  }
}
const b64url = (n: number) => randomBytes(n).toString('base64url');
const shortestDecimal = (text: string) => (text.includes('.') ? text.replace(/\.?0+$/, '') : text);
