import { timingSafeEqual } from 'node:crypto';
import { ErrorLabel } from '@partner-api/contract';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { MpesaSettings } from '../config.ts';
import type { AppContext } from '../context.ts';
import { AppError } from '../lib/errors.ts';
import { buildAllowlist, isAllowed } from '../lib/ip-allowlist.ts';
import { JSON_BODY_LIMIT } from '../plugins/body-parsing.ts';
import type { CallbackPipeline } from '../services/payments/callback-pipeline.ts';
import {
  CALLBACK_ACK,
  DARAJA_CALLBACK_KINDS,
  handleDarajaCallback,
  type MpesaCallbackKind,
} from '../services/payments/providers/mpesa/index.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** True when the request may skip the rate limits (a provider callback under the right token). */
    rateLimitExempt?: (request: FastifyRequest) => boolean;
    /** Path parameters the access log replaces with `[REDACTED]` (a path token). */
    redactParams?: readonly string[];
  }
}

/** Relative to /v1; the word "mpesa" stays out of the path (docs/payments.md). */
export const DARAJA_CALLBACK_ROUTE = '/payments/callbacks/daraja/:token/:kind';

export type DarajaCallbackDeps = { ctx: AppContext; settings: MpesaSettings; pipeline: CallbackPipeline };

const tokenChecked = Symbol('darajaTokenChecked');
declare module 'fastify' {
  interface FastifyRequest {
    [tokenChecked]?: true;
  }
}

/**
 * POST /v1/payments/callbacks/daraja/{token}/{kind}: Daraja's callbacks, outside the partner
 * authentication. A wrong token or kind is the unknown route's 404; a source outside the optional
 * allowlist a 403. Under the right token every body, however malformed or large, gets 200 and
 * Daraja's acknowledgement (CALLBACK_ACK), never a 500 or a stack: the body is logged and
 * recorded, and the pipeline confirms by query before anything is applied.
 */
export async function darajaCallbackRoutes(
  app: FastifyInstance,
  { ctx, settings, pipeline }: DarajaCallbackDeps,
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
  const kindOf = (request: FastifyRequest): MpesaCallbackKind | undefined => {
    const kind = (request.params as { kind?: string }).kind;
    return DARAJA_CALLBACK_KINDS.find((k) => k === kind);
  };
  const valid = (request: FastifyRequest) =>
    tokenMatches((request.params as { token?: string }).token) && kindOf(request) !== undefined;

  // Every body is taken as text (up to the usual limit) and parsed by the Daraja parsers alone.
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
      request.log.warn({ ip: request.ip }, 'Daraja callback from outside the allowlist');
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
    request.log.warn({ err: error }, 'Daraja callback could not be read; acknowledged');
    ctx.metrics.paymentCallbacks.inc({ outcome: 'malformed' });
    return reply.code(200).send(CALLBACK_ACK);
  });

  app.post(
    DARAJA_CALLBACK_ROUTE,
    { config: { rateLimitExempt: valid, redactParams: ['token'] } },
    async (request, reply) => {
      const kind = kindOf(request) as MpesaCallbackKind;
      try {
        const outcome = await handleDarajaCallback(pipeline, {
          kind,
          rawBody: request.rawBody ?? '',
          receivedAt: new Date(),
          log: request.log,
          secretValues: [settings.callbackToken],
        });
        ctx.metrics.paymentCallbacks.inc({ outcome });
        if (outcome === 'contradicted')
          request.log.warn({ kind, suspicious: true }, 'Daraja callback contradicted by the query');
      } catch (error) {
        // A store that is down must not turn into Daraja retries of a 500: reconciliation asks later.
        request.log.error(
          { err: error, kind },
          'Daraja callback not processed; reconciliation will settle it',
        );
        ctx.metrics.paymentCallbacks.inc({ outcome: 'error' });
      }
      return reply.code(200).send(CALLBACK_ACK);
    },
  );
}

function notFound(reply: FastifyReply) {
  return reply.code(404).send({ error: ErrorLabel.routeNotFound });
}
