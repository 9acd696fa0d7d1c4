import type { ExchangeRecord } from './outcome.ts';

export const REDACTED = '[REDACTED]';

/**
 * Returns a copy of `value` whose properties named in `secretKeys` (at any depth) are redacted, and
 * in whose strings every occurrence of a `secretValues` entry (e.g. the callback path token inside
 * CallBackURL) is replaced by the marker.
 */
export function redact(
  value: unknown,
  secretKeys: ReadonlySet<string>,
  secretValues: readonly string[] = [],
): unknown {
  if (typeof value === 'string')
    return secretValues.reduce((text, secret) => (secret ? text.replaceAll(secret, REDACTED) : text), value);
  if (Array.isArray(value)) return value.map((item) => redact(item, secretKeys, secretValues));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    out[key] = secretKeys.has(key) ? REDACTED : redact(inner, secretKeys, secretValues);
  }
  return out;
}

/** What came back: a response (body parsed as JSON when it is JSON), or why none did. */
export type HttpAnswer =
  | { ok: true; status: number; json: unknown; text: string }
  | { ok: false; failure: 'timeout' | 'network'; detail: string };

export type HttpRequest = {
  provider: string;
  operation: string;
  method: 'GET' | 'POST';
  url: string;
  headers: Record<string, string>;
  body?: unknown;
  timeoutMs: number;
  secretKeys: ReadonlySet<string>;
  /** Strings redacted wherever they occur in a recorded body (a path token inside a URL). */
  secretValues?: readonly string[];
  fetch?: typeof fetch;
};

/**
 * Sends one request with Node's fetch and a per-call deadline (AbortSignal.timeout covers the body
 * too), and returns the answer with its exchange record. Never throws: a timeout and a network
 * failure (reset, refused) are answers the caller classifies.
 */
export async function sendHttp(
  request: HttpRequest,
): Promise<{ answer: HttpAnswer; record: ExchangeRecord }> {
  const startedAt = new Date();
  const started = performance.now();
  const url = new URL(request.url);
  const record: ExchangeRecord = {
    provider: request.provider,
    operation: request.operation,
    method: request.method,
    path: url.pathname,
    requestBody:
      request.body === undefined ? null : redact(request.body, request.secretKeys, request.secretValues),
    status: null,
    responseBody: null,
    startedAt,
    latencyMs: 0,
    error: null,
  };
  let answer: HttpAnswer;
  try {
    const response = await (request.fetch ?? fetch)(url, {
      method: request.method,
      headers:
        request.body === undefined
          ? request.headers
          : { ...request.headers, 'content-type': 'application/json' },
      body: request.body === undefined ? undefined : JSON.stringify(request.body),
      signal: AbortSignal.timeout(request.timeoutMs),
    });
    const text = await response.text();
    answer = { ok: true, status: response.status, json: parseJson(text), text };
    record.status = response.status;
    record.responseBody = redact(answer.json ?? text, request.secretKeys, request.secretValues);
  } catch (err) {
    answer = classifyFailure(err);
    record.error = `${answer.failure}: ${answer.detail}`;
  }
  record.latencyMs = Math.round(performance.now() - started);
  return { answer, record };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function classifyFailure(err: unknown): { ok: false; failure: 'timeout' | 'network'; detail: string } {
  const error = err instanceof Error ? err : new Error(String(err));
  if (error.name === 'TimeoutError' || error.name === 'AbortError') {
    return { ok: false, failure: 'timeout', detail: error.message };
  }
  const cause = error.cause instanceof Error ? error.cause : undefined;
  const code = (cause as { code?: string } | undefined)?.code;
  return {
    ok: false,
    failure: 'network',
    detail: [error.message, code ?? cause?.message].filter(Boolean).join(': '),
  };
}
