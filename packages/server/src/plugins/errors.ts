import { ErrorLabel } from '@partner-api/contract';
import type { FastifyInstance } from 'fastify';
import { isDatabaseUnavailable } from '../db/client.ts';
import { AppError } from '../lib/errors.ts';

/**
 * The one edge where failures become the spec's three body shapes. Nothing but the label ever
 * leaves for a 5xx: no message, stack or SQL (spec, Errors).
 */
export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error, request, reply) => {
    if (error instanceof AppError) {
      if (error.headers) reply.headers(error.headers);
      if (error.statusCode >= 500) request.log.warn({ status: error.statusCode }, error.label);
      return reply.code(error.statusCode).send(error.body());
    }
    if (isDatabaseUnavailable(error)) {
      request.log.error({ err: error }, 'database unavailable');
      return reply.code(503).send({ error: ErrorLabel.unavailable });
    }
    const code = (error as { code?: string }).code ?? '';
    if (code.startsWith('FST_ERR_CTP')) {
      // Malformed or oversized bodies: the spec wants the bare 500, not Fastify's 400/413/415.
      request.log.info({ code }, 'request body rejected by the parser');
    } else {
      request.log.error({ err: error }, 'unexpected error');
    }
    return reply.code(500).send({ error: ErrorLabel.internal });
  });

  app.setNotFoundHandler((_request, reply) => reply.code(404).send({ error: ErrorLabel.routeNotFound }));
}
