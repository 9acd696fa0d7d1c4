export {
  DEFAULT_SANDBOX_FILE,
  PartnerClient,
  type PartnerClientOptions,
  readSandboxFile,
  type SandboxCredentials,
  SDK_VERSION,
} from './client.ts';
export * from './errors.ts';
export type { ApiResponse, RequestEvent, RequestOptions, ResponseEvent } from './request-sender.ts';
export { isPaymentFinal, type WaitForFinalOptions } from './resources/payment-status.ts';
export {
  LatestWebhookKeyCache,
  type WebhookEventsResource,
  type WebhookKeyCache,
  type WebhooksResource,
} from './resources/webhooks.ts';
export {
  backoffDelayMs,
  MAX_RETRY_AFTER_MS,
  parseRetryAfterMs,
  RETRY_BASE_DELAY_MS,
  RETRY_MAX_DELAY_MS,
  type RetryDecision,
  type RetryInput,
  shouldRetry,
} from './retry.ts';
export { readServerSentEvents, type ServerSentEvent } from './sse.ts';
export { type CachedToken, TOKEN_REFRESH_MARGIN_MS, type TokenStore } from './token-manager.ts';
export * from './types.ts';
export {
  createUssdGatewayHandler,
  type GatewaySession,
  gatewayIdempotencyKey,
  type UssdGatewayCallback,
  type UssdGatewayHandler,
  type UssdGatewayOptions,
} from './ussd-gateway.ts';
export * from './webhook-types.ts';
export {
  type WebhookDelivery,
  WebhookVerificationError,
  type WebhookVerificationReason,
} from './webhook-verify.ts';
