import {
  ErrorLabel,
  ErrorMessage,
  RequestMessage,
  requestCancelledResponseSchema,
  requestCreatedResponseSchema,
  requestListResponseSchema,
  requestResponseSchema,
  requestSchema,
} from '@partner-api/contract';
import type { z } from 'zod';
import { MARKET_CLOSED } from '../../services/ussd/menus.ts';
import {
  badRequest,
  type ErrorResponseSpec,
  idempotencyKeyNotUuid,
  idempotencyKeyRequired,
  notFound,
  unparsedBodyVariant,
  validationVariant,
  variant,
  withMessage,
} from '../errors.ts';
import type { OperationSpec } from '../operations.ts';

/** The investments API's operations (docs/investments.md): requests (orders): buy by amount, sell by units, list, get, cancel. */

const TAG = 'Investments (preview)' as const;

const requestIdInvalid = validationVariant(
  'requestIdInvalid',
  'Not a CUID',
  'requestId',
  'Invalid request ID format',
);
const requestNotFound = notFound("No such request in the organization (another organization's included).", [
  variant('requestNotFound', 'Unknown request', withMessage(ErrorLabel.notFound, RequestMessage.notFound)),
]);
const conflict = (description: string, variants: ReturnType<typeof variant>[]): ErrorResponseSpec => ({
  status: 409,
  description,
  variants,
});
const refused = (key: string, summary: string, message: string) =>
  variant(key, summary, withMessage(ErrorLabel.conflict, message));

