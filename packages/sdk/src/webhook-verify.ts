import { createPublicKey, type KeyObject } from 'node:crypto';
import { type ResolvedKey, verifyWebhookDelivery, type WebhookEnvelope } from '@partner-api/contract';
import type { WebhookKeyResponse } from './types.ts';

/** What went wrong with a received delivery, coarsely: what a receiver logs and counts. */
export type WebhookVerificationReason = 'signature' | 'digest' | 'timestamp' | 'unknown-key' | 'body';

/**
 * A delivery that must be rejected (answer it 400 or 401, never 2xx). `reason` says which check
 * failed; `message` is the verifier's own words ('created too old', 'bad signature', ...).
 */
export class WebhookVerificationError extends Error {
  override name = 'WebhookVerificationError';
  constructor(
    readonly reason: WebhookVerificationReason,
    message: string,
    /** The key id the signature names, when it names one. */
    readonly keyId?: string,
  ) {
    super(message);
  }
}

/** What a receiver hands over: the request as it arrived, with the body's exact bytes. */
export type WebhookDelivery = {
  method: string;
  /** The full URL the delivery was sent to, as registered (scheme, host, path and query). */
  url: string;
  headers: Record<string, string | string[] | undefined>;
  /** The raw body: a parsed-and-restringified JSON body no longer matches its Content-Digest. */
  body: string | Buffer | Uint8Array;
};

const TIME_REASONS = new Set([
  'created too old',
  'not yet valid',
  'expired',
  'validity window too long',
  'webhook-timestamp differs from the signature',
]);

function reasonOf(message: string): WebhookVerificationReason {
  if (message === 'unknown keyid') return 'unknown-key';
  if (message === 'content digest does not match the body') return 'digest';
  if (TIME_REASONS.has(message)) return 'timestamp';
  return 'signature';
}

/** Parsed public keys by the response object they came from (a rotation brings a new object). */
const publicKeys = new WeakMap<WebhookKeyResponse, KeyObject>();
function resolved(key: WebhookKeyResponse): ResolvedKey {
  let publicKey = publicKeys.get(key);
  if (!publicKey) {
    publicKey = createPublicKey(key.publicKey);
    publicKeys.set(key, publicKey);
  }
  return { publicKey, alg: 'ed25519' };
}

/**
 * Verifies one delivery (docs/webhooks.md, "Verifying a delivery"): the RFC 9421 signature with the
 * components, window and key the recipe fixes, the body's Content-Digest, and Webhook-Timestamp. The
 * key comes from `cached` (no request); only when the signature names a key id it does not hold is
 * `fetchKey` asked, once, and a key id still unknown after that is refused. A signature that fails
 * any other check first never causes a fetch.
 */
export async function verifyWithKeys(
  delivery: WebhookDelivery,
  keys: {
    cached(keyId: string): WebhookKeyResponse | undefined;
    fetchKey(keyId: string): Promise<WebhookKeyResponse | undefined>;
  },
  now?: number,
): Promise<WebhookEnvelope> {
  const body = typeof delivery.body === 'string' ? delivery.body : Buffer.from(delivery.body);
  let named: string | undefined;
  const check = (lookup: (keyId: string) => WebhookKeyResponse | undefined) =>
    verifyWebhookDelivery({
      method: delivery.method,
      url: delivery.url,
      headers: delivery.headers,
      body,
      now,
      resolveKey: (keyId) => {
        named = keyId;
        const key = lookup(keyId);
        return key ? resolved(key) : undefined;
      },
    });

  let result = check((keyId) => keys.cached(keyId));
  if (!result.ok && result.reason === 'unknown keyid' && named !== undefined) {
    const fetched = await keys.fetchKey(named);
    result = check((keyId) => (fetched?.keyId === keyId ? fetched : undefined));
  }
  if (!result.ok) throw new WebhookVerificationError(reasonOf(result.reason), result.reason, named);

  let envelope: unknown;
  try {
    envelope = JSON.parse(typeof body === 'string' ? body : body.toString('utf8'));
  } catch {
    throw new WebhookVerificationError('body', 'the body is not JSON', named);
  }
  if (!isEnvelope(envelope)) {
    throw new WebhookVerificationError('body', 'the body is not an event envelope', named);
  }
  if (envelope.eventId !== headerValue(delivery.headers, 'webhook-id')) {
    throw new WebhookVerificationError('body', "the envelope's eventId differs from Webhook-Id", named);
  }
  return envelope;
}

function headerValue(headers: WebhookDelivery['headers'], name: string): string | undefined {
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === name) return Array.isArray(value) ? value.join(', ') : value;
  }
  return undefined;
}

function isEnvelope(value: unknown): value is WebhookEnvelope {
  if (!value || typeof value !== 'object') return false;
  const v = value as Record<string, unknown>;
  return (
    typeof v.eventId === 'string' &&
    typeof v.event === 'string' &&
    typeof v.createdAt === 'number' &&
    typeof v.data === 'object' &&
    v.data !== null
  );
}
