import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';

/** Never logged: credentials, signatures and keys (product.md, Operations). */
export const LOG_REDACT = [
  'req.headers.authorization',
  'req.headers.signature',
  'req.headers["x-callback-signature"]',
  '*.clientSecret',
  '*.privateKey',
  '*.secret',
  '*.token',
];

let stdout: pino.DestinationStream | undefined;

/**
 * JSON lines on stdout, written asynchronously (sonic-boom): the request's thread formats the line
 * and goes on, libuv writes it, and lines that pile up while a write is in flight go out together.
 * pino's synchronous default cost one write(2) per line on the event loop: ~8% of a signed GET's CPU
 * on this VM (docs/performance.md). Whatever is buffered is flushed synchronously when the process
 * exits (pino's own exit hook), so a drained or crashing server loses no line; only a SIGKILL can
 * lose the lines of the last moment.
 */
export function createLogger(level: string): FastifyBaseLogger {
  stdout ??= pino.destination({ dest: 1, sync: false });
  return pino({ level, redact: LOG_REDACT }, stdout);
}
