import type { RequestOptions, RequestSender } from '../request-sender.ts';
import type { WebhookKeyResponse } from '../types.ts';

/**
 * Keys are public and a key id names exactly one key, so a key fetched once is good forever: the
 * cache is shared by every client in the process, keyed by API base and key id (spec, GET /webhooks/key).
 */
const keysByBaseAndId = new Map<string, WebhookKeyResponse>();
const currentKeyIdByBase = new Map<string, string>();
/** One fetch at a time per base: a burst of webhooks with a new key id costs one request. */
const inflightByBase = new Map<string, Promise<WebhookKeyResponse>>();

const cacheKey = (apiBase: string, keyId: string) => `${apiBase} ${keyId}`;

/** GET /webhooks/key: the Ed25519 key outbound webhooks are signed with (unauthenticated). */
export class WebhooksResource {
  constructor(
    private readonly sender: RequestSender,
    private readonly apiBase: string,
  ) {}

  /** The current key, fetched once and then served from the cache. */
  async key(options?: RequestOptions): Promise<WebhookKeyResponse> {
    const current = currentKeyIdByBase.get(this.apiBase);
    const cached = current === undefined ? undefined : keysByBaseAndId.get(cacheKey(this.apiBase, current));
    return cached ?? this.fetchKey(options);
  }

  /**
   * The key a webhook names: from the cache, or fetched again when the id is unknown (a rotation
   * changes the id). Undefined when the server does not publish that id: reject that webhook.
   */
  async keyFor(keyId: string, options?: RequestOptions): Promise<WebhookKeyResponse | undefined> {
    const cached = keysByBaseAndId.get(cacheKey(this.apiBase, keyId));
    if (cached) return cached;
    const fetched = await this.fetchKey(options);
    return fetched.keyId === keyId ? fetched : undefined;
  }

  /** Forgets every cached key of this API base. */
  clearCache(): void {
    for (const key of keysByBaseAndId.keys())
      if (key.startsWith(`${this.apiBase} `)) keysByBaseAndId.delete(key);
    currentKeyIdByBase.delete(this.apiBase);
  }

  private fetchKey(options?: RequestOptions): Promise<WebhookKeyResponse> {
    let inflight = inflightByBase.get(this.apiBase);
    if (!inflight) {
      inflight = (async () => {
        try {
          const spec = { method: 'GET', path: '/webhooks/key', auth: 'none' } as const;
          const { body } = await this.sender.request<WebhookKeyResponse>(spec, options);
          keysByBaseAndId.set(cacheKey(this.apiBase, body.keyId), body);
          currentKeyIdByBase.set(this.apiBase, body.keyId);
          return body;
        } finally {
          inflightByBase.delete(this.apiBase);
        }
      })();
      inflightByBase.set(this.apiBase, inflight);
    }
    return inflight;
  }
}
