import {
  ErrorLabel,
  WebhookMessage,
  WebhookValidationMessage,
  webhookAttemptSchema,
  webhookEventListResponseSchema,
  webhookEventRecordSchema,
  webhookResendResponseSchema,
  webhookResponseSchema,
  webhookSchema,
  webhookTestResponseSchema,
} from '@partner-api/contract';
import type { z } from 'zod';
import {
  badRequest,
  type ErrorResponseSpec,
  idempotencyKeyNotUuid,
  idempotencyKeyRequired,
  notFound,
  unparsedBodyVariant,
  validationVariant,
  variant,
  withMessage,
} from './errors.ts';
import type { OperationSpec } from './operations.ts';

/**
 * The webhook configuration API (docs/webhooks.md, Endpoints): in the document only when
 * WEBHOOKS_PREVIEW is on, each operation marked `x-preview: true` and introduced as a preview.
 */

/** Response schemas the preview operations share; named only in a document that has them. */
export const PREVIEW_SHARED_SCHEMAS: [string, z.ZodType][] = [
  ['Webhook', webhookSchema],
  ['WebhookEventRecord', webhookEventRecordSchema],
  ['WebhookAttempt', webhookAttemptSchema],
];

const webhookNotFound = notFound('The organization has no webhook.', [
  variant('webhookNotFound', 'No webhook', withMessage(ErrorLabel.notFound, WebhookMessage.notFound)),
]);
const deactivated = variant(
  'webhookDeactivated',
  'The webhook is DEACTIVED',
  withMessage(ErrorLabel.conflict, WebhookMessage.deactivated),
);
const conflict = (description: string, variants: ReturnType<typeof variant>[]): ErrorResponseSpec => ({
  status: 409,
  description,
  variants,
});
const bodyErrors = [
  validationVariant('urlNotHttps', 'Not an https URL', 'url', 'url must use https'),
  validationVariant(
    'urlIpLiteral',
    'An IP address instead of a host name',
    'url',
    'url host must be a DNS name, not an IP address',
  ),
  validationVariant(
    'urlNotPublic',
    'A host resolving to a private address',
    'url',
    'url host resolves to a non-public address',
  ),
  validationVariant(
    'unknownSubscription',
    'An unknown subscription name',
    'subscriptions[1]',
    WebhookValidationMessage.unknownSubscription('CUSTOMERS'),
  ),
  unparsedBodyVariant,
  idempotencyKeyRequired,
  idempotencyKeyNotUuid,
];
const accepted = (description: string, name: string, schema: z.ZodType) => ({
  status: 202,
  description,
  name,
  schema,
});
const webhookResponse = (status: number, description: string) => ({
  status,
  description,
  name: 'WebhookResponse',
  schema: webhookResponseSchema,
});

