import type { WebhookEnvelope } from '@partner-api/contract';

export type { WebhookEnvelope };

/** The organization's webhook (docs/webhooks.md, "The webhook resource"). Times are Unix seconds. */
export type Webhook = {
  webhookId: string;
  status: 'ACTIVE' | 'DEACTIVED';
  url: string;
  subscriptions: string[];
  createdAt: number;
  updatedAt: number;
  /** Why delivery stopped (a 410 from the receiver, or 5 days of failure); null while ACTIVE. */
  disabledReason: string | null;
  disabledAt: number | null;
};

export type WebhookCreate = { url: string; subscriptions: string[] };
/** At least one of the two. A PUT re-activates a DEACTIVED webhook. */
export type WebhookUpdate = { url?: string; subscriptions?: string[] };
export type WebhookResponse = { data: Webhook };
export type WebhookTestResponse = { data: { eventId: string; event: 'WEBHOOK.CREATED' } };

export type DeliveryAttempt = {
  /** Unix seconds. */
  at: number;
  httpStatus: number | null;
  latencyMs: number;
  error: string | null;
};

/** One event of GET /webhooks/events: its envelope fields, its latest delivery's status and attempts. */
export type WebhookEventRecord = {
  eventId: string;
  event: string;
  createdAt: number;
  data: Record<string, unknown>;
  status: 'PENDING' | 'DELIVERED' | 'FAILED' | 'NOT_SUBSCRIBED';
  attempts: DeliveryAttempt[];
};

export type WebhookEventListQuery = {
  page?: number;
  limit?: number;
  status?: 'PENDING' | 'DELIVERED' | 'FAILED';
};

export type WebhookEventList = {
  data: WebhookEventRecord[];
  pagination: { page: number; limit: number; total: number; totalPages: number };
};

export type WebhookResendResponse = { data: { eventId: string; deliveryId: string } };

/**
 * One message of GET /webhooks/events/stream: the envelope, and the headers of a delivery of it to
 * the stream's `forwardTo`, signed by the service. POST `body` with `headers` unchanged to that URL
 * and the receiver verifies it exactly as a real delivery.
 */
export type StreamedWebhookEvent = {
  envelope: WebhookEnvelope;
  headers: Record<string, string>;
  /** The delivery body: JSON.stringify(envelope), the bytes the Content-Digest covers. */
  body: string;
};
