import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Received = { path: string; raw: string; body: unknown; at: Date };

/**
 * Our side of a provider's callbacks for adapter tests: a loopback HTTP server that records every
 * POST (path and body) and answers 200 with `ack`. Tests wait on what it holds.
 */
export async function startCallbackReceiver(ack: unknown = { ok: true }) {
  const received: Received[] = [];
  let waiters: Array<() => void> = [];
  const server = createServer((req, res) => {
    readAll(req).then((raw) => {
      let body: unknown = null;
      try {
        body = JSON.parse(raw);
      } catch {}
      received.push({ path: req.url ?? '', raw, body, at: new Date() });
      for (const wake of waiters) wake();
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(ack));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    /** Resolves with the callbacks matching `match` once there are `count` of them. */
    waitFor(match: (r: Received) => boolean, count = 1, timeoutMs = 5000): Promise<Received[]> {
      return new Promise((resolve, reject) => {
        const check = () => {
          const hits = received.filter(match);
          if (hits.length < count) return false;
          waiters = waiters.filter((w) => w !== check);
          clearTimeout(timer);
          resolve(hits);
          return true;
        };
        const timer = setTimeout(() => {
          waiters = waiters.filter((w) => w !== check);
          reject(
            new Error(`callback receiver: fewer than ${count} matching callbacks after ${timeoutMs} ms`),
          );
        }, timeoutMs);
        if (!check()) waiters.push(check);
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function readAll(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}
