import type { KeyObject } from 'node:crypto';
import { computeContentDigest, verifyContentDigest } from './digest.ts';
import { type ResolvedKey, signRequest, type VerifyResult, verifyRequestSignature } from './signature.ts';

/**
 * Outbound webhooks (spec, Events; docs/webhooks.md). The names, the rules by which subscriptions
 * combine, and the delivery signature recipe: shared by the server that signs and the SDK that
 * verifies, so that the two cannot drift.
 */

/** Top-level subscriptions: every event of one domain (spec, Subscriptions). */
export const WEBHOOK_DOMAINS = [
  'ACCOUNT',
  'ASSET',
  'AUTH',
  'CUSTOMER',
  'INSTRUMENT',
  'INVESTMENT_TYPE',
  'PORTFOLIO',
  'REQUEST',
  'REPORT',
  'TRANSACTION',
  'WEBHOOK',
] as const;
export type WebhookDomain = (typeof WEBHOOK_DOMAINS)[number];

/** Low-level subscriptions, exactly the spec's list. */
export const WEBHOOK_LOW_LEVEL_SUBSCRIPTIONS = [
  'ACCOUNT.CREATED',
  'ACCOUNT.UPDATED',
  'ASSET.CREATED',
  'ASSET.UPDATED',
  'AUTH.CREATED',
  'AUTH.DELETED',
  'CUSTOMER.CREATED',
  'CUSTOMER.UPDATED',
  'INSTRUMENT.CREATED',
  'INSTRUMENT.UPDATED',
  'INVESTMENT_TYPE.CREATED',
  'INVESTMENT_TYPE.UPDATED',
  'PORTFOLIO.CREATED',
  'PORTFOLIO.UPDATED',
  'REQUEST.CREATED',
  'REQUEST.UPDATED',
  'WEBHOOK.CREATED',
  'WEBHOOK.UPDATED',
] as const;

export const WEBHOOK_SUBSCRIPTIONS: readonly string[] = [
  'ALL',
  ...WEBHOOK_DOMAINS,
  ...WEBHOOK_LOW_LEVEL_SUBSCRIPTIONS,
];

/**
 * The events this service emits. TRANSACTION.* and REPORT.CREATED are ours (the spec names no
 * low-level transaction or report events): they are reached through their domain and ALL, not by name.
 */
export const WEBHOOK_EVENTS = [
  'ACCOUNT.CREATED',
  'ACCOUNT.UPDATED',
  'ASSET.CREATED',
  'ASSET.UPDATED',
  'AUTH.CREATED',
  'AUTH.DELETED',
  'CUSTOMER.CREATED',
  'CUSTOMER.UPDATED',
  'INSTRUMENT.CREATED',
  'INSTRUMENT.UPDATED',
  'PORTFOLIO.CREATED',
  'PORTFOLIO.UPDATED',
  'REQUEST.CREATED',
  'REQUEST.UPDATED',
  'REPORT.CREATED',
  'TRANSACTION.CREATED',
  'TRANSACTION.UPDATED',
  'WEBHOOK.CREATED',
  'WEBHOOK.UPDATED',
] as const;
export type WebhookEventName = (typeof WEBHOOK_EVENTS)[number];

/** The domain of an event name: `CUSTOMER.CREATED` → `CUSTOMER`. */
export function eventDomain(event: string): string {
  const dot = event.indexOf('.');
  return dot === -1 ? event : event.slice(0, dot);
}

/**
 * Whether a webhook with these subscriptions receives the event. Subscriptions are a union: ALL
 * covers everything, a domain covers its events, a low-level name covers itself. Every combination
 * the spec lists follows (high + low = the domain plus that event; ALL + anything = ALL).
 */
export function subscriptionsCover(subscriptions: readonly string[], event: string): boolean {
  return (
    subscriptions.includes('ALL') ||
    subscriptions.includes(eventDomain(event)) ||
    subscriptions.includes(event)
  );
}

/** The names a subscription list matches, in SQL: `subscriptions && array[...]`. */
export function subscriptionKeysFor(event: string): string[] {
  return ['ALL', eventDomain(event), event];
}

