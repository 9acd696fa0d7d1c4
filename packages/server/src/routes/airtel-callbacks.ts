import { timingSafeEqual } from 'node:crypto';
import { ErrorLabel } from '@partner-api/contract';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.ts';
import { AppError } from '../lib/errors.ts';
import { buildAllowlist, isAllowed } from '../lib/ip-allowlist.ts';
import { JSON_BODY_LIMIT } from '../plugins/body-parsing.ts';
import type { CallbackPipeline } from '../services/payments/callback-pipeline.ts';
import {
  type AirtelSettings,
  CALLBACK_ACK,
  handleAirtelCallback,
} from '../services/payments/providers/airtel/index.ts';

/**
 * Relative to /v1. The URL registered in Airtel's portal is `.../airtel/{token}`; an optional
 * last segment (`collection`, `disbursement`) is accepted as a label, for a portal that takes two.
 */
export const AIRTEL_CALLBACK_ROUTES = [
  '/payments/callbacks/airtel/:token',
  '/payments/callbacks/airtel/:token/:ref',
];

export type AirtelCallbackDeps = { ctx: AppContext; settings: AirtelSettings; pipeline: CallbackPipeline };

const tokenChecked = Symbol('airtelTokenChecked');
declare module 'fastify' {
  interface FastifyRequest {
    [tokenChecked]?: true;
  }
}

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
  const expected = Buffer.from(settings.callbackToken);
  const allowlist =
    settings.callbackAllowedIps.length > 0 ? buildAllowlist(settings.callbackAllowedIps) : undefined;
  const tokenMatches = (token: unknown) => {
    const given = Buffer.from(typeof token === 'string' ? token : '');
    // Constant time over the expected length: a wrong length compares against itself and fails.
    const same = timingSafeEqual(given.length === expected.length ? given : expected, expected);
    return same && given.length === expected.length;
  };
  const valid = (request: FastifyRequest) => {
    const { token, ref } = request.params as { token?: string; ref?: string };
    return tokenMatches(token) && (ref === undefined || REF.test(ref));
  };

  // Every body is taken as text (up to the usual limit) and parsed by the Airtel parser alone.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string', bodyLimit: JSON_BODY_LIMIT }, (request, body, done) => {
    request.rawBody = body as string;
    done(null, undefined);
  });

  app.addHook('onRequest', async (request, reply) => {
    if (!valid(request)) {
      ctx.metrics.paymentCallbacks.inc({ outcome: 'rejected' });
      return notFound(reply);
    }
    if (allowlist && !isAllowed(allowlist, request.ip)) {
      ctx.metrics.paymentCallbacks.inc({ outcome: 'rejected' });
      request.log.warn({ ip: request.ip }, 'Airtel callback from outside the allowlist');
      return reply.code(403).send({ error: ErrorLabel.forbidden });
    }
    request[tokenChecked] = true;
  });

  // Under the right token nothing but the acknowledgement leaves (a body over the limit included).
  app.setErrorHandler((error, request, reply) => {
    if (!request[tokenChecked]) {
      if (error instanceof AppError) {
        if (error.headers) reply.headers(error.headers);
        return reply.code(error.statusCode).send(error.body());
      }
      return notFound(reply);
    }
    request.log.warn({ err: error }, 'Airtel callback could not be read; acknowledged');
    ctx.metrics.paymentCallbacks.inc({ outcome: 'malformed' });
    return reply.code(200).send(CALLBACK_ACK);
  });

  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    const { ref } = request.params as { ref?: string };
    try {
      const outcome = await handleAirtelCallback(pipeline, {
        rawBody: request.rawBody ?? '',
        method: request.method,
        ...(ref ? { pathRef: ref } : {}),
        receivedAt: new Date(),
        log: request.log,
        secretValues: [
          settings.callbackToken,
          ...(settings.callbackHmacKey ? [settings.callbackHmacKey] : []),
        ],
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

function notFound(reply: FastifyReply) {
  return reply.code(404).send({ error: ErrorLabel.routeNotFound });
}
