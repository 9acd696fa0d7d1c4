import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.ts';
import type { CallbackPipeline } from '../services/payments/callback-pipeline.ts';
import { handleMtnCallback, type MtnConfig, UUID_V4 } from '../services/payments/providers/mtn/index.ts';
import { guardProviderCallbacks, pathTokenMatcher } from './provider-callback-guard.ts';

/** Relative to /v1: `{ref}` is the request's X-Reference-Id, which MTN's callback body lacks. */
export const MTN_CALLBACK_ROUTE = '/payments/callbacks/mtn/:token/:ref';

/**
 * MTN's older callback page times a callback out after 2 s (then retries); the answer goes by then
 * and whatever is still running (the confirming query) finishes after it.
 */
const ACK_WITHIN_MS = 1500;

export type MtnCallbackDeps = { ctx: AppContext; settings: MtnConfig; pipeline: CallbackPipeline };

/**
 * PUT or POST /v1/payments/callbacks/mtn/{token}/{referenceId}: MTN's callbacks (the sources
 * disagree on the method), outside the partner authentication. A wrong token or a reference that is
 * not a UUID is the unknown route's 404; a source outside the optional allowlist a 403. Under the
 * right token every body, however malformed or large, gets an empty 200, never a 500: the body is
 * logged and recorded, and the pipeline confirms by a status query before anything is applied.
 */
export async function mtnCallbackRoutes(app: FastifyInstance, { ctx, settings, pipeline }: MtnCallbackDeps) {
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
