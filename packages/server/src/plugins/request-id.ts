import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Echo a client's X-Request-Id when it is sane (it lands in our logs), otherwise make one. */
export function generateRequestId(request: IncomingMessage): string {
  const given = request.headers['x-request-id'];
  return typeof given === 'string' && SANE_REQUEST_ID.test(given) ? given : randomUUID();
}

export function installRequestId(app: FastifyInstance): void {
  // Callback style, like every hook that awaits nothing: an async hook costs a promise and a
  // microtask per request (docs/performance.md, "The key route against bare
  // Fastify").
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });
}
