import type { KeyObject } from 'node:crypto';
import { signWebhookDelivery, type WebhookEnvelope } from '@partner-api/contract';
import type { Db } from '../../db/client.ts';
import type { Metrics } from '../../lib/metrics.ts';
import { handBackAfterFailure } from '../../lib/pass-loop.ts';
import {
  type ClaimedDelivery,
  claimDueDeliveries,
  type DeliveryChange,
  disableWebhook,
  handBackDelivery,
  markFailing,
  recordAttempt,
  recordSuccess,
  settleDelivery,
} from './delivery-store.ts';
import {
  afterFailure,
  DISABLE_AFTER_FAILING_SECONDS,
  parseRetryAfter,
  type RetrySettings,
} from './schedule.ts';
import { type SenderOptions, sendDelivery } from './sender.ts';

export type DeliverySettings = RetrySettings & {
  WEBHOOK_WORKER_BATCH: number;
  WEBHOOK_LEASE_SECONDS: number;
};

type Log = {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
};

export type DeliveryDeps = {
  db: Db;
  log: Log;
  metrics: Metrics;
  settings: DeliverySettings;
  sender: SenderOptions;
  /** The published webhook key (ctx.secrets.webhookSigningKey) and its key id. */
  signingKey: { keyId: string; privateKey: KeyObject };
  clock: () => Date;
  random?: () => number;
  /** Tests only: claim only these organizations' deliveries (see startWebhookWorker). */
  organizations?: ReadonlySet<string>;
};

export const REASON_GONE = 'the receiver answered 410 Gone';
export const REASON_FAILING = 'every delivery failed for 5 days';

/** The body of every attempt: the spec's envelope, keys in the spec's order. */
export function envelopeOf(delivery: Pick<ClaimedDelivery, 'eventId' | 'event' | 'eventCreatedAt' | 'data'>) {
  const envelope: WebhookEnvelope = {
    eventId: delivery.eventId,
    event: delivery.event,
    createdAt: Math.floor(delivery.eventCreatedAt.getTime() / 1000),
    data: delivery.data,
  };
  return JSON.stringify(envelope);
}

/**
 * One claimed delivery: sign afresh (the attempt's time, the published key), POST to the webhook's
 * current URL outside any transaction, then record the attempt and decide, in one transaction:
 * 2xx delivered; 410 disables the webhook; anything else retried with backoff until the retry
 * window closes, the webhook disabled once every delivery has failed for 5 days.
 */
export async function deliverClaimed(deps: DeliveryDeps, delivery: ClaimedDelivery): Promise<void> {
  const body = envelopeOf(delivery);
  const headers = signWebhookDelivery({
    url: delivery.url,
    body,
    eventId: delivery.eventId,
    keyId: deps.signingKey.keyId,
    privateKey: deps.signingKey.privateKey,
    now: Math.floor(deps.clock().getTime() / 1000),
  });
  const at = deps.clock();
  const sent = await sendDelivery({ url: delivery.url, body, headers }, deps.sender);
  const outcome = sent.kind;
  deps.metrics.webhookAttempts.inc({ outcome });
  deps.metrics.webhookLatency.observe(sent.latencyMs / 1000);
  const now = deps.clock();
  const attempt = { at, httpStatus: sent.status, latencyMs: sent.latencyMs, error: sent.error };
  if (outcome === 'success') {
    if (await recordSuccess(deps.db, delivery, attempt, now))
      deps.metrics.webhookDeliveries.inc({ outcome: 'delivered' });
    return;
  }
  const ended = await deps.db.transaction(async (tx) => {
    await recordAttempt(tx, delivery, attempt);
    const error = sent.error ?? 'failed';
    if (sent.status === 410) {
      await settleDelivery(tx, delivery, { state: 'FAILED', lastError: error });
      return (await disableWebhook(tx, {
        webhookId: delivery.webhookId,
        url: delivery.url,
        reason: REASON_GONE,
        now,
      }))
        ? 'disabled'
        : 'failed';
    }
    const failingSince = await markFailing(tx, delivery.webhookId, now);
    if (failingSince && now.getTime() - failingSince.getTime() >= DISABLE_AFTER_FAILING_SECONDS * 1000) {
      await settleDelivery(tx, delivery, { state: 'FAILED', lastError: error });
      await disableWebhook(tx, {
        webhookId: delivery.webhookId,
        url: delivery.url,
        reason: REASON_FAILING,
        now,
      });
      return 'disabled';
    }
    const next = afterFailure({
      createdAt: delivery.createdAt,
      now,
      attempts: delivery.attempts,
      settings: deps.settings,
      random: deps.random,
      retryAfterMs: parseRetryAfter(sent.retryAfter, now),
    });
    const change: DeliveryChange = next.retry
      ? { state: 'PENDING', nextAttemptAt: next.nextAttemptAt, lastError: error }
      : { state: 'FAILED', lastError: error };
    const ok = await settleDelivery(tx, delivery, change);
    return ok && !next.retry ? 'failed' : undefined;
  });
  if (ended) deps.metrics.webhookDeliveries.inc({ outcome: ended });
  if (ended === 'disabled')
    deps.log.warn(
      { webhookId: delivery.webhookId, organizationId: delivery.organizationId, status: sent.status },
      'webhook disabled',
    );
}

/**
 * One pass: claim a batch (committed at once: the lease is what holds them), deliver them
 * concurrently. True when the batch was full: there may be more due at once.
 */
export async function runDeliveriesOnce(deps: DeliveryDeps): Promise<boolean> {
  const now = deps.clock();
  const claimed = await claimDueDeliveries(deps.db, {
    limit: deps.settings.WEBHOOK_WORKER_BATCH,
    now,
    leaseUntil: new Date(now.getTime() + deps.settings.WEBHOOK_LEASE_SECONDS * 1000),
    ...(deps.organizations ? { organizations: [...deps.organizations] } : {}),
  });
  await Promise.all(
    claimed.map((d) =>
      deliverClaimed(deps, d).catch(async (err: unknown) => {
        // Handed back after the base backoff rather than held for the whole lease: a passing
        // database failure delays the delivery by seconds, not a minute. If the database still
        // refuses, the lease runs out and another pass takes it over. Either way the attempt is sent
        // again (at least once, never lost); the receiver dedupes by eventId.
        const until = new Date(deps.clock().getTime() + deps.settings.WEBHOOK_BACKOFF_BASE_MS);
        const outcome = await handBackAfterFailure(
          () => handBackDelivery(deps.db, d, until),
          d.lease,
          until,
          'handed back',
        );
        deps.log.error(
          { err, deliveryId: d.id, retryAt: outcome.retryAt },
          `webhook delivery failed to record; ${outcome.what}`,
        );
      }),
    ),
  );
  return claimed.length >= deps.settings.WEBHOOK_WORKER_BATCH;
}
