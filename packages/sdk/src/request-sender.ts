import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { ErrorMessage } from '@partner-api/contract';
import { AuthenticationError, ConnectionError, errorFromResponse, type PartnerApiError } from './errors.ts';
import { shouldRetry } from './retry.ts';

/** Per-call options of every method. */
export type RequestOptions = {
  /** Reused on every retry of this call; one is generated per call when absent. */
  idempotencyKey?: string;
  /** Per attempt. */
  timeoutMs?: number;
  maxRetries?: number;
  signal?: AbortSignal;
};

export type RequestSpec = {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT';
  /** Below /v1, e.g. '/customers'. */
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  /** 'signed': token, x-client-id and an RFC 9421 signature; 'none': POST /oauth/token, GET /webhooks/key. */
  auth: 'signed' | 'none';
  /** Sends X-Idempotency-Key (the spec's mutating endpoints). */
  idempotent?: boolean;
  /** Sign with this token instead of the cached one, and never refresh it (revoking a given token). */
  token?: string;
  /** The media type asked for (`Accept`); application/json unless told (a report's PDF). */
  accept?: string;
};

export type ApiResponse<T> = { status: number; body: T; headers: Record<string, string> };

/** What an attempt needs signed: its own fresh `created`, digest and token. */
export type AttemptToAuthenticate = {
  method: string;
  url: string;
  body: string | undefined;
  idempotencyKey: string | undefined;
  token: string;
};

export type RequestEvent = {
  method: string;
  path: string;
  url: string;
  attempt: number;
  idempotencyKey: string | undefined;
};
export type ResponseEvent = RequestEvent & {
  /** 0 when the attempt got no answer (see `error`). */
  status: number;
  requestId: string | undefined;
  elapsedMs: number;
  retryAfter: string | undefined;
  error?: PartnerApiError;
};

export type SenderConfig = {
  apiBase: string;
  fetch: typeof fetch;
  maxRetries: number;
  timeoutMs: number;
  userAgent: string;
  tokens: { get(): Promise<string>; invalidate(token: string): Promise<void> };
  /** The per-attempt authenticator: authorization, x-client-id, Content-Digest, Signature(-Input). */
  authenticate(attempt: AttemptToAuthenticate): Record<string, string>;
  onRequest(event: RequestEvent): void;
  onResponse(event: ResponseEvent): void;
};

function headersOf(response: Response): Record<string, string> {
  const out: Record<string, string> = {};
  response.headers.forEach((value, key) => {
    out[key] = value;
  });
  return out;
}

