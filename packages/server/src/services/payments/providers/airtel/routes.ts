import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { CallbackPipeline, CallbackVerdict } from '../../callback-pipeline.ts';
import type { Log } from '../../provider.ts';
import { guardProviderCallbacks, pathTokenMatcher } from '../callback-guard.ts';
import { redact } from '../http-exchange.ts';
import { lookUpWithin } from '../match-wait.ts';
import type { CallbackRouteDeps } from '../module.ts';
import type { ExchangeRecord } from '../outcome.ts';
import { AIRTEL_ADAPTER_NAME, AIRTEL_IDS } from './adapter.ts';
import { CALLBACK_ACK, parseAirtelCallback, verifyCallbackHash } from './callbacks.ts';
import type { AirtelSettings, CallbackHashInput } from './settings.ts';
import { AIRTEL_SECRET_KEYS } from './token.ts';

/**
 * What became of one callback: a verdict of the pipeline, or why it reached none. `bad-hash`: a
 * hash was expected (AIRTEL_CALLBACK_HMAC_KEY) and was missing or wrong: recorded, not handed on.
 */
export type AirtelInboundOutcome = CallbackVerdict | 'malformed' | 'unmatched' | 'bad-hash';

export type AirtelCallbackInput = {
  rawBody: string;
  method: string;
  /** The optional path segment after the token (`collection`, `disbursement`): a label only. */
  pathRef?: string;
  receivedAt: Date;
  /** Where the callback came from (the route's request.ip, after TRUST_PROXY). */
  sourceAddress?: string;
  log: Log;
  /** Redacted wherever they occur in the recorded body. */
  secretValues?: readonly string[];
  /** The portal's callback key: when set, the `hash` must match (callbacks.ts). */
  callbackHmacKey?: string;
  callbackHashInput?: CallbackHashInput;
  matchWaitMs?: number;
};

/**
 * One Airtel callback, already past the path token: parsed exactly, its `hash` checked when a key
 * is configured, matched to our request by `transaction.id` (our request id) and handed to the
 * pipeline, which confirms by enquiry whatever the callback (or its hash) says. Never throws for a
 * body: a malformed, unmatched or badly hashed one is logged and recorded.
 */
