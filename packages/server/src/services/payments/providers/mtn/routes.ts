import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { CallbackPipeline, CallbackVerdict } from '../../callback-pipeline.ts';
import type { Log } from '../../provider.ts';
import { guardProviderCallbacks, pathTokenMatcher } from '../callback-guard.ts';
import { redact } from '../http-exchange.ts';
import { lookUpWithin } from '../match-wait.ts';
import type { CallbackRouteDeps } from '../module.ts';
import type { ExchangeRecord } from '../outcome.ts';
import { MTN_ADAPTER_NAME, MTN_IDS } from './adapter.ts';
import { parseMtnStatus } from './callbacks.ts';
import { type MtnConfig, UUID_V4 } from './settings.ts';
import { MTN_SECRET_KEYS } from './token.ts';

/** What became of one callback: a verdict of the pipeline, or why it reached none. */
export type MtnInboundOutcome = CallbackVerdict | 'malformed' | 'unmatched';

/**
 * One MTN callback body (PUT or POST, the status body's shape, no X-Reference-Id), already past the
 * token (and allowlist) check. It is matched by the reference in our callback path (`pathRef`), else
 * by `externalId` (our request id, kept in providerIds); a body whose externalId names another
 * request than the path is refused as unmatched. The pipeline confirms by a status query before
 * anything is applied. Never throws for a body: a malformed or unmatched one is logged and recorded.
 */
export async function handleMtnCallback(
  pipeline: CallbackPipeline,
  input: {
    rawBody: string;
    method: string;
    pathRef?: string;
    receivedAt: Date;
    /** Where the callback came from (the route's request.ip, after TRUST_PROXY). */
    sourceAddress?: string;
    log: Log;
    matchWaitMs?: number;
    secretValues?: readonly string[];
  },
): Promise<MtnInboundOutcome> {
  const { rawBody, log } = input;
  const method = input.method.toUpperCase() === 'PUT' ? 'PUT' : 'POST';
  const exchange = (error: string | null = null): ExchangeRecord => ({
    provider: 'MTN',
    // ExchangeRecord's method knows GET and POST: the operation names the method MTN used.
    operation: `callback:${method.toLowerCase()}`,
    method: 'POST',
    // Never the path token: the record names the route by the reference alone.
    path: `/v1/payments/callbacks/mtn/[token]/${input.pathRef ?? ''}`,
    requestBody: redact(jsonOrText(rawBody), MTN_SECRET_KEYS, input.secretValues),
    status: 200,
    responseBody: null,
    startedAt: input.receivedAt,
    ...(input.sourceAddress ? { sourceAddress: input.sourceAddress } : {}),
    latencyMs: Date.now() - input.receivedAt.getTime(),
    error,
  });

  const unmatched = async (reason: string): Promise<MtnInboundOutcome> => {
    log.warn({ reason, pathRef: input.pathRef }, 'MTN callback: no request of ours');
    await pipeline.recordUnmatched?.(MTN_ADAPTER_NAME, exchange(), reason);
    return 'unmatched';
  };

  const parsed = parseMtnStatus(rawBody);
  if (!parsed.ok) {
    log.warn({ error: parsed.error, bytes: rawBody.length, method }, 'MTN callback: malformed body');
    await pipeline.recordUnmatched?.(MTN_ADAPTER_NAME, exchange(parsed.error), `malformed: ${parsed.error}`);
    return 'malformed';
  }
  const cb = parsed.value;
  const pathRef = input.pathRef && UUID_V4.test(input.pathRef) ? input.pathRef.toLowerCase() : undefined;
  const byReference = pathRef ?? cb.referenceId?.toLowerCase();
  const [key, value] = byReference
    ? [MTN_IDS.referenceId, byReference]
    : [MTN_IDS.externalId, cb.externalId ?? undefined];
  if (!value) return unmatched('no reference in the path and no externalId in the body');

  // A callback can overtake the commit of the send that stored its reference: look again a while.
  const request = await lookUpWithin(
    () => pipeline.findRequestByProviderId(MTN_ADAPTER_NAME, key, value),
    input.matchWaitMs,
  );
  if (!request) return unmatched(`unmatched ${key} ${value}`);
  if (cb.externalId !== null && cb.externalId !== request.id) {
    log.warn(
      { suspicious: true, requestId: request.id, externalId: cb.externalId },
      'MTN callback: ids disagree',
    );
    return unmatched(`externalId ${cb.externalId} is not that of the request of ${key} ${value}`);
  }
  return pipeline.handleCallback({
    adapterName: MTN_ADAPTER_NAME,
    requestId: request.id,
    claimed: {
      status: cb.status,
      ...(cb.reason ? { reason: cb.reason } : {}),
      ...(cb.financialTransactionId ? { receipt: cb.financialTransactionId } : {}),
    },
    exchange: exchange(),
  });
}

