import { createPrivateKey, type KeyObject } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { readFileSync } from 'node:fs';
import { signPartnerRequest, type TokenResponse } from '@partner-api/contract';
import {
  type AttemptToAuthenticate,
  type RequestEvent,
  RequestSender,
  type ResponseEvent,
} from './request-sender.ts';
import { AccountsResource } from './resources/accounts.ts';
import { CustomersResource } from './resources/customers.ts';
import { InstrumentsResource, InvestmentTypesResource } from './resources/instruments.ts';
import { ReportsResource, TransactionsResource } from './resources/ledger.ts';
import { OAuthResource } from './resources/oauth.ts';
import { PaymentStatusResource } from './resources/payment-status.ts';
import { RequestsResource } from './resources/requests.ts';
import { UssdResource } from './resources/ussd.ts';
import { type WebhookKeyCache, WebhooksResource } from './resources/webhooks.ts';
import { TokenManager, type TokenStore } from './token-manager.ts';

export const SDK_VERSION = '0.1.0';
export const DEFAULT_SANDBOX_FILE = './data/sandbox-credentials.json';

export type PartnerClientOptions = {
  /** Scheme and authority the server was configured with (its PUBLIC_BASE_URL), e.g. http://localhost:8080; /v1 is appended. */
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  /** The Ed25519 private key registered for the credential: PKCS#8 PEM or a KeyObject. */
  privateKey: string | KeyObject;
  /** The `keyid` the key was registered under. */
  keyId: string;
  /** Retries per call after the first attempt (default 3). */
  maxRetries?: number;
  /** Per attempt (default 30 s). */
  timeoutMs?: number;
  fetch?: typeof fetch;
  /** Keeps the token across processes (default: in memory only). */
  tokenStore?: TokenStore;
  /** Where this client keeps the webhook signing key (default: its own, holding the current key only). */
  webhookKeyCache?: WebhookKeyCache;
};

/** DATA_DIR/sandbox-credentials.json, written by a sandbox server on its first start. */
export type SandboxCredentials = {
  baseUrl: string;
  organizationId?: string;
  clientId: string;
  clientSecret: string;
  keyId: string;
  privateKey: string;
  customerIds: string[];
};

export function readSandboxFile(path: string = DEFAULT_SANDBOX_FILE): SandboxCredentials {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    throw new Error(`cannot read ${path}: start a sandbox server once (npm start) to create it`);
  }
  return JSON.parse(text) as SandboxCredentials;
}

type Events = { request: [RequestEvent]; response: [ResponseEvent] };

/**
 * The partner API client. Every call gets a token (cached until a minute before it expires), is
 * signed afresh per attempt (RFC 9421, Ed25519, with Content-Digest), carries one idempotency key
 * when it mutates, and is retried on 429 (after Retry-After), 409, 5xx and network errors.
 */
export class PartnerClient {
  readonly baseUrl: string;
  /** baseUrl + /v1 */
  readonly apiBase: string;
  readonly clientId: string;
  readonly keyId: string;

  readonly oauth: OAuthResource;
  readonly customers: CustomersResource;
  readonly paymentStatus: PaymentStatusResource;
  readonly webhooks: WebhooksResource;
  readonly ussd: UssdResource;
  /** Investments (preview: a server with INVESTMENTS_PREVIEW=true; otherwise each answers 404). */
  readonly investmentTypes: InvestmentTypesResource;
  readonly instruments: InstrumentsResource;
  readonly accounts: AccountsResource;
  /** Orders: buy by amount, sell by units. */
  readonly requests: RequestsResource;
  /** Ledger movements (money and units), not payment status: see paymentStatus for that. */
  readonly transactions: TransactionsResource;
  readonly reports: ReportsResource;

  private readonly events = new EventEmitter<Events>();