export async function handleAirtelCallback(
  pipeline: CallbackPipeline,
  input: AirtelCallbackInput,
): Promise<AirtelInboundOutcome> {
  const { rawBody, log } = input;
  const label = input.pathRef ? `/${input.pathRef}` : '';
  const exchange = (error: string | null = null): ExchangeRecord => ({
    provider: 'AIRTEL',
    operation: 'callback',
    method: input.method.toUpperCase() === 'GET' ? 'GET' : 'POST',
    // Never the path token.
    path: `/v1/payments/callbacks/airtel/[token]${label}`,
    requestBody: redact(jsonOrText(rawBody), AIRTEL_SECRET_KEYS, input.secretValues),
    status: 200,
    responseBody: CALLBACK_ACK,
    startedAt: input.receivedAt,
    ...(input.sourceAddress ? { sourceAddress: input.sourceAddress } : {}),
    latencyMs: Date.now() - input.receivedAt.getTime(),
    error,
  });

  const parsed = parseAirtelCallback(rawBody);
  if (!parsed.ok) {
    log.warn({ error: parsed.error, bytes: rawBody.length }, 'Airtel callback: malformed body');
    await pipeline.recordUnmatched?.(
      AIRTEL_ADAPTER_NAME,
      exchange(parsed.error),
      `malformed: ${parsed.error}`,
    );
    return 'malformed';
  }
  const cb = parsed.value;
  const hash = verifyCallbackHash(cb, input.callbackHmacKey, input.callbackHashInput);
  if (hash === 'missing' || hash === 'mismatch') {
    log.warn(
      { suspicious: true, transactionId: cb.transactionId, hash },
      'Airtel callback: hash missing or wrong; not used (the enquiry settles the transaction)',
    );
    await pipeline.recordUnmatched?.(
      AIRTEL_ADAPTER_NAME,
      exchange(`hash ${hash}`),
      `hash ${hash} for ${cb.transactionId}`,
    );
    return 'bad-hash';
  }

  // The callback can overtake the commit of the push's answer: look again for a while.
  const request = await lookUpWithin(
    () => pipeline.findRequestByProviderId(AIRTEL_ADAPTER_NAME, AIRTEL_IDS.transactionId, cb.transactionId),
    input.matchWaitMs,
  );
  if (!request) {
    // A push whose answer we never got has no saved id yet: the reconciliation sweep enquires by
    // the same id (our request id) and settles it.
    log.warn({ transactionId: cb.transactionId }, 'Airtel callback: no request of ours has this id');
    await pipeline.recordUnmatched?.(
      AIRTEL_ADAPTER_NAME,
      exchange(),
      `unmatched transaction.id ${cb.transactionId}`,
    );
    return 'unmatched';
  }
  return pipeline.handleCallback({
    adapterName: AIRTEL_ADAPTER_NAME,
    requestId: request.id,
    claimed: {
      status: cb.status,
      ...(cb.reason ? { reason: cb.reason } : {}),
      ...(cb.status === 'SUCCESS' && cb.airtelMoneyId ? { receipt: cb.airtelMoneyId } : {}),
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

/**
 * Relative to /v1. The URL registered in Airtel's portal is `.../airtel/{token}`; an optional
 * last segment (`collection`, `disbursement`) is accepted as a label, for a portal that takes two.
 */
export const AIRTEL_CALLBACK_ROUTES = [
  '/payments/callbacks/airtel/:token',
  '/payments/callbacks/airtel/:token/:ref',
] as const;

const REF = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * POST /v1/payments/callbacks/airtel/{token}[/{ref}]: Airtel's callbacks, outside the partner
 * authentication. A wrong token is the unknown route's 404; a source outside the optional
 * allowlist a 403. Under the right token every body, however malformed, badly hashed or large,
 * gets 200 and CALLBACK_ACK, never a 500: it is logged and recorded, and the pipeline confirms
 * by enquiry before anything is applied.
 */
export async function airtelCallbackRoutes(
  app: FastifyInstance,
  { ctx, settings, pipeline }: CallbackRouteDeps<AirtelSettings>,
) {
  const tokenMatches = pathTokenMatcher(settings.callbackToken);
  const valid = (request: FastifyRequest) => {
    const { token, ref } = request.params as { token?: string; ref?: string };
    return tokenMatches(token) && (ref === undefined || REF.test(ref));
  };
  guardProviderCallbacks(app, {
    ctx,
    provider: 'Airtel',
    valid,
    allowedIps: settings.callbackAllowedIps,
    ack: CALLBACK_ACK,
  });

  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    const { ref } = request.params as { ref?: string };
    try {
      const outcome = await handleAirtelCallback(pipeline, {
        rawBody: request.rawBody ?? '',
        method: request.method,
        ...(ref ? { pathRef: ref } : {}),
        receivedAt: new Date(),
        sourceAddress: request.ip,
        log: request.log,
        secretValues: [settings.callbackToken],
        ...(settings.callbackHmacKey ? { callbackHmacKey: settings.callbackHmacKey } : {}),
        ...(settings.callbackHashInput ? { callbackHashInput: settings.callbackHashInput } : {}),
      });
      ctx.metrics.paymentCallbacks.inc({ outcome });
      if (outcome === 'contradicted')
        request.log.warn({ suspicious: true }, 'Airtel callback contradicted by the enquiry');
    } catch (error) {
      // A store that is down must not turn into Airtel retries of a 500: reconciliation asks later.
      request.log.error({ err: error }, 'Airtel callback not processed; reconciliation will settle it');
      ctx.metrics.paymentCallbacks.inc({ outcome: 'error' });
    }
    return reply.code(200).send(CALLBACK_ACK);
  };
  for (const url of AIRTEL_CALLBACK_ROUTES) {
    app.post(url, { config: { rateLimitExempt: valid, redactParams: ['token'] } }, handler);
  }
}
