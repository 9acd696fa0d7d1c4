import type { PaymentStatus } from '../outcome.ts';

type Final = Exclude<PaymentStatus, 'PENDING'>;

/**
 * Daraja result codes (STK callback and query, B2C and Transaction Status results) and our status.
 * The text is Daraja's description, used when a body carries none. Only 0 is a success and only
 * 1032 a cancellation; every other code, known or not, is a failure that names the code.
 */
export const DARAJA_RESULT_CODES: Readonly<Record<string, { status: Final; text: string }>> = {
  '0': { status: 'SUCCESS', text: 'The service request is processed successfully.' },
  '1': { status: 'FAILED', text: 'The balance is insufficient for the transaction.' },
  '2': { status: 'FAILED', text: 'Declined due to limit rule: less than the minimum transaction amount.' },
  '3': { status: 'FAILED', text: 'Declined due to limit rule: greater than the maximum transaction amount.' },
  '4': { status: 'FAILED', text: 'Declined due to limit rule: would exceed daily transfer limit.' },
  '8': { status: 'FAILED', text: 'Declined due to limit rule: would exceed the maximum balance.' },
  '11': { status: 'FAILED', text: 'The DebitParty is in an invalid state.' },
  '17': { status: 'FAILED', text: 'Rule limited: same amount to the same customer within 2 minutes.' },
  '21': { status: 'FAILED', text: 'The initiator is not allowed to initiate this request.' },
  '1001': { status: 'FAILED', text: 'Unable to lock subscriber, a transaction is already in process.' },
  '1019': { status: 'FAILED', text: 'Transaction has expired.' },
  '1025': { status: 'FAILED', text: 'An error occurred while sending a push request.' },
  '1032': { status: 'CANCELLED', text: 'Request cancelled by user.' },
  '1037': { status: 'FAILED', text: 'DS timeout user cannot be reached.' },
  '2001': { status: 'FAILED', text: 'The initiator information is invalid.' },
  '2006': {
    status: 'FAILED',
    text: 'Declined due to account rule: the account status does not allow this transaction.',
  },
  '2028': { status: 'FAILED', text: 'The request is not permitted according to product assignment.' },
  '2040': { status: 'FAILED', text: 'Credit party customer type (unregistered) is not supported.' },
  '8006': { status: 'FAILED', text: 'The security credential is locked.' },
  '9999': { status: 'FAILED', text: 'An error occurred while sending a push request.' },
  SFC_IC0003: { status: 'FAILED', text: 'The operator does not exist.' },
};

export type MappedResult = {
  status: Final;
  /** The code as a string: `"0"`, `"1032"`, `"SFC_IC0003"`. */
  code: string;
  /** For FAILED and CANCELLED: `M-Pesa <code>: <description>`, for the transaction's failure reason. */
  reason: string | null;
};

/** Maps a result code (number in callbacks, string in queries) and its description to our status. */
export function mapResultCode(code: number | string, description?: string): MappedResult {
  const key = String(code).trim();
  const known = DARAJA_RESULT_CODES[key];
  const status = known?.status ?? 'FAILED';
  if (status === 'SUCCESS') return { status, code: key, reason: null };
  const text = description?.trim() || known?.text || 'unknown result code';
  return { status, code: key, reason: `M-Pesa ${key}: ${text}` };
}
