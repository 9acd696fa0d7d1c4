import type { PaymentStatus } from '../outcome.ts';

/** `data.transaction.status` of an enquiry (and `status_code` of a callback) and our status. */
export const AIRTEL_TRANSACTION_STATUSES = {
  TS: { status: 'SUCCESS', text: 'Transaction success' },
  TF: { status: 'FAILED', text: 'Transaction failed' },
  TE: { status: 'FAILED', text: 'Transaction expired' },
  TIP: { status: 'PENDING', text: 'Transaction in progress' },
  TA: { status: 'PENDING', text: 'Transaction ambiguous: enquire again' },
} as const satisfies Record<string, { status: PaymentStatus; text: string }>;

export type AirtelTransactionStatus = keyof typeof AIRTEL_TRANSACTION_STATUSES;

export const isAirtelTransactionStatus = (s: unknown): s is AirtelTransactionStatus =>
  typeof s === 'string' && Object.hasOwn(AIRTEL_TRANSACTION_STATUSES, s);

/**
 * What an answer code means for the request that got it: `in-process` (taken, the outcome comes
 * later), `success`, `ambiguous` (may have been acted on: enquire), `duplicate` (our id was used
 * before: enquire), `not-found`, or `refused` (nothing done). [AT-CODES] meanings; [AT-ZM]'s
 * different DP008 table is not followed (docs/payments-airtel.md).
 */
export type CodeMeaning = 'in-process' | 'success' | 'ambiguous' | 'duplicate' | 'not-found' | 'refused';

export const AIRTEL_RESPONSE_CODES: Readonly<Record<string, { meaning: CodeMeaning; text: string }>> = {
  // Collections (DP008).
  DP00800001000: { meaning: 'ambiguous', text: 'Ambiguous: the transaction status is unknown' },
  DP00800001001: { meaning: 'success', text: 'Transaction success' },
  DP00800001002: { meaning: 'refused', text: 'Incorrect PIN' },
  DP00800001003: { meaning: 'refused', text: 'Exceeds withdrawal amount limit' },
  DP00800001004: { meaning: 'refused', text: 'Invalid amount' },
  DP00800001005: { meaning: 'refused', text: 'Transaction ID is invalid, or the user did not enter the PIN' },
  DP00800001006: { meaning: 'in-process', text: 'In process: transaction in pending state' },
  DP00800001007: { meaning: 'refused', text: 'Not enough balance' },
  DP00800001008: { meaning: 'refused', text: 'Refused' },
  DP00800001009: { meaning: 'refused', text: 'Do not honor' },
  DP00800001010: { meaning: 'refused', text: 'Transaction not permitted to payee' },
  DP00800001024: { meaning: 'ambiguous', text: 'Transaction timed out' },
  DP00800001025: { meaning: 'not-found', text: 'Transaction not found' },
  DP00800001026: { meaning: 'refused', text: 'Forbidden: x-signature and payload did not match' },
  DP00800001029: { meaning: 'refused', text: 'Transaction expired' },
  // Disbursements (DP009).
  DP00900001000: { meaning: 'ambiguous', text: 'Ambiguous: do an enquiry' },
  DP00900001001: { meaning: 'success', text: 'Transaction success' },
  DP00900001003: { meaning: 'refused', text: 'Maximum transaction limit reached for the day' },
  DP00900001004: { meaning: 'refused', text: 'Invalid amount (out of range)' },
  DP00900001005: { meaning: 'refused', text: 'Transaction failed' },
  DP00900001006: { meaning: 'in-process', text: 'In process' },
  DP00900001007: { meaning: 'refused', text: 'Insufficient funds' },
  DP00900001009: { meaning: 'refused', text: 'Invalid initiatee' },
  DP00900001010: { meaning: 'refused', text: 'Payer not an allowed user' },
  DP00900001011: { meaning: 'refused', text: 'Transaction with similar information already exists' },
  DP00900001012: { meaning: 'refused', text: 'Invalid mobile number' },
  DP00900001013: { meaning: 'refused', text: 'Refused (or invalid country, currency, PIN or parameters)' },
  DP00900001014: { meaning: 'ambiguous', text: 'Timed out: do an enquiry' },
  DP00900001015: { meaning: 'not-found', text: 'Transaction not found' },
  DP00900001016: { meaning: 'refused', text: 'Forbidden: x-signature and payload did not match' },
  DP00900001017: { meaning: 'duplicate', text: 'Duplicate transaction id: do an enquiry' },
  // ESB result codes.
  ESB000001: { meaning: 'ambiguous', text: 'Something went wrong' },
  ESB000004: { meaning: 'refused', text: 'Error initiating payment' },
  ESB000008: { meaning: 'refused', text: 'Field validation' },
  ESB000010: { meaning: 'success', text: 'Success' },
  ESB000011: { meaning: 'refused', text: 'Failed' },
  ESB000014: { meaning: 'ambiguous', text: 'Error fetching status' },
  ESB000033: { meaning: 'refused', text: 'Invalid MSISDN length' },
  ESB000034: { meaning: 'refused', text: 'Invalid country' },
  ESB000035: { meaning: 'refused', text: 'Invalid currency' },
  ESB000036: { meaning: 'refused', text: 'Invalid MSISDN length or it should start with 0' },
  ESB000039: { meaning: 'refused', text: 'Vendor not configured for country' },
  ESB000041: { meaning: 'duplicate', text: 'External transaction ID already exists' },
  ESB000045: { meaning: 'not-found', text: 'No transaction found' },
  // Gateway (router) codes, in a different envelope.
  ROUTER001: { meaning: 'refused', text: 'Wallet not configured' },
  ROUTER003: { meaning: 'refused', text: 'Missing header or body parameters' },
  ROUTER005: { meaning: 'refused', text: 'Country route not configured' },
  ROUTER006: { meaning: 'refused', text: 'Invalid country' },
  ROUTER007: { meaning: 'refused', text: 'User not authorized for country' },
  ROUTER110: { meaning: 'refused', text: 'Partner not found (X-Country missing)' },
  ROUTER112: { meaning: 'refused', text: 'Invalid currency' },
  ROUTER114: { meaning: 'refused', text: 'Error validating PIN' },
  ROUTER115: { meaning: 'refused', text: 'Incorrect PIN' },
  ROUTER116: { meaning: 'refused', text: 'Incorrect encrypted PIN' },
  ROUTER117: { meaning: 'ambiguous', text: 'Request timeout: do an enquiry' },
  ROUTER119: { meaning: 'refused', text: 'Invalid or missing currency' },
};

/** A failed transaction's message that says the customer declined it: CANCELLED, not FAILED. */
const CANCELLED_TEXT =
  /cancel|declined by (the )?(user|customer|subscriber)|rejected by (the )?(user|customer)/i;

export type MappedStatus = {
  status: PaymentStatus;
  /** For FAILED and CANCELLED: `Airtel <code>: <message>`. */
  reason: string | null;
};

/**
 * An enquiry's (or callback's) transaction status and message as our status. TF whose message says
 * the customer declined is CANCELLED (Airtel has no dedicated status for it); TE is FAILED (expired).
 */
export function mapTransactionStatus(code: AirtelTransactionStatus, message?: string | null): MappedStatus {
  const known = AIRTEL_TRANSACTION_STATUSES[code];
  const text = message?.trim() || known.text;
  if (known.status === 'PENDING' || known.status === 'SUCCESS') return { status: known.status, reason: null };
  const status = code === 'TF' && CANCELLED_TEXT.test(text) ? 'CANCELLED' : 'FAILED';
  return { status, reason: `Airtel ${code}: ${text}` };
}
