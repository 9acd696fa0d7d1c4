import { type RequestOptions, request } from 'node:https';
import { isIP } from 'node:net';
import { createSecureContext, rootCertificates, type SecureContext } from 'node:tls';
import { guardedLookup, isPublicAddress, type Lookup, RefusedAddressError } from './target.ts';

/** The most of a receiver's response body read (and kept, trimmed, in the attempt's error). */
export const RESPONSE_BODY_LIMIT = 4096;
/** The most of that body an attempt's error quotes. */
const ERROR_SNIPPET = 200;

/** What happened to an attempt, for the metrics (`webhook_delivery_attempts_total{outcome}`). */
export type SendKind = 'success' | 'http_error' | 'redirect' | 'timeout' | 'refused' | 'network';

export type SendOutcome = {
  kind: SendKind;
  /** The receiver's status, when it answered. */
  status: number | null;
  /** Null on a 2xx; else a short reason (never a stack, never the whole body). */
  error: string | null;
  latencyMs: number;
  /** Retry-After of a 429 or 503, raw. */
  retryAfter?: string;
};

export type SenderOptions = {
  allowPrivate: boolean;
  lookup: Lookup;
  timeoutMs: number;
  /** Made once by senderContext: per attempt it would parse every root certificate again. */
  secureContext: SecureContext;
};

/** The TLS context of every attempt: Node's roots, plus WEBHOOKS_CA_FILE's CAs (tests only). */
export function senderContext(extraCa?: string): SecureContext {
  return createSecureContext(extraCa ? { ca: [...rootCertificates, extraCa] } : {});
}

/**
 * One attempt: a POST over HTTPS to the webhook's URL, through `guardedLookup` so that the address
 * Node dials is the address checked (DNS rebinding cannot slip a private address in), a fresh
 * connection each attempt (no keep-alive: every attempt re-checks the address), no redirect
 * followed, one deadline for the whole exchange. Never throws.
 */
export function sendDelivery(
  target: { url: string; body: string; headers: Record<string, string> },
  options: SenderOptions,
): Promise<SendOutcome> {
  const started = performance.now();
  const latency = () => Math.round(performance.now() - started);
  return new Promise<SendOutcome>((resolve) => {
    let settled = false;
    const finish = (outcome: Omit<SendOutcome, 'latencyMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      resolve({ ...outcome, latencyMs: latency() });
    };
    let url: URL;
    try {
      url = new URL(target.url);
      if (url.protocol !== 'https:') throw new Error('not https');
    } catch {
      resolve({ kind: 'network', status: null, error: 'url is not a valid https URL', latencyMs: 0 });
      return;
    }
    // Node dials an IP literal without calling `lookup`: such a host is checked here instead.
    const literal = url.hostname.replace(/^\[|\]$/g, '');
    if (isIP(literal) !== 0 && !options.allowPrivate && !isPublicAddress(literal)) {
      resolve({
        kind: 'refused',
        status: null,
        error: `refused: ${literal} is a non-public address`,
        latencyMs: 0,
      });
      return;
    }
    // `secureContext` reaches tls.connect (Node passes the request's options through); the https
    // typings leave it out.
    const requestOptions: RequestOptions & { secureContext: SecureContext } = {
      method: 'POST',
      agent: false,
      headers: { ...target.headers, 'content-length': String(Buffer.byteLength(target.body)) },
      lookup: guardedLookup({ allowPrivate: options.allowPrivate, lookup: options.lookup }),
      secureContext: options.secureContext,
    };
    const req = request(url, requestOptions);
    const deadline = setTimeout(() => {
      finish({ kind: 'timeout', status: null, error: `timeout: no answer within ${options.timeoutMs} ms` });
      req.destroy();
    }, options.timeoutMs);
    req.on('error', (err: NodeJS.ErrnoException) =>
      finish({
        kind: err instanceof RefusedAddressError ? 'refused' : 'network',
        status: null,
        error: describeError(err),
      }),
    );
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      if (status >= 200 && status < 300) {
        // Success is the status line: the body is not needed (nor waited for, however long).
        finish({ kind: 'success', status, error: null });
        res.destroy();
        return;
      }
      const retryAfter = status === 429 || status === 503 ? res.headers['retry-after'] : undefined;
      const chunks: Buffer[] = [];
      let size = 0;
      const done = () => {
        const body = Buffer.concat(chunks).subarray(0, RESPONSE_BODY_LIMIT).toString('utf8');
        finish({
          kind: status >= 300 && status < 400 ? 'redirect' : 'http_error',
          status,
          error: statusError(status, body),
          ...(retryAfter ? { retryAfter } : {}),
        });
        res.destroy();
      };
      res.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        size += chunk.length;
        if (size >= RESPONSE_BODY_LIMIT) done();
      });
      res.on('end', done);
      res.on('error', done);
      res.on('close', done);
    });
    req.end(target.body);
  });
}

/** The reason a non-2xx answer failed, with a short, single-line quote of the body. */
function statusError(status: number, body: string): string {
  const snippet = body
    .replace(/\p{Cc}+/gu, ' ')
    .trim()
    .slice(0, ERROR_SNIPPET);
  const what = status >= 300 && status < 400 ? `redirect (HTTP ${status}) not followed` : `HTTP ${status}`;
  return snippet ? `${what}: ${snippet}` : what;
}

/** A connection-level failure as one line: refusals, DNS, TLS and socket errors by their code. */
function describeError(err: NodeJS.ErrnoException): string {
  if (err instanceof RefusedAddressError) return `refused: ${err.message}`;
  const code = err.code ? `${err.code}: ` : '';
  return `connection failed: ${code}${err.message}`.slice(0, 300);
}
