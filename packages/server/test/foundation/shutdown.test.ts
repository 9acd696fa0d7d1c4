import { request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { tempDataDir } from '@partner-api/testkit/app.ts';
import { until } from '@partner-api/testkit/listening.ts';
import { logEntries, type ServerProcess, startServer } from '@partner-api/testkit/process.ts';
import Fastify from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { installUnusedConnectionClose } from '../../src/plugins/unused-connections.ts';

/** A TCP connection that is open and has sent nothing, as a load balancer's pre-opened one. */
const openConnection = (url: string) =>
  new Promise<Socket>((resolve, reject) => {
    const { hostname, port } = new URL(url);
    const socket = connect(Number(port), hostname, () => resolve(socket));
    socket.once('error', reject);
  });

const closed = (socket: Socket) =>
  new Promise<void>((resolve) => (socket.closed ? resolve() : socket.once('close', () => resolve())));

/**
 * The close of a listener (product.md, deploys: SIGTERM stops accepting, finishes requests in
 * flight within 10 s and exits 0). Node counts a connection that never sent a byte as busy until its
 * headersTimeout (60 s), so such a connection used to hold the drain to its deadline.
 */
describe('closing with connections that never carried a request', () => {
  const started: ServerProcess[] = [];
  afterAll(async () => {
    await Promise.all(started.map((s) => s.stop('SIGKILL')));
  });

  it('partner-api serve drains at once and exits 0 with one open on each listener', async () => {
    const server = await startServer({ DATA_DIR: tempDataDir(), LOG_LEVEL: 'info', LOG_FORMAT: 'json' });
    started.push(server);
    // A used keep-alive connection beside them (Node closes those itself).
    expect((await fetch(`${server.baseUrl}/healthz`)).status).toBe(200);
    await openConnection(server.baseUrl);
    await openConnection(server.adminUrl);
    const code = await server.stop('SIGTERM');
    expect(code, server.output()).toBe(0);
    // The drain finished, rather than its deadline cutting the connections.
    expect(logEntries(server).map((entry) => entry.msg)).toContain('drained');
    expect(server.output()).not.toContain('drain deadline');
  }, 90_000);

  it('drops the unused connection and still waits for a request in flight and a half-sent one', async () => {
    // The public app's close settings (app.ts): requests on open connections are still served.
    const app = Fastify({ return503OnClosing: false });
    installUnusedConnectionClose(app);
    const accepted: Socket[] = [];
    app.server.on('connection', (socket: Socket) => accepted.push(socket));
    let entered!: () => void;
    const inHandler = new Promise<void>((resolve) => (entered = resolve));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    app.get('/slow', async () => {
      entered();
      await gate;
      return { done: true };
    });
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = new URL(url);

    const unused = await openConnection(url);
    // Headers begun, not finished: a request on its way in.
    const halfSent = await openConnection(url);
    halfSent.write('GET /slow HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    let halfAnswer = '';
    halfSent.on('data', (chunk) => (halfAnswer += chunk));
    const inFlight = new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port, path: '/slow', agent: false }, (res) => {
        let body = '';
        res.on('data', (chunk) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.end();
    });
    await inHandler;
    // The half-sent bytes have reached the server: two of its three sockets have read something.
    await until(
      'the half-sent headers to arrive',
      () => accepted.filter((s) => s.bytesRead > 0).length === 2,
    );

    let closedApp = false;
    const closing = app.close().then(() => (closedApp = true));
    await closed(unused);
    expect(halfSent.destroyed).toBe(false);
    expect(closedApp).toBe(false);

    release();
    expect(await inFlight).toEqual({ status: 200, body: '{"done":true}' });
    halfSent.write('Connection: close\r\n\r\n');
    await closed(halfSent);
    expect(halfAnswer).toMatch(/^HTTP\/1\.1 200 OK/);
    expect(halfAnswer).toContain('{"done":true}');
    await closing;
    expect(closedApp).toBe(true);
  });
});
