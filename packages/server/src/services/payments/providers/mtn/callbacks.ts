import { z } from 'zod';
import type { ParseResult } from '../outcome.ts';
import { MTN_STATUSES, type MtnMapped, mapMtnStatus } from './result-codes.ts';

/**
 * The status body MTN answers to a status query and PUTs or POSTs to X-Callback-Url (the same
 * shape). Types are checked exactly; unknown extra properties are ignored. Never throws.
 */

/** Strings in real answers; the official example shows numbers: both are read as strings. */
const stringish = z.union([z.string(), z.number()]).transform(String);
const party = z.object({
  partyIdType: z.enum(['MSISDN', 'EMAIL', 'PARTY_CODE']),
  partyId: stringish,
});
/** A plain string live; `{ code, message }` in older clients and mocks: both accepted. */
const reason = z.union([
  z.string().trim().min(1),
  z.object({ code: z.string().trim().min(1), message: z.string().optional() }),
]);

const statusBody = z.object({
  status: z.enum(MTN_STATUSES),
  amount: stringish.refine((a) => /^\d+(\.\d+)?$/.test(a), 'amount must be a decimal').optional(),
  currency: z.string().trim().min(1).optional(),
  externalId: stringish.optional(),
  financialTransactionId: stringish.optional(),
  payer: party.optional(),
  payee: party.optional(),
  payerMessage: z.string().optional(),
  payeeNote: z.string().optional(),
  reason: reason.nullish(),
  /** Sent by no source seen; read when present. */
  referenceId: z.string().optional(),
});

export type MtnStatusBody = MtnMapped & {
  mtnStatus: (typeof MTN_STATUSES)[number];
  amount: string | null;
  currency: string | null;
  externalId: string | null;
  /** MTN's receipt: present on SUCCESSFUL. */
  financialTransactionId: string | null;
  /** The payer (request-to-pay) or payee (transfer) number. */
  partyId: string | null;
  referenceId: string | null;
};

export function parseMtnStatus(body: unknown): ParseResult<MtnStatusBody> {
  const json = asJson(body);
  if (json === undefined) return { ok: false, error: 'body: not JSON' };
  const parsed = statusBody.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { ok: false, error: `${issue?.path.join('.') || 'body'}: ${issue?.message ?? 'invalid'}` };
  }
  const d = parsed.data;
  const reasonCode = typeof d.reason === 'string' ? d.reason : (d.reason?.code ?? null);
  const reasonMessage = typeof d.reason === 'object' ? (d.reason?.message ?? null) : null;
  return {
    ok: true,
    value: {
      ...mapMtnStatus(d.status, reasonCode, reasonMessage),
      mtnStatus: d.status,
      amount: d.amount ?? null,
      currency: d.currency ?? null,
      externalId: d.externalId ?? null,
      financialTransactionId: d.financialTransactionId ?? null,
      partyId: d.payer?.partyId ?? d.payee?.partyId ?? null,
      referenceId: d.referenceId ?? null,
    },
  };
}

/** MTN's error body `{ code, message }` (the 4xx/5xx answers), or null when it is not one. */
export function mtnErrorOf(body: unknown): { code: string; message: string } | null {
  const parsed = z.object({ code: z.string().min(1), message: z.string().optional() }).safeParse(body);
  return parsed.success ? { code: parsed.data.code, message: parsed.data.message ?? '' } : null;
}

function asJson(body: unknown): unknown {
  if (typeof body !== 'string') return body;
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}
