import type { IncomingMessage } from 'node:http';
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
    // The client went away mid-body (Node's "aborted" ECONNRESET): its doing, not the database's. Said
    // at a low level, never counted as a database failure; nobody is left to read an answer.
    if (isClientAbort(error, request.raw)) {
      request.log.info({ code: (error as { code?: string }).code }, 'request aborted by the client');
      return reply.code(400).send({ error: ErrorLabel.badRequest });
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

/** Node's error for a request body cut off by the client (the socket closed before its end). */
function isClientAbort(error: unknown, raw: IncomingMessage): boolean {
  const code = (error as { code?: string }).code;
  return (
    (code === 'ECONNRESET' && (error as Error).message === 'aborted') ||
    (raw.readableAborted && raw.destroyed)
  );
}
