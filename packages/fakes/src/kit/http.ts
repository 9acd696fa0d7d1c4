import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What a fake answers: a status and a JSON body; without a body, an empty answer. */
/** An answer: `body` as JSON, or as it is with `contentType` (a CSV, say). */
export type Answer = { status: number; body?: unknown; contentType?: string };

/** One request as read: `body` is undefined when the request had none and null when it is not JSON. */
export type Received = {
  req: IncomingMessage;
  url: URL;
  method: string;
  raw: string;
  body: unknown;
};

export type Listening = { url: string; port: number; close(): Promise<void> };

export async function receive(req: IncomingMessage): Promise<Received> {
  const raw = await readBody(req);
  let body: unknown;
  try {
    body = raw === '' ? undefined : JSON.parse(raw);
  } catch {
    body = null;
  }
  return { req, url: new URL(req.url ?? '/', 'http://fake'), method: req.method ?? '', raw, body };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

export function writeAnswer(res: ServerResponse, answer: Answer) {
  if (answer.body === undefined) {
    res.writeHead(answer.status, { 'content-length': '0' }).end();
    return;
  }
  if (answer.contentType) {
    res.writeHead(answer.status, { 'content-type': answer.contentType }).end(String(answer.body));
    return;
  }
  res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body));
}

/**
 * Listens on host:port (port 0: any free one). A handler that throws gets a 500 with the
 * provider's own error shape (`crashBody`), so a bug in a fake still reads like the provider.
 */
export async function listen(
  options: { host?: string; port?: number },
  handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
  crashBody: (err: unknown) => unknown,
): Promise<Listening> {
  const host = options.host ?? '127.0.0.1';
  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify(crashBody(err)));
    });
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}`,
    port,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
