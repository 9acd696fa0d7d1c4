import type { Customer, PartnerApiError, PaymentStatus, PaymentTransaction } from '@partner-api/sdk';

export type Out = { write(text: string): unknown };

export function printJson(out: Out, value: unknown): void {
  out.write(`${JSON.stringify(value, null, 2)}\n`);
}

const dash = (value: string | null | undefined) => (value === null || value === undefined ? '-' : value);

/** One line per customer: id, name, msisdn, identification, active. */
export function customerRow(c: Customer): string {
  const name = `${c.firstName} ${c.lastName}`;
  const identification = c.identificationType
    ? `${c.identificationType}:${dash(c.identificationNumber)}`
    : '-';
  return [
    c.id,
    name.padEnd(24),
    dash(c.msisdn).padEnd(15),
    identification.padEnd(22),
    c.isActive ? 'active' : 'inactive',
  ]
    .join('  ')
    .trimEnd();
}

export function customerDetails(c: Customer): string {
  const rows: Array<[string, string]> = [
    ['id', c.id],
    ['name', `${c.firstName} ${c.lastName}`],
    ['msisdn', dash(c.msisdn)],
    [
      'identification',
      c.identificationType ? `${c.identificationType} ${dash(c.identificationNumber)}` : '-',
    ],
    ['referenceId', dash(c.referenceId)],
    ['active', String(c.isActive)],
    ['created', c.createdAt],
    ['updated', c.updatedAt],
  ];
  return `${rows.map(([k, v]) => `${k.padEnd(15)}${v}`).join('\n')}\n`;
}

function transactionLine(name: string, t: PaymentTransaction | undefined): string {
  if (!t) return `${name.padEnd(13)}-`;
  return `${name.padEnd(13)}${t.status.padEnd(10)}${t.type.padEnd(10)}${t.currency} ${t.amount}  ${t.provider}  ${t.id}`;
}

export function paymentLines(status: PaymentStatus): string {
  return [
    `order        ${status.orderId}`,
    transactionLine('payment', status.payment),
    transactionLine('disbursement', status.disbursement),
  ].join('\n');
}

/** The short form of a poll: `payment PENDING, disbursement -`. */
export function paymentSummary(status: PaymentStatus): string {
  return `payment ${status.payment?.status ?? '-'}, disbursement ${status.disbursement?.status ?? '-'}`;
}

/** `401 Unauthorized: Signature verification failed`, its details and the request id to quote. */
export function errorText(error: PartnerApiError): string {
  const hasDetails = (error.details ?? []).length > 0;
  const message = !hasDetails && error.message !== error.label ? `: ${error.message}` : '';
  const head = error.status === 0 ? error.message : `${error.status} ${error.label}${message}`;
  const lines = [head];
  for (const detail of error.details ?? []) lines.push(`  ${detail.field || '(body)'}: ${detail.message}`);
  if (error.requestId) lines.push(`  request id: ${error.requestId}`);
  return lines.join('\n');
}
