import { z } from 'zod';
import { paginationSchema, queryInteger } from './customers.ts';

/**
 * The webhook configuration API (docs/webhooks.md, Endpoints), behind WEBHOOKS_PREVIEW. The
 * subscription names and the URL rule are checked by the server after these shapes (one detail per
 * unknown name, field `subscriptions[i]`; the URL's reason under field `url`).
 */

export const WEBHOOK_STATUSES = ['ACTIVE', 'DEACTIVED'] as const;
export const WEBHOOK_URL_MAX = 2048;
export const WEBHOOK_SUBSCRIPTIONS_MAX = 50;

const url = z
  .string({ error: (issue) => (issue.input === undefined ? 'url is required' : 'url must be a string') })
  .min(1, 'url must not be empty')
  .max(WEBHOOK_URL_MAX, `url must be at most ${WEBHOOK_URL_MAX} characters`);

const subscriptions = z
  .array(z.string({ error: 'subscriptions entries must be strings' }), {
    error: (issue) =>
      issue.input === undefined ? 'subscriptions is required' : 'subscriptions must be an array of names',
  })
  .max(WEBHOOK_SUBSCRIPTIONS_MAX, `subscriptions must have at most ${WEBHOOK_SUBSCRIPTIONS_MAX} entries`);

/** POST /webhooks. An empty list is allowed: the webhook then receives WEBHOOK.CREATED only. */
export const webhookCreateSchema = z.strictObject({ url, subscriptions });
export type WebhookCreate = z.output<typeof webhookCreateSchema>;

export const WebhookValidationMessage = {
  updateEmpty: 'Provide url and/or subscriptions',
  /** Names the entry (cut at 64 characters: the message must not echo a whole body back). */
  unknownSubscription: (name: string) =>
    `Unknown subscription: ${name.length > 64 ? `${name.slice(0, 64)}…` : name}`,
} as const;

/** PUT /webhooks: url and/or subscriptions (the spec); subscriptions replace the stored list. */
export const webhookUpdateSchema = z
  .strictObject({ url: url.optional(), subscriptions: subscriptions.optional() })
  .refine((body) => body.url !== undefined || body.subscriptions !== undefined, {
    message: WebhookValidationMessage.updateEmpty,
  });
export type WebhookUpdate = z.output<typeof webhookUpdateSchema>;

/** The Webhook resource: the spec's fields plus why and when it was deactivated (Unix seconds). */
export const webhookSchema = z.object({
  webhookId: z.string(),
  status: z.enum(WEBHOOK_STATUSES),
  url: z.string(),
  subscriptions: z.array(z.string()),
  createdAt: z.number().int(),
  updatedAt: z.number().int(),
  disabledReason: z.string().nullable(),
  disabledAt: z.number().int().nullable(),
});
export type Webhook = z.infer<typeof webhookSchema>;

export const webhookResponseSchema = z.object({ data: webhookSchema });

/** POST /webhooks/test and the resend: the event queued for delivery. */
export const webhookTestResponseSchema = z.object({
  data: z.object({ eventId: z.string().uuid(), event: z.literal('WEBHOOK.CREATED') }),
});
export const webhookResendResponseSchema = z.object({
  data: z.object({ eventId: z.string().uuid(), deliveryId: z.string() }),
});

export const WEBHOOK_EVENT_STATUSES = ['PENDING', 'DELIVERED', 'FAILED', 'NOT_SUBSCRIBED'] as const;
export const WEBHOOK_DELIVERY_STATES = ['PENDING', 'DELIVERED', 'FAILED'] as const;

/** GET /webhooks/events: the customers list's paging, and a filter on the latest delivery's state. */
export const webhookEventsQuerySchema = z.strictObject({
  page: queryInteger('page', 1, 1_000_000_000, 1),
  limit: queryInteger('limit', 1, 100, 10),
  status: z
    .enum(WEBHOOK_DELIVERY_STATES, { error: `status must be one of ${WEBHOOK_DELIVERY_STATES.join(', ')}` })
    .optional(),
});
export type WebhookEventsQuery = z.output<typeof webhookEventsQuerySchema>;

export const webhookAttemptSchema = z.object({
  /** Unix seconds. */
  at: z.number().int(),
  httpStatus: z.number().int().nullable(),
  latencyMs: z.number().int(),
  error: z.string().nullable(),
});

export const webhookEventRecordSchema = z.object({
  eventId: z.string().uuid(),
  event: z.string(),
  createdAt: z.number().int(),
  data: z.record(z.string(), z.unknown()),
  status: z.enum(WEBHOOK_EVENT_STATUSES),
  attempts: z.array(webhookAttemptSchema),
});
export type WebhookEventRecord = z.infer<typeof webhookEventRecordSchema>;

export const webhookEventListResponseSchema = z.object({
  data: z.array(webhookEventRecordSchema),
  pagination: paginationSchema,
});

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const webhookEventIdParamsSchema = z.strictObject({
  eventId: z.string().regex(UUID_PATTERN, 'Invalid event ID format'),
});

export const WebhookMessage = {
  alreadyExists: 'A webhook already exists for this organization; change it with PUT /webhooks',
  notFound: 'Webhook not found',
  deactivated: 'Webhook is DEACTIVED; re-activate it with PUT /webhooks',
  eventNotFound: 'Event not found',
} as const;
