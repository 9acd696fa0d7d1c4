import type { CallbackPipeline, CallbackVerdict } from '../../callback-pipeline.ts';
import type { Log } from '../../provider.ts';
import { redact } from '../http-exchange.ts';
import { lookUpWithin } from '../match-wait.ts';
import type { ExchangeRecord } from '../outcome.ts';
import { parseMtnStatus } from './callbacks.ts';
import { UUID_V4 } from './config.ts';
import { MTN_ADAPTER_NAME, MTN_IDS } from './pipeline-adapter.ts';
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
