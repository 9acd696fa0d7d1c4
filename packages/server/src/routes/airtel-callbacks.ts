import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.ts';
import type { CallbackPipeline } from '../services/payments/callback-pipeline.ts';
import {
  type AirtelSettings,
  CALLBACK_ACK,
  handleAirtelCallback,
} from '../services/payments/providers/airtel/index.ts';
import { guardProviderCallbacks, pathTokenMatcher } from './provider-callback-guard.ts';

/**
 * Relative to /v1. The URL registered in Airtel's portal is `.../airtel/{token}`; an optional
 * last segment (`collection`, `disbursement`) is accepted as a label, for a portal that takes two.
 */
export const AIRTEL_CALLBACK_ROUTES = [
  '/payments/callbacks/airtel/:token',
  '/payments/callbacks/airtel/:token/:ref',
] as const;

export type AirtelCallbackDeps = { ctx: AppContext; settings: AirtelSettings; pipeline: CallbackPipeline };

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
  { ctx, settings, pipeline }: AirtelCallbackDeps,
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
