/**
 * A real HTTPS receiver for webhook deliveries, and the certificate it presents (made at run time
 * by openssl, trusted through WEBHOOKS_CA_FILE). No server code: the bench uses it too.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

export type Tls = { dir: string; certFile: string; cert: string; key: string };

/** A self-signed certificate for `localhost` (openssl, Ed25519), its file given as WEBHOOKS_CA_FILE. */
export function makeCertificate(): Tls {
  const dir = mkdtempSync(path.join(tmpdir(), 'webhook-tls-'));
  const certFile = path.join(dir, 'cert.pem');
  const keyFile = path.join(dir, 'key.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ed25519',
      '-nodes',
      '-keyout',
      keyFile,
      '-out',
      certFile,
      '-days',
      '2',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost',
    ],
    { stdio: 'ignore' },
  );
  return { dir, certFile, cert: readFileSync(certFile, 'utf8'), key: readFileSync(keyFile, 'utf8') };
}

export type Received = {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
  /** performance.now() of this process when the body had arrived. */
  at: number;
};

/** What the receiver does with the n-th request (0-based): answer, or hold it open ('hang'). */
export type Script = (
  index: number,
  request: Received,
) => { status: number; headers?: Record<string, string>; body?: string } | 'hang';

export type Receiver = {
  /** The webhook URL (host `localhost`, the certificate's name). */
  url: string;
  port: number;
  received: Received[];
  /** TCP connections accepted (a refused attempt must not even connect). */
  connections: number;
  /** The envelopes received, parsed. */
  envelopes(): Array<{ eventId: string; event: string; createdAt: number; data: Record<string, unknown> }>;
  script: Script;
  close(): Promise<void>;
};

export const OK: Script = () => ({ status: 200, body: 'ok' });

/** A real HTTPS receiver on every address (IPv4 and IPv6 `localhost`), on a free port. */
export async function startReceiver(tls: Tls, script: Script = OK, pathName = '/hooks'): Promise<Receiver> {
  const received: Received[] = [];
  const held: Array<{ destroy(): void }> = [];
  const receiver: Receiver = {
    url: '',
    port: 0,
    received,
    connections: 0,
    script,
    envelopes: () => received.map((r) => JSON.parse(r.body)),
    close: () =>
      new Promise<void>((resolve) => {
        for (const h of held) h.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server: Server = createServer({ cert: tls.cert, key: tls.key }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers))
        headers[k] = Array.isArray(v) ? v.join(', ') : String(v);
      const r: Received = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: performance.now(),
      };
      const index = received.length;
      received.push(r);
      const answer = receiver.script(index, r);
      if (answer === 'hang') {
        held.push(res.socket ?? { destroy() {} });
        return;
      }
      res.writeHead(answer.status, answer.headers ?? {});
      res.end(answer.body ?? '');
    });
  });
  server.on('connection', () => {
    receiver.connections += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, resolve));
  receiver.port = (server.address() as AddressInfo).port;
  receiver.url = `https://localhost:${receiver.port}${pathName}`;
  return receiver;
}
