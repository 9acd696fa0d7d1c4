import type { PaymentStatus } from '../outcome.ts';

type Final = Exclude<PaymentStatus, 'PENDING'>;

/**
 * MTN's `reason` of a FAILED request-to-pay or transfer, and our status. Only a refusal by the
 * customer is CANCELLED; every other reason, known or not, is FAILED and named (docs/payments-mtn.md).
 * The text is ours, for the transaction's failure reason.
 */
export const MTN_REASONS: Readonly<Record<string, { status: Final; text: string }>> = {
  APPROVAL_REJECTED: { status: 'CANCELLED', text: 'The customer rejected the request.' },
  TRANSACTION_CANCELED: { status: 'CANCELLED', text: 'The transaction was cancelled.' },
  NOT_ENOUGH_FUNDS: { status: 'FAILED', text: 'Not enough funds (payer, or receiver limit on a transfer).' },
  PAYER_NOT_FOUND: { status: 'FAILED', text: 'The payer number is not a MoMo account.' },
  PAYEE_NOT_FOUND: { status: 'FAILED', text: 'The payee number is not a MoMo account.' },
  PAYER_LIMIT_REACHED: { status: 'FAILED', text: 'The payer limit is reached.' },
  PAYEE_NOT_ALLOWED_TO_RECEIVE: { status: 'FAILED', text: 'The payee is not allowed to receive.' },
  SENDER_ACCOUNT_NOT_ACTIVE: { status: 'FAILED', text: 'The payer account is blocked.' },
  COULD_NOT_PERFORM_TRANSACTION: {
    status: 'FAILED',
    text: 'Could not perform the transaction (live: the PIN was not entered in time).',
  },
  EXPIRED: { status: 'FAILED', text: 'The request expired before the customer answered.' },
  PAYMENT_NOT_APPROVED: { status: 'FAILED', text: 'The payment was not approved.' },
  NOT_ALLOWED: { status: 'FAILED', text: 'The partner is not allowed (blocked).' },
  NOT_ALLOWED_TARGET_ENVIRONMENT: { status: 'FAILED', text: 'Not allowed in this target environment.' },
  INVALID_CALLBACK_URL_HOST: { status: 'FAILED', text: 'The callback host is not the registered one.' },
  INVALID_CURRENCY: { status: 'FAILED', text: 'The currency is not that of the target environment.' },
  SERVICE_UNAVAILABLE: { status: 'FAILED', text: 'MTN service unavailable.' },
  INTERNAL_PROCESSING_ERROR: {
    status: 'FAILED',
    text: 'MTN internal processing error (most often not enough funds).',
  },
  RESOURCE_NOT_FOUND: { status: 'FAILED', text: 'Resource not found.' },
  RESOURCE_ALREADY_EXIST: { status: 'FAILED', text: 'Duplicated reference id.' },
  TRANSACTION_NOT_FOUND: { status: 'FAILED', text: 'Transaction not found.' },
};

export const MTN_STATUSES = ['PENDING', 'SUCCESSFUL', 'FAILED'] as const;
export type MtnStatus = (typeof MTN_STATUSES)[number];

export type MtnMapped =
  | { status: 'PENDING'; reasonCode: null; reason: null }
  | { status: 'SUCCESS'; reasonCode: null; reason: null }
  | { status: Final; reasonCode: string; reason: string };

/** MTN's status (and, when FAILED, its reason) as ours. A FAILED without a reason is FAILED too. */
export function mapMtnStatus(
  status: MtnStatus,
  reasonCode?: string | null,
  message?: string | null,
): MtnMapped {
  switch (status) {
    case 'PENDING':
      return { status: 'PENDING', reasonCode: null, reason: null };
    case 'SUCCESSFUL':
      return { status: 'SUCCESS', reasonCode: null, reason: null };
    case 'FAILED': {
      const code = reasonCode?.trim() || 'UNSPECIFIED';
      const known = MTN_REASONS[code];
      const text = message?.trim() || known?.text || 'no reason given';
      return { status: known?.status ?? 'FAILED', reasonCode: code, reason: `MTN ${code}: ${text}` };
    }
  }
}