function jsonOrText(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return raw.slice(0, 10_000);
  }
}

/** Relative to /v1: `{ref}` is the request's X-Reference-Id, which MTN's callback body lacks. */
export const MTN_CALLBACK_ROUTE = '/payments/callbacks/mtn/:token/:ref';

/**
 * MTN's older callback page times a callback out after 2 s (then retries); the answer goes by then
 * and whatever is still running (the confirming query) finishes after it.
 */
const ACK_WITHIN_MS = 1500;

/**
 * PUT or POST /v1/payments/callbacks/mtn/{token}/{referenceId}: MTN's callbacks (the sources
 * disagree on the method), outside the partner authentication. A wrong token or a reference that is
 * not a UUID is the unknown route's 404; a source outside the optional allowlist a 403. Under the
 * right token every body, however malformed or large, gets an empty 200, never a 500: the body is
 * logged and recorded, and the pipeline confirms by a status query before anything is applied.
 */
export async function mtnCallbackRoutes(
  app: FastifyInstance,
  { ctx, settings, pipeline }: CallbackRouteDeps<MtnConfig>,
) {
  const tokenMatches = pathTokenMatcher(settings.callbackToken);
  const valid = (request: FastifyRequest) => {
    const { token, ref } = request.params as { token?: string; ref?: string };
    return tokenMatches(token) && typeof ref === 'string' && UUID_V4.test(ref);
  };

  // Text bodies for the MTN parser alone; 404, 403, and an empty 200 for every body under the token.
  guardProviderCallbacks(app, {
    ctx,
    provider: 'MTN',
    valid,
    allowedIps: settings.callbackAllowedIps ?? [],
    ack: undefined,
  });

  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    const { ref } = request.params as { ref: string };
    const work = handleMtnCallback(pipeline, {
      rawBody: request.rawBody ?? '',
      method: request.method,
      pathRef: ref,
      receivedAt: new Date(),
      sourceAddress: request.ip,
      log: request.log,
      secretValues: [settings.callbackToken],
    }).then(
      (outcome) => {
        ctx.metrics.paymentCallbacks.inc({ outcome });
        if (outcome === 'contradicted')
          request.log.warn({ ref, suspicious: true }, 'MTN callback contradicted by the query');
      },
      (error: unknown) => {
        // A store that is down must not turn into a 500: reconciliation asks MTN later.
        request.log.error({ err: error, ref }, 'MTN callback not processed; reconciliation will settle it');
        ctx.metrics.paymentCallbacks.inc({ outcome: 'error' });
      },
    );
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([work, new Promise((resolve) => (timer = setTimeout(resolve, ACK_WITHIN_MS)))]);
    clearTimeout(timer);
    return reply.code(200).send();
  };
  const config = { rateLimitExempt: valid, redactParams: ['token'] } as const;
  app.post(MTN_CALLBACK_ROUTE, { config }, handler);
  app.put(MTN_CALLBACK_ROUTE, { config }, handler);
}
