import type { WebhookEnvelope } from '@partner-api/contract';
import type { RequestOptions, RequestSender } from '../request-sender.ts';
import { readServerSentEvents } from '../sse.ts';
import type { WebhookKeyResponse } from '../types.ts';
import type {
  StreamedWebhookEvent,
  WebhookCreate,
  WebhookEventList,
  WebhookEventListQuery,
  WebhookResendResponse,
  WebhookResponse,
  WebhookTestResponse,
  WebhookUpdate,
} from '../webhook-types.ts';
import { verifyWithKeys, type WebhookDelivery } from '../webhook-verify.ts';

/**
 * Where a client keeps the webhook signing key it fetched (the `webhookKeyCache` option). One cache
 * serves one server (one base URL): the spec says to cache the key by base address and key id.
 */
export interface WebhookKeyCache {
  /** The key with this id, if it is the one stored. */
  get(keyId: string): WebhookKeyResponse | undefined;
  /** The key fetched last. */
  latest(): WebhookKeyResponse | undefined;
  /** Stores the key the server publishes now; it replaces the one stored before. */
  set(key: WebhookKeyResponse): void;
  clear(): void;
}

/**
 * The default cache, one per client: the key the server publishes now and nothing else. A key id
 * names exactly one key, so the key never goes stale; a rotation changes the id, and the new key
 * replaces the old one, so the cache never grows.
 */
export class LatestWebhookKeyCache implements WebhookKeyCache {
  private key: WebhookKeyResponse | undefined;

  get size(): number {
    return this.key === undefined ? 0 : 1;
  }

  get(keyId: string): WebhookKeyResponse | undefined {
    return this.key?.keyId === keyId ? this.key : undefined;
  }

  latest(): WebhookKeyResponse | undefined {
    return this.key;
  }

  set(key: WebhookKeyResponse): void {
    this.key = key;
  }

  clear(): void {
    this.key = undefined;
  }
}

/**
 * The webhook of the organization (one per organization: the paths carry no id), its event
 * history, and GET /webhooks/key: the Ed25519 key deliveries are signed with (unauthenticated).
 * The configuration and history endpoints exist while the server runs with WEBHOOKS_PREVIEW=true.
 */
export class WebhooksResource {
  /** The organization's events: history, resend, and the live stream `partner listen` uses. */
  readonly events: WebhookEventsResource;

  /**
   * Fetches under way for callers that pass no abort signal, by their timeout and retry options: a
   * burst of webhooks with a new key id costs one request, and no caller waits on a fetch made with
   * options other than its own. The client's transport and base URL are this instance's.
   */
  private readonly inflight = new Map<string, Promise<WebhookKeyResponse>>();

  constructor(
    private readonly sender: RequestSender,
    readonly cache: WebhookKeyCache = new LatestWebhookKeyCache(),
  ) {
    this.events = new WebhookEventsResource(sender);
  }

  /**
   * Verifies a received delivery and returns its envelope, or throws a WebhookVerificationError
   * whose `reason` is 'signature', 'digest', 'timestamp', 'unknown-key' or 'body'. The key comes
   * from this client's cache; a key id it does not hold (a rotation) costs one fetch of
   * GET /webhooks/key, and a key id the server does not publish then is refused. Pass the body's
   * raw bytes and the URL the webhook is registered with.
   */
  async verify(
    delivery: WebhookDelivery,
    options?: RequestOptions & { now?: number },
  ): Promise<WebhookEnvelope> {
    return verifyWithKeys(
      delivery,
      {
        cached: (keyId) => this.cache.get(keyId),
        fetchKey: async (keyId) => {
          const fetched = await this.fetchKey(options);
          return fetched.keyId === keyId ? fetched : undefined;
        },
      },
      options?.now,
    );
  }

  /** POST /webhooks: 409 (ConflictError) when the organization already has one. */
  async create(body: WebhookCreate, options?: RequestOptions): Promise<WebhookResponse> {
    const spec = { method: 'POST', path: '/webhooks', body, auth: 'signed', idempotent: true } as const;
    return (await this.sender.request<WebhookResponse>(spec, options)).body;
  }

  /** PUT /webhooks: changes the url or the subscriptions, and re-activates a DEACTIVED webhook. */
  async update(body: WebhookUpdate, options?: RequestOptions): Promise<WebhookResponse> {
    const spec = { method: 'PUT', path: '/webhooks', body, auth: 'signed', idempotent: true } as const;
    return (await this.sender.request<WebhookResponse>(spec, options)).body;
  }