function parseBody(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * One logical call: builds the URL once, picks its idempotency key once, then runs attempts. Each
 * attempt is authenticated afresh (a token refreshed in between and a new `created` are both
 * picked up); the pure shouldRetry decides whether and when to go again. A 401 for an expired or
 * revoked token is answered once with a new token, outside the retry budget.
 */
export class RequestSender {
  constructor(private readonly config: SenderConfig) {}

  buildUrl(path: string, query?: RequestSpec['query']): string {
    const url = new URL(this.config.apiBase + path);
    for (const [key, value] of Object.entries(query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    return url.href;
  }

  async request<T>(spec: RequestSpec, options: RequestOptions = {}): Promise<ApiResponse<T>> {
    const url = this.buildUrl(spec.path, spec.query);
    const body = spec.body === undefined ? undefined : JSON.stringify(spec.body);
    const idempotencyKey = spec.idempotent ? (options.idempotencyKey ?? randomUUID()) : undefined;
    const maxRetries = options.maxRetries ?? this.config.maxRetries;
    let tokenRefreshed = false;

    for (let attempt = 0; ; ) {
      const event: RequestEvent = { method: spec.method, path: spec.path, url, attempt, idempotencyKey };
      const token = spec.auth === 'signed' ? (spec.token ?? (await this.config.tokens.get())) : undefined;
      const headers = this.headersFor(spec, url, body, idempotencyKey, token);
      this.config.onRequest(event);
      const started = Date.now();
      const outcome = await this.attempt(spec.method, url, headers, body, options);
      const elapsedMs = Date.now() - started;

      if (outcome.kind === 'response' && outcome.status < 400) {
        this.config.onResponse({ ...event, ...this.summary(outcome), elapsedMs });
        return { status: outcome.status, body: outcome.body as T, headers: outcome.headers };
      }
      const error =
        outcome.kind === 'response'
          ? errorFromResponse(outcome.status, outcome.body, outcome.headers)
          : outcome.error;
      const status = outcome.kind === 'response' ? outcome.status : 0;
      this.config.onResponse({
        ...event,
        status,
        requestId: error.requestId,
        retryAfter: error.headers['retry-after'],
        elapsedMs,
        error,
      });

      if (token !== undefined && spec.token === undefined && !tokenRefreshed && this.tokenRejected(error)) {
        tokenRefreshed = true;
        await this.config.tokens.invalidate(token);
        continue;
      }
      const decision = shouldRetry({
        attempt,
        maxRetries,
        status: status === 0 ? undefined : status,
        error: status === 0 ? error : undefined,
        retryAfterHeader: error.headers['retry-after'],
      });
      if (!decision.retry) throw error;
      await sleep(decision.delayMs, undefined, options.signal ? { signal: options.signal } : undefined);
      attempt += 1;
    }
  }

  /**
   * A long-lived GET (a text/event-stream): one signed attempt whose body is left unread for the
   * caller. No retries (the caller reconnects); a rejected token is replaced once, as in `request`.
   * An error answer is thrown as its typed error.
   */
  async open(spec: RequestSpec, options: { signal?: AbortSignal } = {}): Promise<Response> {
    const url = this.buildUrl(spec.path, spec.query);
    for (let tokenRefreshed = false; ; tokenRefreshed = true) {
      const token = await this.config.tokens.get();
      const headers = this.headersFor(spec, url, undefined, undefined, token);
      let response: Response;
      try {
        response = await this.config.fetch(url, { method: spec.method, headers, signal: options.signal });
      } catch (error) {
        if (options.signal?.aborted) throw options.signal.reason ?? error;
        throw new ConnectionError(`${spec.method} ${url} failed: ${(error as Error).message}`, error);
      }
      if (response.status < 400) return response;
      const error = errorFromResponse(response.status, parseBody(await response.text()), headersOf(response));
      if (tokenRefreshed || !this.tokenRejected(error)) throw error;
      await this.config.tokens.invalidate(token);
    }
  }

  /** Only the token's own rejection is cured by a new token; a bad signature would fail again. */
  private tokenRejected(error: PartnerApiError): boolean {
    return error instanceof AuthenticationError && error.message === ErrorMessage.tokenInvalid;
  }

  private headersFor(
    spec: RequestSpec,
    url: string,
    body: string | undefined,
    idempotencyKey: string | undefined,
    token: string | undefined,
  ): Record<string, string> {
    const base: Record<string, string> = {
      accept: spec.accept ?? 'application/json',
      'user-agent': this.config.userAgent,
    };
    if (token === undefined) {
      return body === undefined ? base : { ...base, 'content-type': 'application/json' };
    }
    return {
      ...base,
      ...this.config.authenticate({ method: spec.method, url, body, idempotencyKey, token }),
    };
  }

  private summary(outcome: { status: number; headers: Record<string, string> }) {
    return {
      status: outcome.status,
      requestId: outcome.headers['x-request-id'],
      retryAfter: outcome.headers['retry-after'],
    };
  }

  private async attempt(
    method: string,
    url: string,
    headers: Record<string, string>,
    body: string | undefined,
    options: RequestOptions,
  ): Promise<
    | { kind: 'response'; status: number; body: unknown; headers: Record<string, string> }
    | { kind: 'network'; error: ConnectionError }
  > {
    const timeoutMs = options.timeoutMs ?? this.config.timeoutMs;
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
    try {
      const response = await this.config.fetch(url, { method, headers, body, signal });
      const text = await response.text();
      return {
        kind: 'response',
        status: response.status,
        body: parseBody(text),
        headers: headersOf(response),
      };
    } catch (error) {
      // The caller's own abort is final; everything else is a connection failure worth a retry.
      if (options.signal?.aborted) throw options.signal.reason ?? error;
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      const reason = cause?.code ?? cause?.message ?? (error as Error).message;
      const message = timeout.aborted
        ? `${method} ${url} timed out after ${timeoutMs} ms`
        : `${method} ${url} failed: ${reason}`;
      return { kind: 'network', error: new ConnectionError(message, error) };
    }
  }
}
