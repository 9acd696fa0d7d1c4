import { z } from 'zod';
import type { ParseResult } from '../outcome.ts';
import { callbackHash, callbackHashSubject, hashMatches } from './crypto.ts';
import {
  type AirtelTransactionStatus,
  isAirtelTransactionStatus,
  type MappedStatus,
  mapTransactionStatus,
} from './result-codes.ts';
import type { CallbackHashInput } from './settings.ts';

/** What our callback route answers Airtel (no body is documented; any 200 is taken). */
export const CALLBACK_ACK = { status: 'OK' } as const;

/**
 * `{ transaction: { id, message, status_code, airtel_money_id }, hash? }`. No amount and no phone:
 * those come from our own record (and the enquiry). Extra fields seen in third-party samples
 * (`amount`, `currency`, `msisdn`) are allowed and ignored.
 */
const callbackBody = z.object({
  transaction: z.object({
    id: z.union([z.string().trim().min(1), z.number().transform(String)]),
    message: z.string().nullish(),
    status_code: z.string().trim().min(1),
    airtel_money_id: z.string().nullish(),
  }),
  hash: z.string().optional(),
});

export type AirtelCallback = MappedStatus & {
  transactionId: string;
  statusCode: AirtelTransactionStatus;
  message: string;
  airtelMoneyId: string | null;
  hash: string | null;
  /** The parsed body, for hash verification. */
  body: Record<string, unknown>;
};

/** Parses a callback body exactly; never throws. A status code other than TS/TF/TA/TIP/TE is malformed. */
export function parseAirtelCallback(raw: string | unknown): ParseResult<AirtelCallback> {
  let json: unknown = raw;
  if (typeof raw === 'string') {
    try {
      json = JSON.parse(raw);
    } catch {
      return { ok: false, error: 'not JSON' };
    }
  }
  const parsed = callbackBody.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { ok: false, error: `${issue?.path.join('.') || 'body'}: ${issue?.message ?? 'invalid'}` };
  }
  const t = parsed.data.transaction;
  const code = t.status_code.toUpperCase();
  if (!isAirtelTransactionStatus(code))
    return { ok: false, error: `transaction.status_code: unknown "${t.status_code}"` };
  return {
    ok: true,
    value: {
      transactionId: t.id,
      statusCode: code,
      ...mapTransactionStatus(code, t.message),
      message: t.message ?? '',
      airtelMoneyId: t.airtel_money_id || null,
      hash: parsed.data.hash ?? null,
      body: json as Record<string, unknown>,
    },
  };
}

export type HashVerdict = 'not-configured' | 'valid' | 'missing' | 'mismatch';

/** Checks the callback `hash` when a key is configured (HMAC-SHA256, base64, constant-time). */
export function verifyCallbackHash(
  cb: Pick<AirtelCallback, 'hash' | 'body'>,
  key: string | undefined,
  mode: CallbackHashInput = 'transaction',
): HashVerdict {
  if (!key) return 'not-configured';
  if (!cb.hash) return 'missing';
  return hashMatches(cb.hash, callbackHash(key, callbackHashSubject(cb.body, mode))) ? 'valid' : 'mismatch';
}