export const REQUESTS_OPERATIONS: Record<string, OperationSpec> = {
  'POST /v1/requests': {
    operationId: 'createRequest',
    summary: 'Place a buy by amount or a sell by units for a customer',
    description:
      'A buy (`side: BUY`) names the whole `amount` to pay in the instrument’s currency: the request is ' +
      'PENDING_PAYMENT and the customer gets the mobile-money prompt, as from USSD; once paid it executes ' +
      '(EXECUTED) at the price then, when the market allows. A sell (`side: SELL`) names whole `units`, no ' +
      'more than are available (held, not pending settlement): it executes at once and the proceeds are ' +
      'paid out to the customer’s number. Refused beforehand, with nothing written, by the rules of the USSD ' +
      'confirmation screens: the instrument’s minimum and whole units (400); market hours, the price’s age, ' +
      'the units available, the customer’s number and its network’s provider and currency (409). ' +
      `Answers 201 with message \`${RequestMessage.created}\`; the id is the order id ` +
      '`GET /payment/status/{orderId}` takes. Emits REQUEST.CREATED and TRANSACTION.CREATED (a sell also ' +
      'ASSET.UPDATED and PORTFOLIO.UPDATED; a buy ASSET.* and PORTFOLIO.UPDATED when it executes).',
    tag: TAG,
    auth: 'signed',
    idempotent: true,
    preview: true,
    requestName: 'RequestCreate',
    successes: [
      {
        status: 201,
        description: 'Request placed',
        name: 'RequestCreatedResponse',
        schema: requestCreatedResponseSchema,
      },
    ],
    errors: [
      badRequest('Validation failed, or X-Idempotency-Key missing or not a UUID.', [
        validationVariant('amountRequired', 'A buy without amount', 'amount', 'amount is required for a BUY'),
        validationVariant('unitsNotAllowed', 'A buy with units', 'units', 'units is not allowed for a BUY'),
        validationVariant(
          'belowMinimum',
          'Below the instrument’s minimum',
          'amount',
          'The minimum for SCOM is KES 100.',
        ),
        validationVariant(
          'wholeUnitsOnly',
          'Not enough for one unit of a whole-units instrument',
          'amount',
          'SCOM is sold in whole units only. One unit costs KES 250.00.',
        ),
        validationVariant('unknownField', 'Unknown field', 'quantity', 'Unknown field'),
        unparsedBodyVariant,
        idempotencyKeyRequired,
        idempotencyKeyNotUuid,
      ]),
      notFound("No such customer or instrument (another organization's customer included).", [
        variant(
          'customerNotFound',
          'Unknown customer',
          withMessage(ErrorLabel.notFound, ErrorMessage.customerNotFound),
        ),
        variant(
          'instrumentNotFound',
          'Unknown instrument',
          withMessage(ErrorLabel.notFound, RequestMessage.instrumentNotFound),
        ),
      ]),
      conflict('The request cannot be placed now; nothing was written.', [
        refused('marketClosed', 'Outside the continuous session', MARKET_CLOSED),
        refused('stalePrice', 'The price is too old', 'No current price for SCOM. Try again later.'),
        refused(
          'unitsNotAvailable',
          'More units than available to sell',
          'Not enough units available: 5 requested, 3 available to sell.',
        ),
        refused(
          'noProvider',
          'No provider for the customer’s network',
          'Payments from Airtel are not available yet.',
        ),
        refused(
          'noPhone',
          'The customer has no number',
          'Cannot proceed: no phone number is registered for payment.',
        ),
        refused('customerInactive', 'The customer is not active', RequestMessage.customerInactive),
        refused('instrumentNotListed', 'The instrument is delisted', RequestMessage.instrumentNotListed),
      ]),
    ],
  },
  'GET /v1/requests': {
    operationId: 'listRequests',
    summary: 'List requests, newest first',
    description:
      'Filters: `customerId`, `instrumentId`, `status`, and `createdFrom`/`createdTo` (UTC dates, both ' +
      'included). A page past the end gives `data: []` with true totals. Unknown parameters are refused.',
    tag: TAG,
    auth: 'signed',
    preview: true,
    successes: [
      {
        status: 200,
        description: 'One page of requests',
        name: 'RequestListResponse',
        schema: requestListResponseSchema,
      },
    ],
    errors: [
      badRequest('A query parameter failed validation.', [
        validationVariant(
          'statusUnknown',
          'Unknown status',
          'status',
          'status must be one of PENDING_PAYMENT, PAID, EXECUTED, FAILED, CANCELLED',
        ),
        validationVariant(
          'datesReversed',
          'createdTo before createdFrom',
          'createdTo',
          'createdTo must not be before createdFrom',
        ),
      ]),
    ],
  },
  'GET /v1/requests/:requestId': {
    operationId: 'getRequest',
    summary: 'Get a request',
    description:
      'With its execution once executed and its payment transactions (collection, payout, refund), oldest first.',
    tag: TAG,
    auth: 'signed',
    preview: true,
    successes: [
      { status: 200, description: 'The request', name: 'RequestResponse', schema: requestResponseSchema },
    ],
    errors: [badRequest('The id is not a CUID.', [requestIdInvalid]), requestNotFound],
  },
  'POST /v1/requests/:requestId/cancel': {
    operationId: 'cancelRequest',
    summary: 'Cancel a request not yet executed',
    description:
      'No body. PENDING_PAYMENT → CANCELLED (the prompt’s collection is cancelled; a late payment is ' +
      'refunded); PAID → CANCELLED with the amount refunded to the number that paid. ' +
      `Answers 200 with message \`${RequestMessage.cancelled}\`. Emits REQUEST.UPDATED.`,
    tag: TAG,
    auth: 'signed',
    idempotent: true,
    preview: true,
    successes: [
      {
        status: 200,
        description: 'Request cancelled',
        name: 'RequestCancelledResponse',
        schema: requestCancelledResponseSchema,
      },
    ],
    errors: [
      badRequest('The id is not a CUID, or X-Idempotency-Key missing or not a UUID.', [
        requestIdInvalid,
        idempotencyKeyRequired,
        idempotencyKeyNotUuid,
      ]),
      requestNotFound,
      conflict('The request is EXECUTED, FAILED or CANCELLED.', [
        refused('notCancellable', 'Already executed', RequestMessage.notCancellable('EXECUTED')),
      ]),
    ],
  },
};

/** Response schemas these operations share, named once under components. */
export const REQUESTS_SHARED_SCHEMAS: [string, z.ZodType][] = [['InvestmentRequest', requestSchema]];