/** The unknown entries of a subscription list, with their index (a validation error per entry). */
export function unknownSubscriptions(subscriptions: readonly string[]): { index: number; name: string }[] {
  return subscriptions.flatMap((name, index) =>
    WEBHOOK_SUBSCRIPTIONS.includes(name) ? [] : [{ index, name }],
  );
}

/**
 * What a webhook stores: the names as given, duplicates dropped, and WEBHOOK.CREATED always
 * present by name (spec: creating a webhook subscribes it to WEBHOOK.CREATED, the connection test).
 */
export function normalizeSubscriptions(subscriptions: readonly string[]): string[] {
  const out = [...new Set(subscriptions)];
  if (!out.includes('WEBHOOK.CREATED')) out.push('WEBHOOK.CREATED');
  return out;
}

/** The envelope every delivery carries as its body (spec, Event envelope). */
export type WebhookEnvelope<Data = Record<string, unknown>> = {
  eventId: string;
  event: string;
  /** Unix seconds. */
  createdAt: number;
  data: Data;
};

/** Components every delivery signature covers (docs/webhooks.md, Signature). */
export const WEBHOOK_SIGNED_COMPONENTS = [
  '@method',
  '@target-uri',
  'content-type',
  'content-digest',
  'webhook-id',
  'webhook-timestamp',
] as const;

/** Label of the delivery signature in Signature-Input and Signature. */
export const WEBHOOK_SIGNATURE_LABEL = 'webhook';
/** A delivery signature is valid for this long after `created`; receivers accept this window. */
export const WEBHOOK_SIGNATURE_VALIDITY_SECONDS = 300;

/**
 * The headers of one delivery attempt: signed afresh each time, so `created` is the attempt's time
 * while Webhook-Id stays the eventId across every attempt and resend.
 */
export function signWebhookDelivery(opts: {
  url: string;
  body: string;
  eventId: string;
  keyId: string;
  privateKey: KeyObject | string;
  /** Unix seconds; defaults to now. */
  now?: number;
}): Record<string, string> {
  const created = opts.now ?? Math.floor(Date.now() / 1000);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'content-digest': computeContentDigest(opts.body, 'sha-512'),
    'webhook-id': opts.eventId,
    'webhook-timestamp': String(created),
  };
  const { signatureInput, signature } = signRequest({
    req: { method: 'POST', targetUri: opts.url, headers },
    components: WEBHOOK_SIGNED_COMPONENTS,
    keyId: opts.keyId,
    privateKey: opts.privateKey,
    created,
    expires: created + WEBHOOK_SIGNATURE_VALIDITY_SECONDS,
    label: WEBHOOK_SIGNATURE_LABEL,
  });
  return { ...headers, 'signature-input': signatureInput, signature };
}

/**
 * Checks one received delivery: the signature (required components, window, key), the digest of
 * the raw body, and that Webhook-Timestamp equals the signature's `created`. `resolveKey` returns
 * the published key for a key id, or undefined when it is unknown (the caller re-fetches then).
 */
export function verifyWebhookDelivery(opts: {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body: string | Buffer;
  resolveKey: (keyId: string) => ResolvedKey | undefined;
  now?: number;
}): VerifyResult {
  const headers: Record<string, string | string[] | undefined> = {};
  for (const [name, value] of Object.entries(opts.headers)) headers[name.toLowerCase()] = value;
  const signed = verifyRequestSignature({
    req: { method: opts.method.toUpperCase(), targetUri: opts.url, headers },
    signatureInputHeader: headers['signature-input'],
    signatureHeader: headers.signature,
    resolveKey: opts.resolveKey,
    now: opts.now,
    requiredComponents: WEBHOOK_SIGNED_COMPONENTS,
    maxValiditySeconds: WEBHOOK_SIGNATURE_VALIDITY_SECONDS,
  });
  if (!signed.ok) return signed;
  const digest = verifyContentDigest(
    typeof headers['content-digest'] === 'string' ? headers['content-digest'] : undefined,
    opts.body,
  );
  if (!digest.ok) return { ok: false, reason: 'content digest does not match the body' };
  const input = String(headers['signature-input'] ?? '');
  const created = /;created=(\d+)/.exec(input)?.[1];
  if (created === undefined || headers['webhook-timestamp'] !== created) {
    return { ok: false, reason: 'webhook-timestamp differs from the signature' };
  }
  return signed;
}
