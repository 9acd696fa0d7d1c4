import { randomInt } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import {
  type Answer,
  b64url,
  commonApi,
  commonControl,
  type FakeApi,
  FakeCore,
  header,
  httpUrl,
  isObject,
  type Received,
  serveFake,
  TokenStore,
} from '../kit/index.ts';
import { type FakeMtnScenario, MTN_MAGIC_AMOUNTS, MTN_SANDBOX_NUMBERS, scenarioReason } from './scenarios.ts';
import {
  accessDenied,
  error,
  FAKE_MTN_CREDENTIALS,
  type FakeMtnCredentials,
  type FakeMtnProduct,
  internalError,
  notFound,
  type Outcome,
  type Payment,
  statusBody,
  UUID_V4,
} from './wire.ts';

export { FAKE_MTN_CREDENTIALS, FAKE_MTN_ENV, type FakeMtnCredentials, type FakeMtnProduct } from './wire.ts';

export type FakeMtnOperation =
  | 'token'
  | 'request-to-pay'
  | 'request-to-pay-status'
  | 'transfer'
  | 'transfer-status';

export type FakeMtnOptions = {
  /** 0 (the default) picks a free port. */
  port?: number;
  host?: string;
  /** The only X-Target-Environment accepted; default `sandbox`. */
  targetEnvironment?: string;
  /** The only currency accepted; default EUR (the sandbox's only one). */
  currency?: string;
  credentials?: Partial<Record<FakeMtnProduct, FakeMtnCredentials>>;
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
  product: FakeMtnProduct;
  referenceId: string;
  method: 'PUT' | 'POST';
  url: string;
  body: unknown;
  /** Our route's HTTP status, or null when the call failed (`error`). */
  status: number | null;
  error: string | null;
  at: Date;
};

export type FakeMtn = FakeApi<FakeMtnOperation, FakeMtnScenario, FakeMtnRequest, FakeMtnCallback>;

type Route = { operation: FakeMtnOperation; product: FakeMtnProduct; ref?: string };

