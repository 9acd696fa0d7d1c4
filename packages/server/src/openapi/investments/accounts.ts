import {
  AccountMessage,
  accountCreatedResponseSchema,
  accountListResponseSchema,
  accountResponseSchema,
  accountSchema,
  accountUpdatedResponseSchema,
  assetListResponseSchema,
  assetSchema,
  ErrorLabel,
  ErrorMessage,
  portfolioResponseSchema,
  portfolioSchema,
} from '@partner-api/contract';
import type { z } from 'zod';
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

/** The investments API's operations (docs/investments.md): accounts, their assets and portfolio valuation. */

/** Response schemas these operations share, named once under components. */
export const ACCOUNTS_SHARED_SCHEMAS: [string, z.ZodType][] = [
  ['Account', accountSchema],
  ['Asset', assetSchema],
  ['Portfolio', portfolioSchema],
];

const tag = 'Investments (preview)' as const;
const accountIdInvalid = validationVariant(
  'accountIdInvalid',
  'Malformed account id',
  'accountId',
  'Invalid account ID format',
);
const accountNotFound = notFound('No such account in the caller organization.', [
  variant(
    'accountNotFound',
    'Unknown or other organization',
    withMessage(ErrorLabel.notFound, AccountMessage.notFound),
  ),
]);
const byId = (description: string): ErrorResponseSpec[] => [
  badRequest(description, [accountIdInvalid]),
  accountNotFound,
];

