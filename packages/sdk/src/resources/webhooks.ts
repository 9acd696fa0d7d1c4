import type { RequestOptions, RequestSender } from '../request-sender.ts';
import type { WebhookKeyResponse } from '../types.ts';

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

/** GET /webhooks/key: the Ed25519 key outbound webhooks are signed with (unauthenticated). */
export class WebhooksResource {
  /**
   * Fetches under way for callers that pass no abort signal, by their timeout and retry options: a
   * burst of webhooks with a new key id costs one request, and no caller waits on a fetch made with
   * options other than its own. The client's transport and base URL are this instance's.
   */
  private readonly inflight = new Map<string, Promise<WebhookKeyResponse>>();

  constructor(
    private readonly sender: RequestSender,
    readonly cache: WebhookKeyCache = new LatestWebhookKeyCache(),
  ) {}

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
