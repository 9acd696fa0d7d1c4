import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { MpesaSettings } from '../config.ts';
import type { AppContext } from '../context.ts';
import type { CallbackPipeline } from '../services/payments/callback-pipeline.ts';
import {
  CALLBACK_ACK,
  DARAJA_CALLBACK_KINDS,
  handleDarajaCallback,
  type MpesaCallbackKind,
} from '../services/payments/providers/mpesa/index.ts';
import { guardProviderCallbacks, pathTokenMatcher } from './provider-callback-guard.ts';

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
  const tokenMatches = pathTokenMatcher(settings.callbackToken);
  const kindOf = (request: FastifyRequest): MpesaCallbackKind | undefined => {
    const kind = (request.params as { kind?: string }).kind;
    return DARAJA_CALLBACK_KINDS.find((k) => k === kind);
  };
  const valid = (request: FastifyRequest) =>
    tokenMatches((request.params as { token?: string }).token) && kindOf(request) !== undefined;

  // Text bodies for the Daraja parsers alone; 404, 403, and Daraja's ack for every body under the token.
  guardProviderCallbacks(app, {
    ctx,
    provider: 'Daraja',
    valid,
    allowedIps: settings.callbackAllowedIps,
    ack: CALLBACK_ACK,
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
          sourceAddress: request.ip,
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
