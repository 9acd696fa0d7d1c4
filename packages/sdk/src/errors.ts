import type { ValidationDetail } from '@partner-api/contract';
import type { PaymentStatusResponse } from './types.ts';

export type PartnerApiErrorInit = {
  status: number;
  /** The body's `error` field: 'Validation failed', 'Unauthorized', 'CUSTOMER_NOT_FOUND', ... */
  label: string;
  message?: string;
  details?: ValidationDetail[];
  requestId?: string;
  headers?: Record<string, string>;
  /** The parsed body (or the raw text when it was not JSON). */
  body?: unknown;
  cause?: unknown;
};

/**
 * Every failure the SDK throws. `status` is the HTTP status (0 for a ConnectionError), `label` the
 * spec's `error` field, `message` its `message` (or the label when the body has none), `details` the
 * validation entries, `requestId` the X-Request-Id to quote to support.
 */
export class PartnerApiError extends Error {
  override name = 'PartnerApiError';
  readonly status: number;
  readonly label: string;
  readonly details: ValidationDetail[] | undefined;
  readonly requestId: string | undefined;
  readonly headers: Record<string, string>;
  readonly body: unknown;

  constructor(init: PartnerApiErrorInit) {
    super(init.message ?? init.label, init.cause === undefined ? undefined : { cause: init.cause });
    this.status = init.status;
    this.label = init.label;
    this.details = init.details;
    this.requestId = init.requestId;
    this.headers = init.headers ?? {};
    this.body = init.body;
  }
}

/** 400: validation failed (see `details`), a bad path reference, or a missing idempotency key. */
export class ValidationError extends PartnerApiError {
  override name = 'ValidationError';
}

/** 401: token, client id, credentials, signature or Content-Digest. */
export class AuthenticationError extends PartnerApiError {
  override name = 'AuthenticationError';
  /** Sandbox only: the server's reason, time and signature base for a failed signature. */
  get signatureDebug(): string | undefined {
    return this.headers['signature-debug'];
  }
}

/** 403: the client IP is outside the credential's allowlist, or a session of another organization. */
export class PermissionError extends PartnerApiError {
  override name = 'PermissionError';
}

/** 404: the resource does not exist or belongs to another organization. */
export class NotFoundError extends PartnerApiError {
  override name = 'NotFoundError';
}

/** 409: a request with the same idempotency key was still in flight after every retry. */
export class ConflictError extends PartnerApiError {
  override name = 'ConflictError';
}

/** 422: the idempotency key was already used with a different payload. */
export class IdempotencyError extends PartnerApiError {
  override name = 'IdempotencyError';
}

/** 429: the rate limit held after every retry; `retryAfterSeconds` says when to come back. */
export class RateLimitError extends PartnerApiError {
  override name = 'RateLimitError';
  get retryAfterSeconds(): number | undefined {
    const value = Number(this.headers['retry-after']);
    return Number.isFinite(value) ? value : undefined;
  }
}

/** 5xx (503 included) after every retry. */
export class ApiError extends PartnerApiError {
  override name = 'ApiError';
}

/** The request never got an HTTP answer: refused, reset, DNS, or timed out. `status` is 0. */
export class ConnectionError extends PartnerApiError {
  override name = 'ConnectionError';
  constructor(message: string, cause?: unknown) {
    super({ status: 0, label: 'Connection error', message, cause });
  }
}

/** `paymentStatus.waitForFinal` gave up; `lastStatus` is the last answer it saw. */
export class WaitTimeoutError extends Error {
  override name = 'WaitTimeoutError';
  constructor(
    message: string,
    readonly lastStatus: PaymentStatusResponse,
  ) {
    super(message);
  }
}

type ErrorClass = new (init: PartnerApiErrorInit) => PartnerApiError;

const BY_STATUS: Record<number, ErrorClass> = {
  400: ValidationError,
  401: AuthenticationError,
  403: PermissionError,
  404: NotFoundError,
  409: ConflictError,
  422: IdempotencyError,
  429: RateLimitError,
};

/** One mapper from an HTTP error answer to its typed error (spec, Errors: three body shapes). */
export function errorFromResponse(
  status: number,
  body: unknown,
  headers: Record<string, string>,
): PartnerApiError {
  const record = body && typeof body === 'object' ? (body as Record<string, unknown>) : {};
  const label = typeof record.error === 'string' ? record.error : `HTTP ${status}`;
  const details = Array.isArray(record.details) ? (record.details as ValidationDetail[]) : undefined;
  const message =
    typeof record.message === 'string'
      ? record.message
      : details && details.length > 0
        ? `${label}: ${details.map((d) => (d.field ? `${d.field}: ${d.message}` : d.message)).join('; ')}`
        : undefined;
  const Class = BY_STATUS[status] ?? (status >= 500 ? ApiError : PartnerApiError);
  return new Class({ status, label, message, details, requestId: headers['x-request-id'], headers, body });
}
