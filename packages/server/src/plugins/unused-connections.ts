import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';

/**
 * On close, drops the connections that never carried a request. Node closes idle keep-alive
 * connections when its server closes, but counts a connection that has not sent a byte as busy
 * until its headersTimeout (60 s): a client's or a load balancer's pre-opened connection held a
 * SIGTERM drain to its 10 s deadline (server.ts) and a test's close for a minute. A socket that
 * has read nothing has nothing in flight, so it is destroyed as the listener closes, as the common
 * terminators (stoppable, http-terminator) destroy every idle socket. A connection with a request
 * on it, even half sent, is still waited for.
 */
export function installUnusedConnectionClose(app: FastifyInstance): void {
  const open = new Set<Socket>();
  app.server.on('connection', (socket: Socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
  });
  app.addHook('preClose', (done) => {
    for (const socket of open) if (socket.bytesRead === 0) socket.destroy();
    done();
  });
}
