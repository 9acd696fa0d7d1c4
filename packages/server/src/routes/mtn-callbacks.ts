import { timingSafeEqual } from 'node:crypto';
import { ErrorLabel } from '@partner-api/contract';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.ts';
import { AppError } from '../lib/errors.ts';
import { buildAllowlist, isAllowed } from '../lib/ip-allowlist.ts';
import { JSON_BODY_LIMIT } from '../plugins/body-parsing.ts';
import type { CallbackPipeline } from '../services/payments/callback-pipeline.ts';
import { handleMtnCallback, type MtnConfig, UUID_V4 } from '../services/payments/providers/mtn/index.ts';

/** Relative to /v1: `{ref}` is the request's X-Reference-Id, which MTN's callback body lacks. */
export const MTN_CALLBACK_ROUTE = '/payments/callbacks/mtn/:token/:ref';

/**
 * MTN's older callback page times a callback out after 2 s (then retries); the answer goes by then
 * and whatever is still running (the confirming query) finishes after it.
 */
const ACK_WITHIN_MS = 1500;

export type MtnCallbackDeps = { ctx: AppContext; settings: MtnConfig; pipeline: CallbackPipeline };

const tokenChecked = Symbol('mtnTokenChecked');
declare module 'fastify' {
  interface FastifyRequest {
    [tokenChecked]?: true;
  }
}

/**
 * PUT or POST /v1/payments/callbacks/mtn/{token}/{referenceId}: MTN's callbacks (the sources
 * disagree on the method), outside the partner authentication. A wrong token or a reference that is
 * not a UUID is the unknown route's 404; a source outside the optional allowlist a 403. Under the
 * right token every body, however malformed or large, gets an empty 200, never a 500: the body is
 * logged and recorded, and the pipeline confirms by a status query before anything is applied.
 */
export async function mtnCallbackRoutes(app: FastifyInstance, { ctx, settings, pipeline }: MtnCallbackDeps) {
  const expected = Buffer.from(settings.callbackToken);
  const allowedIps = settings.callbackAllowedIps ?? [];
  const allowlist = allowedIps.length > 0 ? buildAllowlist(allowedIps) : undefined;
  const tokenMatches = (token: unknown) => {
    const given = Buffer.from(typeof token === 'string' ? token : '');
    // Constant time over the expected length: a wrong length compares against itself and fails.
    const same = timingSafeEqual(given.length === expected.length ? given : expected, expected);
    return same && given.length === expected.length;
  };
  const valid = (request: FastifyRequest) => {
    const { token, ref } = request.params as { token?: string; ref?: string };
    return tokenMatches(token) && typeof ref === 'string' && UUID_V4.test(ref);
  };

  // Every body is taken as text (up to the usual limit) and parsed by the MTN parser alone.
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
      request.log.warn({ ip: request.ip }, 'MTN callback from outside the allowlist');
      return reply.code(403).send({ error: ErrorLabel.forbidden });
    }
    request[tokenChecked] = true;
  });

  // Under the right token nothing but the empty 200 leaves (a body over the limit included).
  app.setErrorHandler((error, request, reply) => {
    if (!request[tokenChecked]) {
      if (error instanceof AppError) {
        if (error.headers) reply.headers(error.headers);
        return reply.code(error.statusCode).send(error.body());
      }
      return notFound(reply);
    }
    request.log.warn({ err: error }, 'MTN callback could not be read; acknowledged');
    ctx.metrics.paymentCallbacks.inc({ outcome: 'malformed' });
    return reply.code(200).send();
  });

  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    const { ref } = request.params as { ref: string };
    const work = handleMtnCallback(pipeline, {
      rawBody: request.rawBody ?? '',
      method: request.method,
      pathRef: ref,
      receivedAt: new Date(),
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

function notFound(reply: FastifyReply) {
  return reply.code(404).send({ error: ErrorLabel.routeNotFound });
}