function route(method: string, path: string): Route | null {
  const tokenMatch = /^\/(collection|disbursement)\/token\/?$/.exec(path);
  if (tokenMatch) return { operation: 'token', product: tokenMatch[1] as FakeMtnProduct };
  if (path === '/collection/v1_0/requesttopay' && method === 'POST')
    return { operation: 'request-to-pay', product: 'collection' };
  if (path === '/disbursement/v1_0/transfer' && method === 'POST')
    return { operation: 'transfer', product: 'disbursement' };
  const statusMatch = /^\/(collection\/v1_0\/requesttopay|disbursement\/v1_0\/transfer)\/([^/]+)$/.exec(path);
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
  const delayedMs = options.delayedMs ?? 1000;
  const callbackMethod = options.callbackMethod ?? 'POST';

  const core = new FakeCore<FakeMtnOperation, FakeMtnScenario, FakeMtnRequest, FakeMtnCallback>('fake MTN');
  const tokens = new TokenStore<{ product: FakeMtnProduct }>();
  const payments: Record<FakeMtnProduct, Map<string, Payment>> = {
    collection: new Map(),
    disbursement: new Map(),
  };

  function scenarioFor(operation: FakeMtnOperation, amount?: string, msisdn?: string): FakeMtnScenario {
    const next = core.takeQueued(operation);
    if (next) return next;
    const magic = amount === undefined ? undefined : MTN_MAGIC_AMOUNTS[Math.trunc(Number(amount))];
    if (magic) return magic;
    const number = msisdn === undefined ? undefined : MTN_SANDBOX_NUMBERS[msisdn];
    if (number) return operation === 'transfer' ? number.transfer : number.requestToPay;
    return 'success';
  }

  // ---- tokens ----------------------------------------------------------------------------------

  function token({ req, raw }: Received, product: FakeMtnProduct, request: FakeMtnRequest): Answer {
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
    tokens.issue(accessToken, ttl, scenario === 'expires-early', { product });
    core.markProcessed('token');
    return { status: 200, body: { access_token: accessToken, token_type: 'access_token', expires_in: ttl } };
  }

  /** Subscription key, Bearer token of this product, X-Target-Environment: MTN's gateway checks. */
  function gatewayRefused(req: IncomingMessage, product: FakeMtnProduct): Answer | null {
    if (req.headers['ocp-apim-subscription-key'] !== credentials[product].subscriptionKey)
      return accessDenied('subscription key');
    if (!tokens.accepts(req.headers.authorization, (t) => t.product === product))
      return accessDenied('access token');
    if (req.headers['x-target-environment'] !== targetEnvironment)
      return error(500, 'NOT_ALLOWED_TARGET_ENVIRONMENT', 'Access to target environment is forbidden.');
    return null;
  }

  // ---- request-to-pay and transfer ---------------------------------------------------------------

  function paymentRefused(req: IncomingMessage, product: FakeMtnProduct, body: unknown): Answer | null {
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

  function pay(
    req: IncomingMessage,
    product: FakeMtnProduct,
    body: unknown,
    request: FakeMtnRequest,
  ): Answer {
    const refused = paymentRefused(req, product, body);
    if (refused) return refused;
    const b = body as Record<string, unknown>;
    const operation = product === 'collection' ? 'request-to-pay' : 'transfer';
    const msisdn = String((b[product === 'collection' ? 'payer' : 'payee'] as { partyId: unknown }).partyId);
    const scenario = scenarioFor(operation, String(b.amount), msisdn);
    request.scenario = scenario;
    if (scenario === 'http-500') return internalError();
    core.markProcessed(operation);
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
    if (scenario === 'http-500-accepted') return internalError();
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
    core.later(settleAfter, () => {
      payment.outcome = queryOutcome;
    });
    if (callbackUrl === undefined || scenario === 'no-callback') return;
    const callbackAfter = scenario === 'late-callback' ? lateCallbackMs : settleAfter;
    const body = statusBody(payment, final, true);
    const retries = scenario === 'callback-once' ? 0 : (options.callbackRetries?.times ?? 0);
    core.later(callbackAfter, () => void sendCallback(payment, callbackUrl, body, retries));
    if (scenario === 'duplicate-callback')
      core.later(callbackAfter + 20, () => void sendCallback(payment, callbackUrl, body, 0));
  }

  async function sendCallback(payment: Payment, url: string, body: unknown, retriesLeft: number) {
    const { product, referenceId } = payment;
    const entry = await core.sendCallback(
      { product, referenceId, method: callbackMethod, url, body, status: null, error: null, at: new Date() },
      callbackMethod,
      // MTN's older page: the callback times out after 2 seconds.
      2000,
    );
    const delivered = entry.status !== null && entry.status >= 200 && entry.status < 300;
    if (!delivered && retriesLeft > 0 && !core.stopped)
      core.later(
        options.callbackRetries?.intervalMs ?? 1000,
        () => void sendCallback(payment, url, body, retriesLeft - 1),
      );
  }

  function status(product: FakeMtnProduct, referenceId: string): Answer {
    const payment = payments[product].get(referenceId.toLowerCase());
    if (!payment) return notFound();
    core.markProcessed(product === 'collection' ? 'request-to-pay-status' : 'transfer-status');
    return { status: 200, body: statusBody(payment, payment.outcome) };
  }

  // ---- HTTP ------------------------------------------------------------------------------------

  function answer(received: Received, request: FakeMtnRequest): Answer {
    const matched = route(received.method, received.url.pathname);
    if (!matched) return notFound();
    if (matched.operation === 'token') return token(received, matched.product, request);
    return (
      gatewayRefused(received.req, matched.product) ??
      (matched.ref !== undefined
        ? status(matched.product, matched.ref)
        : pay(received.req, matched.product, received.body, request))
    );
  }

  const server = await serveFake(
    core,
    { host: options.host, port: options.port, slowResponseMs: options.slowResponseMs ?? 3000 },
    {
      describe: ({ req, url, method, body, raw }): FakeMtnRequest => ({
        operation: route(method, url.pathname)?.operation ?? 'unknown',
        method,
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
      }),
      answer,
      control: commonControl(core, tokens),
      controlNotFound: notFound,
      crashBody: (err) => ({ code: 'INTERNAL_PROCESSING_ERROR', message: String(err) }),
    },
  );

  return commonApi(core, tokens, server);
}
