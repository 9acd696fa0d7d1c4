import { timingSafeEqual } from 'node:crypto';
import { ErrorLabel } from '@partner-api/contract';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../../context.ts';
import { AppError } from '../../../lib/errors.ts';
import { buildAllowlist, isAllowed } from '../../../lib/ip-allowlist.ts';
import { JSON_BODY_LIMIT } from '../../../plugins/body-parsing.ts';

const tokenChecked = Symbol('providerTokenChecked');
declare module 'fastify' {
  interface FastifyRequest {
    [tokenChecked]?: true;
  }
}

/** A constant-time check of a path token against `expected` (a wrong length fails in equal time). */
export function pathTokenMatcher(expectedToken: string): (token: unknown) => boolean {
  const expected = Buffer.from(expectedToken);
  return (token) => {
    const given = Buffer.from(typeof token === 'string' ? token : '');
    const same = timingSafeEqual(given.length === expected.length ? given : expected, expected);
    return same && given.length === expected.length;
  };
}

/**
 * The guard of a provider's callback routes, in the plugin `app` that holds only them: bodies are
 * read as text (`request.rawBody`) for the provider's own parser; a request `valid` rejects is the
 * unknown route's 404; one from outside `allowedIps` (when given) a 403; under a valid path every
 * error, an oversized body included, is answered 200 with `ack`, never a 500 or a stack.
 */
export function guardProviderCallbacks(
  app: FastifyInstance,
  options: {
    ctx: AppContext;
    provider: string;
    valid: (request: FastifyRequest) => boolean;
    allowedIps: readonly string[];
    ack: unknown;
  },
): void {
  const { ctx, provider, valid, ack } = options;
  const allowlist = options.allowedIps.length > 0 ? buildAllowlist(options.allowedIps) : undefined;

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
      request.log.warn({ ip: request.ip }, `${provider} callback from outside the allowlist`);
      return reply.code(403).send({ error: ErrorLabel.forbidden });
    }
    request[tokenChecked] = true;
  });

  app.setErrorHandler((error, request, reply) => {
    if (!request[tokenChecked]) {
      if (error instanceof AppError) {
        if (error.headers) reply.headers(error.headers);
        return reply.code(error.statusCode).send(error.body());
      }
      return notFound(reply);
    }
    request.log.warn({ err: error }, `${provider} callback could not be read; acknowledged`);
    ctx.metrics.paymentCallbacks.inc({ outcome: 'malformed' });
    return reply.code(200).send(ack);
  });
}

function notFound(reply: FastifyReply) {
  return reply.code(404).send({ error: ErrorLabel.routeNotFound });
}