  /** GET /webhooks: NotFoundError when the organization has none. */
  async get(options?: RequestOptions): Promise<WebhookResponse> {
    const spec = { method: 'GET', path: '/webhooks', auth: 'signed' } as const;
    return (await this.sender.request<WebhookResponse>(spec, options)).body;
  }

  /** POST /webhooks/test: a fresh WEBHOOK.CREATED delivered to the webhook (the connection test). */
  async test(options?: RequestOptions): Promise<WebhookTestResponse> {
    const spec = {
      method: 'POST',
      path: '/webhooks/test',
      body: {},
      auth: 'signed',
      idempotent: true,
    } as const;
    return (await this.sender.request<WebhookTestResponse>(spec, options)).body;
  }

  /** The current key, fetched once and then served from the cache. */
  async key(options?: RequestOptions): Promise<WebhookKeyResponse> {
    return this.cache.latest() ?? this.fetchKey(options);
  }

  /**
   * The key a webhook names: from the cache, or fetched again when the id is unknown (a rotation
   * changes the id). Undefined when the server does not publish that id: reject that webhook.
   */
  async keyFor(keyId: string, options?: RequestOptions): Promise<WebhookKeyResponse | undefined> {
    const cached = this.cache.get(keyId);
    if (cached) return cached;
    const fetched = await this.fetchKey(options);
    return fetched.keyId === keyId ? fetched : undefined;
  }

  /** Forgets the cached key. */
  clearCache(): void {
    this.cache.clear();
  }

  private fetchKey(options: RequestOptions = {}): Promise<WebhookKeyResponse> {
    // A caller's own signal aborts only its own fetch.
    if (options.signal) return this.fetchOnce(options);
    const shareKey = `${options.timeoutMs} ${options.maxRetries}`;
    let inflight = this.inflight.get(shareKey);
    if (!inflight) {
      inflight = this.fetchOnce(options).finally(() => this.inflight.delete(shareKey));
      this.inflight.set(shareKey, inflight);
    }
    return inflight;
  }

  private async fetchOnce(options: RequestOptions): Promise<WebhookKeyResponse> {
    const spec = { method: 'GET', path: '/webhooks/key', auth: 'none' } as const;
    const { body } = await this.sender.request<WebhookKeyResponse>(spec, options);
    this.cache.set(body);
    return body;
  }
}

/** GET /webhooks/events, its resend, and the live stream. */
export class WebhookEventsResource {
  constructor(private readonly sender: RequestSender) {}

  /** One page of the last 30 days, newest first; `status: 'FAILED'` lists the failed ones. */
  async list(query: WebhookEventListQuery = {}, options?: RequestOptions): Promise<WebhookEventList> {
    const spec = { method: 'GET', path: '/webhooks/events', query, auth: 'signed' } as const;
    return (await this.sender.request<WebhookEventList>(spec, options)).body;
  }

  /** A new delivery of the same event (same eventId) to the webhook as it is now. */
  async resend(eventId: string, options?: RequestOptions): Promise<WebhookResendResponse> {
    const spec = {
      method: 'POST',
      path: `/webhooks/events/${encodeURIComponent(eventId)}/resend`,
      body: {},
      auth: 'signed',
      idempotent: true,
    } as const;
    return (await this.sender.request<WebhookResendResponse>(spec, options)).body;
  }

  /**
   * GET /webhooks/events/stream: the organization's events from the moment of connection, each
   * with the headers of a delivery to `forwardTo` signed by the service. Ends when the server ends
   * the stream (it does at the token's expiry and when it shuts down): call it again to go on.
   */
  async *stream(opts: {
    forwardTo: string;
    signal?: AbortSignal;
    /** Called once the server accepted the stream, before any event. */
    onOpen?: () => void;
  }): AsyncGenerator<StreamedWebhookEvent> {
    const spec = {
      method: 'GET',
      path: '/webhooks/events/stream',
      query: { forwardTo: opts.forwardTo },
      auth: 'signed',
    } as const;
    const response = await this.sender.open(spec, { signal: opts.signal });
    opts.onOpen?.();
    if (!response.body) return;
    for await (const message of readServerSentEvents(response.body)) {
      if (message.event !== 'webhook') continue;
      const parsed = JSON.parse(message.data) as Omit<StreamedWebhookEvent, 'body'>;
      yield { ...parsed, body: JSON.stringify(parsed.envelope) };
    }
  }
}