export const PREVIEW_OPERATIONS: Record<string, OperationSpec> = {
  'POST /v1/webhooks': {
    operationId: 'createWebhook',
    summary: 'Register the organization’s webhook',
    description:
      'One webhook per organization. `url`: https, a DNS host name whose addresses are all public, no ' +
      'userinfo; stored as normalised by the URL parser. `subscriptions`: names from the spec (ALL, a ' +
      'domain, or DOMAIN.ACTION); WEBHOOK.CREATED is always added, and an empty list receives only that. ' +
      'The new webhook immediately gets a WEBHOOK.CREATED delivery: the connection test.',
    tag: 'Webhooks',
    auth: 'signed',
    idempotent: true,
    preview: true,
    requestName: 'WebhookCreate',
    successes: [webhookResponse(201, 'Webhook created')],
    errors: [
      badRequest('Validation failed, or X-Idempotency-Key missing or not a UUID.', bodyErrors),
      conflict('The organization already has a webhook.', [
        variant(
          'webhookExists',
          'Already registered',
          withMessage(ErrorLabel.conflict, WebhookMessage.alreadyExists),
        ),
      ]),
    ],
  },
  'PUT /v1/webhooks': {
    operationId: 'updateWebhook',
    summary: 'Change the webhook’s URL and/or subscriptions',
    description:
      '`url` and/or `subscriptions` (which replace the stored list). Re-activates a DEACTIVED webhook and ' +
      'clears its reason. Emits WEBHOOK.UPDATED.',
    tag: 'Webhooks',
    auth: 'signed',
    idempotent: true,
    preview: true,
    requestName: 'WebhookUpdate',
    successes: [webhookResponse(200, 'Webhook updated')],
    errors: [
      badRequest('Validation failed, or X-Idempotency-Key missing or not a UUID.', [
        validationVariant('nothingToChange', 'Neither field', '', WebhookValidationMessage.updateEmpty),
        ...bodyErrors,
      ]),
      webhookNotFound,
    ],
  },
  'GET /v1/webhooks': {
    operationId: 'getWebhook',
    summary: 'The organization’s webhook',
    description: 'With `disabledReason` and `disabledAt` when deliveries disabled it (DEACTIVED).',
    tag: 'Webhooks',
    auth: 'signed',
    preview: true,
    successes: [webhookResponse(200, 'The webhook')],
    errors: [webhookNotFound],
  },
  'POST /v1/webhooks/test': {
    operationId: 'testWebhook',
    summary: 'Send a fresh WEBHOOK.CREATED to the webhook',
    description:
      'No body. A new event (new eventId) with the webhook’s current data, queued for delivery; follow it ' +
      'in `GET /webhooks/events`.',
    tag: 'Webhooks',
    auth: 'signed',
    idempotent: true,
    preview: true,
    successes: [accepted('Test event queued', 'WebhookTestResponse', webhookTestResponseSchema)],
    errors: [
      badRequest('X-Idempotency-Key missing or not a UUID.', [idempotencyKeyRequired, idempotencyKeyNotUuid]),
      webhookNotFound,
      conflict('The webhook is DEACTIVED.', [deactivated]),
    ],
  },
  'GET /v1/webhooks/events': {
    operationId: 'listWebhookEvents',
    summary: 'The organization’s events of the last 30 days, with their delivery attempts',
    description:
      'Newest first. `status` is the state of the event’s latest delivery (NOT_SUBSCRIBED when it has ' +
      'none); filter on PENDING, DELIVERED or FAILED. Attempts oldest first, times in Unix seconds.',
    tag: 'Webhooks',
    auth: 'signed',
    preview: true,
    successes: [
      {
        status: 200,
        description: 'One page of events',
        name: 'WebhookEventListResponse',
        schema: webhookEventListResponseSchema,
      },
    ],
    errors: [
      badRequest('A query parameter failed validation.', [
        validationVariant(
          'statusUnknown',
          'Unknown status',
          'status',
          'status must be one of PENDING, DELIVERED, FAILED',
        ),
      ]),
    ],
  },
  'POST /v1/webhooks/events/:eventId/resend': {
    operationId: 'resendWebhookEvent',
    summary: 'Deliver one event again',
    description:
      'A new PENDING delivery of the same event, with the same eventId (receivers deduplicate on it), ' +
      'whatever the subscriptions say.',
    tag: 'Webhooks',
    auth: 'signed',
    idempotent: true,
    preview: true,
    successes: [accepted('Delivery queued', 'WebhookResendResponse', webhookResendResponseSchema)],
    errors: [
      badRequest('The event id is not a UUID, or X-Idempotency-Key missing or not a UUID.', [
        validationVariant('eventIdFormat', 'Malformed event id', 'eventId', 'Invalid event ID format'),
        idempotencyKeyRequired,
        idempotencyKeyNotUuid,
      ]),
      notFound('No such event, or no webhook.', [
        variant(
          'eventNotFound',
          'Unknown or another organization’s event',
          withMessage(ErrorLabel.notFound, WebhookMessage.eventNotFound),
        ),
        variant('webhookNotFound', 'No webhook', withMessage(ErrorLabel.notFound, WebhookMessage.notFound)),
      ]),
      conflict('The webhook is DEACTIVED.', [deactivated]),
    ],
  },
};
