import { ErrorLabel } from '@partner-api/contract';
import type { FastifyReply, FastifyServerOptions } from 'fastify';
import type { DestinationStream } from 'pino';
import type { AppContext } from '../context.ts';
import { createLogger, requestLoggerFactory } from '../lib/logger.ts';
import { generateRequestId } from './request-id.ts';

/** How a listener logs: not at all (`logger: false`), or to stdout, or to `logDestination` (tests). */
export type LogOptions = { logger?: boolean; logDestination?: DestinationStream };

/** What the public and the admin listener share: logs, request ids, and the router's refusals. */
export function baseFastifyOptions(ctx: AppContext, options: LogOptions) {
  return {
    ...(options.logger === false
      ? { logger: false }
      : {
          loggerInstance: createLogger(ctx.config.LOG_LEVEL, options.logDestination, ctx.config.LOG_FORMAT),
          // request.log becomes pino's child only when the request logs (lib/logger.ts).
          childLoggerFactory: requestLoggerFactory,
        }),
    // A whole request (headers and body) within REQUEST_TIMEOUT_MS, or Node answers 408 and closes:
    // a body trickled a byte at a time holds a connection no longer. Node checks every
    // connectionsCheckingInterval (30 s by default): a quarter of the timeout, at most 30 s.
    requestTimeout: ctx.config.REQUEST_TIMEOUT_MS,
    // Handed to http.createServer by Fastify (its `http` option; not in FastifyServerOptions' type).
    ...nodeServerOptions(ctx.config.REQUEST_TIMEOUT_MS),
    genReqId: generateRequestId,
    requestIdHeader: false,
    // Long enough that an over-long id reaches validation (400) instead of Fastify's own 414.
    routerOptions: { maxParamLength: 1000 },
    // Errors Fastify raises before any hook (a malformed URL) still get a request id and a spec shape.
    frameworkErrors: (error, request, reply) => {
      reply.header('x-request-id', request.id);
      request.log.info({ code: error.code }, 'request refused by the router');
      void (reply as FastifyReply)
        .code(400)
        .send({ error: ErrorLabel.badRequest, message: 'Malformed request URL' });
    },
  } satisfies FastifyServerOptions;
}

function nodeServerOptions(requestTimeoutMs: number): object {
  const every = Math.min(30_000, Math.max(250, Math.floor(requestTimeoutMs / 4)));
  // Node enforces requestTimeout only when headersTimeout (default 60 s) is not above it.
  const headersTimeout = Math.min(60_000, requestTimeoutMs);
  return { http: { connectionsCheckingInterval: every, headersTimeout, requestTimeout: requestTimeoutMs } };
}
