import type {
  Webhook,
  WebhookCreate,
  WebhookEnvelope,
  WebhookEventRecord,
  WebhookUpdate,
  webhookEventListResponseSchema,
  webhookResendResponseSchema,
  webhookTestResponseSchema,
} from '@partner-api/contract';
import type { z } from 'zod';

/**
 * The webhook resource and its history, as the contract's schemas define them (docs/webhooks.md,
 * Endpoints). Times are Unix seconds.
 */
export type { Webhook, WebhookCreate, WebhookEnvelope, WebhookEventRecord, WebhookUpdate };
export type WebhookResponse = { data: Webhook };
export type WebhookTestResponse = z.infer<typeof webhookTestResponseSchema>;
export type WebhookResendResponse = z.infer<typeof webhookResendResponseSchema>;
export type WebhookEventList = z.infer<typeof webhookEventListResponseSchema>;

/** GET /webhooks/events query: page 1 and limit 10 by default (limit at most 100). */
export type WebhookEventListQuery = {
  page?: number;
  limit?: number;
  /** The latest delivery's state; FAILED lists what needs attention. */
  status?: 'PENDING' | 'DELIVERED' | 'FAILED';
};

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
