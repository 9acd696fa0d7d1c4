import {
  ErrorLabel,
  LEDGER_TRANSACTION_TYPES,
  LedgerMessage,
  monthlyStatementDataSchema,
  REPORT_TYPES,
  reportListResponseSchema,
  reportResponseSchema,
  reportSchema,
  TransactionValidationMessage,
  tradeConfirmationDataSchema,
  transactionListResponseSchema,
  transactionReferenceSchema,
  transactionResponseSchema,
  transactionSchema,
} from '@partner-api/contract';
import type { z } from 'zod';
import { badRequest, notFound, validationVariant, variant, withMessage } from '../errors.ts';
import type { OperationSpec } from '../operations.ts';

/** The investments API's operations (docs/investments.md): transactions (the money and units ledgers) and reports. */

/**
 * Response schemas these operations share, named once under components. A transaction's `execution`
 * stays inline: a nullable `$ref` is not valid OpenAPI 3.0.
 */
export const LEDGER_SHARED_SCHEMAS: [string, z.ZodType][] = [
  ['Transaction', transactionSchema],
  ['TransactionReference', transactionReferenceSchema],
  ['Report', reportSchema],
  ['TradeConfirmationData', tradeConfirmationDataSchema],
  ['MonthlyStatementData', monthlyStatementDataSchema],
];

const TAG = 'Investments (preview)' as const;

const limitTooLarge = validationVariant(
  'limitTooLarge',
  'limit above 100',
  'limit',
  'limit must be at most 100',
);
const customerIdFilterInvalid = validationVariant(
  'customerIdInvalid',
  'Malformed customerId',
  'customerId',
  'Invalid customer ID format',
);

/** The 400s every list shares: limit, a malformed customerId, an unknown type. */
const listFilterErrors = (types: readonly string[]) => [
  limitTooLarge,
  customerIdFilterInvalid,
  validationVariant('typeUnknown', 'Unknown type', 'type', `type must be one of ${types.join(', ')}`),
];

/** A get's 400 (a malformed `{name}Id`) and 404 (unknown, or another organization's). */
const byIdErrors = (name: 'transaction' | 'report', message: string) => [
  badRequest('The id is not a CUID.', [
    validationVariant(`${name}IdInvalid`, `Malformed ${name} id`, `${name}Id`, `Invalid ${name} ID format`),
  ]),
  notFound(`No such ${name} in the caller organization.`, [
    variant(`${name}NotFound`, 'Unknown or other organization', withMessage(ErrorLabel.notFound, message)),
  ]),
];

export const LEDGER_OPERATIONS: Record<string, OperationSpec> = {
  'GET /v1/transactions': {
    operationId: 'listTransactions',
    summary: 'List customers’ money and unit movements, newest first',
    description:
      'Both ledgers in one list. `ledger: MONEY`: the payment transactions of requests, every status ' +
      '(`COLLECTION` in, `PAYOUT` a sell’s proceeds and `REFUND` a buy’s money out; `amount` signed, + ' +
      'collected from the customer, − paid out), booked (`bookingDate`) once the money moved; its `id` is the ' +
      'payment transaction’s, the subject of TRANSACTION.* events. `ledger: UNITS`: the units ledger’s ' +
      'entries (`BUY`, `SELL`, `OPENING`, `REVERSAL`; `units` signed), with the `execution` of a buy or sell; ' +
      '`valueDate` is its settlement date. Append-only: a correction is a `REVERSAL`, never an edit. ' +
      '`references` name the request (`REQUEST`), the payment (`PAYMENT`) and the execution (`EXECUTION`). ' +
      'Filters: `customerId`, `requestId`, `type`, `ledger`, and `from`/`to` (YYYY-MM-DD, inclusive, on ' +
      '`createdAt`’s date in the market’s time zone, EAT). An unknown or another organization’s customer or ' +
      'request lists nothing. Unknown parameters are refused.',
    tag: TAG,
    auth: 'signed',
    preview: true,
    successes: [
      {
        status: 200,
        description: 'One page of transactions',
        name: 'TransactionListResponse',
        schema: transactionListResponseSchema,
      },
    ],
    errors: [
      badRequest('A query parameter failed validation.', [
        ...listFilterErrors(LEDGER_TRANSACTION_TYPES),
        validationVariant('fromInvalid', 'Not a date', 'from', 'from must be a date (YYYY-MM-DD)'),
        validationVariant('toBeforeFrom', 'to before from', 'to', TransactionValidationMessage.toBeforeFrom),
      ]),
    ],
  },
  'GET /v1/transactions/:transactionId': {
    operationId: 'getTransaction',
    summary: 'Get a transaction',
    description:
      'A payment transaction’s id (as in TRANSACTION.* events and `GET /payment/status/{orderId}`) answers ' +
      'its money movement, whatever its status; a units entry’s id its unit movement. Another ' +
      'organization’s transaction is answered exactly like a nonexistent one.',
    tag: TAG,
    auth: 'signed',
    preview: true,
    successes: [
      {
        status: 200,
        description: 'The transaction',
        name: 'TransactionResponse',
        schema: transactionResponseSchema,
      },
    ],
    errors: byIdErrors('transaction', LedgerMessage.transactionNotFound),
  },
  'GET /v1/reports': {
    operationId: 'listReports',
    summary: 'List reports, newest first',
    description:
      `Typed, immutable records of a customer (\`type\`: ${REPORT_TYPES.join(', ')}); a correction is a new ` +
      'report naming the one it `replaces`. `data` is the content its type defines: `TradeConfirmationData` ' +
      '(one per execution) or `MonthlyStatementData` (one per account and month). Filters: `customerId`, ' +
      '`type`. Unknown parameters are refused.',
    tag: TAG,
    auth: 'signed',
    preview: true,
    successes: [
      {
        status: 200,
        description: 'One page of reports',
        name: 'ReportListResponse',
        schema: reportListResponseSchema,
      },
    ],
    errors: [badRequest('A query parameter failed validation.', [...listFilterErrors(REPORT_TYPES)])],
  },
  'GET /v1/reports/:reportId': {
    operationId: 'getReport',
    summary: 'Get a report',
    description:
      'JSON by default; with `Accept: application/pdf` (ranked above application/json) the same report as ' +
      'a PDF carrying every figure of its `data`. `data` is a `TradeConfirmationData` or a ' +
      '`MonthlyStatementData` (components). Another organization’s report is answered exactly like a ' +
      'nonexistent one.',
    tag: TAG,
    auth: 'signed',
    preview: true,
    successes: [
      {
        status: 200,
        description: 'The report',
        name: 'ReportResponse',
        schema: reportResponseSchema,
        alternatives: [{ mediaType: 'application/pdf', description: 'The report as a PDF document' }],
      },
    ],
    errors: byIdErrors('report', LedgerMessage.reportNotFound),
  },
};
