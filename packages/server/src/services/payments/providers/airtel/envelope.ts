import { z } from 'zod';
import type { HttpAnswer } from '../http-exchange.ts';
import type { AmbiguityReason } from '../outcome.ts';
import { AIRTEL_RESPONSE_CODES, type CodeMeaning } from './result-codes.ts';

/** Airtel's answer envelope on the product APIs: `status` always, `data` when there is one. */
const statusEnvelope = z.object({
  data: z.unknown().optional(),
  status: z.object({
    code: z.union([z.string(), z.number()]).optional(),
    message: z.string().optional(),
    success: z.boolean(),
    result_code: z.string().optional(),
    response_code: z.string().optional(),
  }),
});
/** The gateway's own envelope (a missing X-Country: `ROUTER110`). */
const routerEnvelope = z.object({ status_code: z.string().min(1), status_message: z.string().optional() });
/** OAuth errors (token endpoint, and a bad bearer on the product APIs). */
const oauthError = z.object({ error: z.string().min(1), error_description: z.string().optional() });

export type AirtelEnvelope = z.infer<typeof statusEnvelope>;

export type Classified =
  /** `status.success: true`: `meaning` from its codes (in-process, success, or ambiguous). */
  | { kind: 'success'; envelope: AirtelEnvelope; code: string; message: string; meaning: CodeMeaning }
  /** `status.success: false` (often under HTTP 200), a router or OAuth error: `meaning` says what to do. */
  | { kind: 'failure'; code: string; message: string; meaning: CodeMeaning; httpStatus: number }
  | { kind: 'invalid-token'; detail: string }
  /** 429: nothing was done; try again later. */
  | { kind: 'throttled'; detail: string }
  | { kind: 'ambiguous'; reason: AmbiguityReason; detail: string };

/** When codes disagree the most careful meaning wins: a duplicate or ambiguity is never a refusal. */
const PRECEDENCE: readonly CodeMeaning[] = [
  'duplicate',
  'ambiguous',
  'not-found',
  'in-process',
  'refused',
  'success',
];

function meaningOf(
  codes: Array<string | undefined>,
  fallback: CodeMeaning,
): { meaning: CodeMeaning; code: string } {
  const known = codes
    .filter((c): c is string => c !== undefined && AIRTEL_RESPONSE_CODES[c] !== undefined)
    .map((code) => ({ code, meaning: AIRTEL_RESPONSE_CODES[code]!.meaning }));
  for (const meaning of PRECEDENCE) {
    const hit = known.find((k) => k.meaning === meaning);
    if (hit) return hit;
  }
  return { meaning: fallback, code: codes.find((c) => c !== undefined) ?? 'none' };
}

/**
 * Sorts an answer by its BODY first: many failures come as HTTP 200 with `status.success: false`.
 * A timeout, a reset, a 5xx or 408 is ambiguous; a bad bearer (401/403 invalid_token) asks for a
 * new token; 429 is throttled; a 4xx or `success: false` is a failure whose codes say whether it
 * is a refusal, a duplicate of our id, a not-found, or ambiguous.
 */
export function classify(answer: HttpAnswer): Classified {
  if (!answer.ok) return { kind: 'ambiguous', reason: answer.failure, detail: answer.detail };
  const { status, json } = answer;
  const oauth = oauthError.safeParse(json);
  if ((status === 401 || status === 403) && oauth.success && oauth.data.error === 'invalid_token')
    return { kind: 'invalid-token', detail: oauth.data.error_description ?? oauth.data.error };
  if (status === 429) return { kind: 'throttled', detail: `HTTP 429: ${answer.text.slice(0, 200)}` };
  if (status >= 500 || status === 408) {
    return {
      kind: 'ambiguous',
      reason: 'server-error',
      detail: `HTTP ${status}: ${answer.text.slice(0, 200)}`,
    };
  }
  const env = statusEnvelope.safeParse(json);
  if (env.success) {
    const s = env.data.status;
    const message = s.message ?? '';
    if (s.success && status >= 200 && status < 300) {
      const { meaning, code } = meaningOf([s.response_code, s.result_code], 'success');
      // A success envelope is never a refusal; `refused` codes under success:true read as success.
      return {
        kind: 'success',
        envelope: env.data,
        code,
        message,
        meaning: meaning === 'refused' ? 'success' : meaning,
      };
    }
    const { meaning, code } = meaningOf([s.response_code, s.result_code], 'refused');
    return {
      kind: 'failure',
      code,
      message,
      meaning: meaning === 'success' ? 'refused' : meaning,
      httpStatus: status,
    };
  }
  const router = routerEnvelope.safeParse(json);
  if (router.success && status >= 400) {
    const { meaning, code } = meaningOf([router.data.status_code], 'refused');
    return { kind: 'failure', code, message: router.data.status_message ?? '', meaning, httpStatus: status };
  }
  if (oauth.success && status >= 400) {
    return {
      kind: 'failure',
      code: oauth.data.error,
      message: oauth.data.error_description ?? '',
      meaning: 'refused',
      httpStatus: status,
    };
  }
  if (status >= 400 && status < 500) {
    return {
      kind: 'failure',
      code: `HTTP ${status}`,
      message: answer.text.slice(0, 200),
      meaning: 'refused',
      httpStatus: status,
    };
  }
  return { kind: 'ambiguous', reason: 'unparseable', detail: `HTTP ${status}: unexpected body` };
}
