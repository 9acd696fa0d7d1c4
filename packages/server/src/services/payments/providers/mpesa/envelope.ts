import { z } from 'zod';
import type { HttpAnswer } from '../http-exchange.ts';
import type { AmbiguityReason } from '../outcome.ts';

/** Daraja's error envelope, the same on every API. */
const errorEnvelope = z.object({
  requestId: z.string().optional(),
  errorCode: z.string().min(1),
  errorMessage: z.string(),
});
export type DarajaError = z.infer<typeof errorEnvelope>;

export function errorEnvelopeOf(json: unknown): DarajaError | null {
  const parsed = errorEnvelope.safeParse(json);
  return parsed.success ? parsed.data : null;
}

/** The invalid-token codes differ by page (404.001.03, 400.003.01, 401.003.01): all mean "get a new token". */
const INVALID_TOKEN_CODES = new Set(['404.001.03', '400.003.01', '401.003.01']);
export const isInvalidToken = (e: DarajaError | null) => e !== null && INVALID_TOKEN_CODES.has(e.errorCode);

/** STK Query's answer while the customer has not answered: an error envelope that means PENDING. */
export const isStillProcessing = (e: DarajaError | null) =>
  e?.errorCode === '500.001.1001' && /being processed/i.test(e.errorMessage);

/** B2C's answer to a reused OriginatorConversationID ("System internal error." shares the code). */
export const isDuplicateOriginator = (e: DarajaError | null) =>
  e?.errorCode === '500.002.1001' && /duplicate/i.test(e.errorMessage);

/**
 * 5xx codes that are definite refusals, nothing done: wrong credentials / merchant does not exist /
 * unable to lock subscriber (500.001.1001), spike arrest (500.003.02), quota (500.003.03). Any other
 * 5xx (500.003.1001 Internal Server Error, a bare 502…) may have been acted on.
 */
const DEFINITE_5XX = new Set(['500.001.1001', '500.003.02', '500.003.03']);

export type Classified =
  | { kind: 'success'; status: number; json: unknown }
  | { kind: 'rejected'; code: string; message: string; httpStatus: number }
  | { kind: 'ambiguous'; reason: AmbiguityReason; detail: string }
  | { kind: 'envelope'; error: DarajaError; httpStatus: number };

/**
 * Sorts an answer: 2xx is success (the caller still checks the body), a 4xx envelope or a definite
 * 5xx envelope is a refusal, everything else is ambiguous. Envelopes a caller must see first
 * (invalid token, still processing, duplicate) come back as `envelope`.
 */
export function classify(answer: HttpAnswer): Classified {
  if (!answer.ok) return { kind: 'ambiguous', reason: answer.failure, detail: answer.detail };
  const { status, json } = answer;
  if (status >= 200 && status < 300) return { kind: 'success', status, json };
  const error = errorEnvelopeOf(json);
  if (error && (isInvalidToken(error) || isStillProcessing(error) || isDuplicateOriginator(error))) {
    return { kind: 'envelope', error, httpStatus: status };
  }
  if (error && status >= 400 && (status < 500 || DEFINITE_5XX.has(error.errorCode))) {
    return { kind: 'rejected', code: error.errorCode, message: error.errorMessage, httpStatus: status };
  }
  if (status >= 500) {
    const what = error ? `${error.errorCode} ${error.errorMessage}` : answer.text.slice(0, 200);
    return { kind: 'ambiguous', reason: 'server-error', detail: `HTTP ${status}: ${what}` };
  }
  return { kind: 'ambiguous', reason: 'unparseable', detail: `HTTP ${status} without an error envelope` };
}