  constructor(options: PartnerClientOptions) {
    for (const field of ['baseUrl', 'clientId', 'clientSecret', 'privateKey', 'keyId'] as const) {
      if (!options[field]) throw new TypeError(`PartnerClient: ${field} is required`);
    }
    checkBaseUrl(options.baseUrl);
    this.baseUrl = options.baseUrl.replace(/\/+$/, '').replace(/\/v1$/, '');
    this.apiBase = `${this.baseUrl}/v1`;
    this.clientId = options.clientId;
    this.keyId = options.keyId;
    const privateKey = toPrivateKey(options.privateKey);
    const { clientId, clientSecret, keyId } = options;

    let sender: RequestSender | undefined;
    const tokens = new TokenManager(async () => {
      const spec = {
        method: 'POST',
        path: '/oauth/token',
        body: { clientId, clientSecret },
        auth: 'none',
      } as const;
      return (await sender!.request<TokenResponse>(spec)).body;
    }, options.tokenStore);
    sender = new RequestSender({
      apiBase: this.apiBase,
      fetch: options.fetch ?? globalThis.fetch,
      maxRetries: options.maxRetries ?? 3,
      timeoutMs: options.timeoutMs ?? 30_000,
      userAgent: `partner-api-sdk/${SDK_VERSION} node/${process.version}`,
      tokens,
      authenticate: (attempt) => authenticateAttempt(attempt, { clientId, keyId, privateKey }),
      onRequest: (event) => this.events.emit('request', event),
      onResponse: (event) => this.events.emit('response', event),
    });

    this.oauth = new OAuthResource(sender, tokens);
    this.customers = new CustomersResource(sender);
    this.paymentStatus = new PaymentStatusResource(sender);
    this.webhooks = new WebhooksResource(sender, options.webhookKeyCache);
    this.ussd = new UssdResource(sender);
    this.investmentTypes = new InvestmentTypesResource(sender);
    this.instruments = new InstrumentsResource(sender);
    this.accounts = new AccountsResource(sender);
    this.requests = new RequestsResource(sender);
    this.transactions = new TransactionsResource(sender);
    this.reports = new ReportsResource(sender);
  }

  /** A client for the credentials a sandbox server wrote (default ./data/sandbox-credentials.json). */
  static fromSandboxFile(
    path: string = DEFAULT_SANDBOX_FILE,
    overrides: Partial<PartnerClientOptions> = {},
  ): PartnerClient {
    const { baseUrl, clientId, clientSecret, keyId, privateKey } = readSandboxFile(path);
    return new PartnerClient({ baseUrl, clientId, clientSecret, keyId, privateKey, ...overrides });
  }

  /** 'request' before every attempt, 'response' after it (retries included): logging and metrics. */
  on<E extends keyof Events>(event: E, listener: (...args: Events[E]) => void): this {
    this.events.on(event, listener as never);
    return this;
  }

  off<E extends keyof Events>(event: E, listener: (...args: Events[E]) => void): this {
    this.events.off(event, listener as never);
    return this;
  }
}

const NOT_ED25519 =
  'PartnerClient: privateKey must be an Ed25519 private key (a PKCS#8 PEM string or a KeyObject)';

function toPrivateKey(key: string | KeyObject): KeyObject {
  let object: KeyObject;
  try {
    object = typeof key === 'string' ? createPrivateKey(key) : key;
  } catch {
    // OpenSSL's own words ("DECODER routines::unsupported") tell an integrator nothing.
    throw new TypeError(NOT_ED25519);
  }
  if (object.type !== 'private' || object.asymmetricKeyType !== 'ed25519') throw new TypeError(NOT_ED25519);
  return object;
}

/** The service's address, http or https: `localhost:8080` would otherwise fail at the first call. */
function checkBaseUrl(baseUrl: string): void {
  let protocol: string | undefined;
  try {
    protocol = new URL(baseUrl).protocol;
  } catch {}
  if (protocol !== 'http:' && protocol !== 'https:')
    throw new TypeError(
      `PartnerClient: baseUrl must be an http:// or https:// URL (got ${JSON.stringify(baseUrl)})`,
    );
}

/**
 * The per-attempt authenticator: bearer token, x-client-id, JSON content type, the idempotency key,
 * then Content-Digest and a signature with a fresh `created` (signPartnerRequest leaves the body
 * headers out of POST /oauth/revoke, as the spec requires).
 */
function authenticateAttempt(
  attempt: AttemptToAuthenticate,
  credential: { clientId: string; keyId: string; privateKey: KeyObject },
): Record<string, string> {
  const headers: Record<string, string> = {
    authorization: `Bearer ${attempt.token}`,
    'x-client-id': credential.clientId,
  };
  if (attempt.body !== undefined) headers['content-type'] = 'application/json';
  if (attempt.idempotencyKey !== undefined) headers['x-idempotency-key'] = attempt.idempotencyKey;
  return signPartnerRequest({
    method: attempt.method,
    url: attempt.url,
    headers,
    body: attempt.body,
    keyId: credential.keyId,
    privateKey: credential.privateKey,
  });
}