export const ACCOUNTS_OPERATIONS: Record<string, OperationSpec> = {
  'POST /v1/accounts': {
    operationId: 'createAccount',
    summary: 'Open a customer’s investment account',
    description:
      `One account per customer. A new account answers 201 with message \`${AccountMessage.created}\` and ` +
      `emits ACCOUNT.CREATED and PORTFOLIO.CREATED; a customer who already has one (opened here or by ` +
      `their first order) gets it with 200 and message \`${AccountMessage.exists}\`. An inactive customer is ` +
      'refused with 409. `language` (en, sw; null: the organization’s default) is the language of the ' +
      'customer’s USSD screens and SMS, set with a new account; an existing account is answered unchanged ' +
      '(PATCH sets it).',
    tag,
    auth: 'signed',
    idempotent: true,
    preview: true,
    requestName: 'AccountCreate',
    successes: [
      {
        status: 201,
        description: 'Account created',
        name: 'AccountCreatedResponse',
        schema: accountCreatedResponseSchema,
      },
      {
        status: 200,
        description: 'The customer’s existing account',
        name: 'AccountCreatedResponse',
        schema: accountCreatedResponseSchema,
      },
    ],
    errors: [
      badRequest('Validation failed, or X-Idempotency-Key missing or not a UUID.', [
        validationVariant(
          'customerIdInvalid',
          'Malformed customer id',
          'customerId',
          'Invalid customer ID format',
        ),
        unparsedBodyVariant,
        idempotencyKeyRequired,
        idempotencyKeyNotUuid,
      ]),
      notFound('No such customer in the caller organization.', [
        variant(
          'customerNotFound',
          'Unknown or other organization',
          withMessage(ErrorLabel.notFound, ErrorMessage.customerNotFound),
        ),
      ]),
      {
        status: 409,
        description: 'The customer is inactive.',
        variants: [
          variant(
            'customerInactive',
            'Inactive customer',
            withMessage(ErrorLabel.conflict, AccountMessage.customerInactive),
          ),
        ],
      },
    ],
  },
  'GET /v1/accounts': {
    operationId: 'listAccounts',
    summary: 'List accounts, newest first',
    description:
      'Filters `customerId` and `status`. A page past the end gives `data: []` with true totals. Unknown ' +
      'parameters are refused.',
    tag,
    auth: 'signed',
    preview: true,
    successes: [
      {
        status: 200,
        description: 'One page of accounts',
        name: 'AccountListResponse',
        schema: accountListResponseSchema,
      },
    ],
    errors: [
      badRequest('A query parameter failed validation.', [
        validationVariant('limitTooLarge', 'limit above 100', 'limit', 'limit must be at most 100'),
        validationVariant(
          'statusUnknown',
          'Unknown status',
          'status',
          'status must be one of ACTIVE, CLOSED',
        ),
      ]),
    ],
  },
  'GET /v1/accounts/:accountId': {
    operationId: 'getAccount',
    summary: 'Get an account',
    description: "Another organization's account is answered exactly like a nonexistent one.",
    tag,
    auth: 'signed',
    preview: true,
    successes: [
      { status: 200, description: 'The account', name: 'AccountResponse', schema: accountResponseSchema },
    ],
    errors: byId('The id is not a CUID.'),
  },
  'PATCH /v1/accounts/:accountId': {
    operationId: 'updateAccount',
    summary: 'Set the customer’s language',
    description:
      '`language`: en or sw, the language of the customer’s USSD screens and SMS; null: the ' +
      'organization’s default, set by the operator. An absent field is left as it is. Answers message ' +
      `\`${AccountMessage.updated}\` with the account.`,
    tag,
    auth: 'signed',
    idempotent: true,
    preview: true,
    requestName: 'AccountUpdate',
    successes: [
      {
        status: 200,
        description: 'Account updated',
        name: 'AccountUpdatedResponse',
        schema: accountUpdatedResponseSchema,
      },
    ],
    errors: [
      badRequest('Validation failed, or X-Idempotency-Key missing or not a UUID.', [
        accountIdInvalid,
        validationVariant(
          'languageUnknown',
          'Unknown language',
          'language',
          'language must be one of en, sw, or null',
        ),
        unparsedBodyVariant,
        idempotencyKeyRequired,
        idempotencyKeyNotUuid,
      ]),
      accountNotFound,
    ],
  },
  'GET /v1/accounts/:accountId/assets': {
    operationId: 'listAccountAssets',
    summary: 'The account’s positions',
    description:
      'One entry per instrument held (units above 0), by symbol: units, available (units − pendingSettlement ' +
      '− locked), locked (0 today: a sell executes as it is placed), pendingSettlement (bought, not yet ' +
      'settled), averageCost (Σ units × price ÷ Σ units of the BUY executions, half up to 4 decimals), cost ' +
      '(units × averageCost), value (units × the latest price, with its as-of time) and unrealisedGain; ' +
      'amounts half up to the cent.',
    tag,
    auth: 'signed',
    preview: true,
    successes: [
      {
        status: 200,
        description: 'The positions',
        name: 'AssetListResponse',
        schema: assetListResponseSchema,
      },
    ],
    errors: byId('The id is not a CUID.'),
  },
  'GET /v1/accounts/:accountId/portfolio': {
    operationId: 'getAccountPortfolio',
    summary: 'The account’s valuation, now or at the end of a past day',
    description:
      'Total value, cost and unrealised gain, by investment type and per position. Without `asOf`: the ' +
      'holdings at the latest prices. With `asOf` (YYYY-MM-DD, not after today in Africa/Nairobi): the ' +
      'units ledger up to the end of that day in Africa/Nairobi, each at the last applied price before ' +
      'then. A position without a price by then has `value: null` and adds nothing to the totals.',
    tag,
    auth: 'signed',
    preview: true,
    successes: [
      {
        status: 200,
        description: 'The valuation',
        name: 'PortfolioResponse',
        schema: portfolioResponseSchema,
      },
    ],
    errors: [
      badRequest('The id is not a CUID, or asOf is not a date or is after today.', [
        accountIdInvalid,
        validationVariant('asOfInvalid', 'Not a date', 'asOf', 'asOf must be a date (YYYY-MM-DD)'),
        validationVariant('asOfFuture', 'After today', 'asOf', 'asOf must not be after today'),
      ]),
      accountNotFound,
    ],
  },
};
