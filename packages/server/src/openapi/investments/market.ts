import {
  DAILY_MAX_DAYS,
  dailyBarSchema,
  ErrorLabel,
  INVESTMENT_TYPES,
  InstrumentMessage,
  instrumentListResponseSchema,
  instrumentPricesResponseSchema,
  instrumentPricesSchema,
  instrumentResponseSchema,
  instrumentSchema,
  investmentTypeListResponseSchema,
  investmentTypeSchema,
  latestPriceSchema,
  TRADING_STATUSES,
} from '@partner-api/contract';
import type { z } from 'zod';
import { badRequest, notFound, validationVariant, variant, withMessage } from '../errors.ts';
import type { OperationSpec } from '../operations.ts';

/** The investments API's operations (docs/investments.md): investment types, instruments and their prices (read-only). */

const TAG = 'Investments (preview)' as const;
const FRESH =
  '`fresh`: an order placed now executes at this price — in the market’s continuous session and no older ' +
  'than the platform’s maximum price age where market hours are enforced (production), always where they are ' +
  'not (the sandbox’s default).';

const idInvalid = validationVariant(
  'idInvalid',
  'Malformed instrument id',
  'instrumentId',
  'Invalid instrument ID format',
);
const instrumentNotFound = notFound('No instrument in the catalogue has this id.', [
  variant(
    'instrumentNotFound',
    'Unknown instrument',
    withMessage(ErrorLabel.notFound, InstrumentMessage.notFound),
  ),
]);

export const MARKET_OPERATIONS: Record<string, OperationSpec> = {
  'GET /v1/investment-types': {
    operationId: 'listInvestmentTypes',
    summary: 'The investment types the platform admits',
    description:
      `Every type the platform admits (today: ${INVESTMENT_TYPES.join(', ')}), each with its id (the code ` +
      'instruments carry as `investmentType`), name, description and how many ACTIVE instruments it has. ' +
      'A short fixed list: not paginated. The same for every organization.',
    tag: TAG,
    auth: 'signed',
    preview: true,
    successes: [
      {
        status: 200,
        description: 'The investment types',
        name: 'InvestmentTypeListResponse',
        schema: investmentTypeListResponseSchema,
      },
    ],
    errors: [
      badRequest('A query parameter was given.', [
        validationVariant('unknownParameter', 'Any parameter', 'page', 'Unknown field'),
      ]),
    ],
  },
  'GET /v1/instruments': {
    operationId: 'listInstruments',
    summary: 'List instruments, by symbol',
    description:
      'The platform’s catalogue, the same for every organization, ordered by symbol. Filters: ' +
      `\`investmentType\`, \`tradingStatus\` (${TRADING_STATUSES.join(' or ')}), and \`search\`, a ` +
      'case-insensitive substring of the symbol or the name (the USSD search). A page past the end gives ' +
      `\`data: []\` with true totals. Unknown parameters are refused. ${FRESH}`,
    tag: TAG,
    auth: 'signed',
    preview: true,
    successes: [
      {
        status: 200,
        description: 'One page of instruments',
        name: 'InstrumentListResponse',
        schema: instrumentListResponseSchema,
      },
    ],
    errors: [
      badRequest('A query parameter failed validation.', [
        validationVariant('limitTooLarge', 'limit above 100', 'limit', 'limit must be at most 100'),
        validationVariant(
          'tradingStatusUnknown',
          'Unknown trading status',
          'tradingStatus',
          `tradingStatus must be one of ${TRADING_STATUSES.join(', ')}`,
        ),
      ]),
    ],
  },
  'GET /v1/instruments/:instrumentId': {
    operationId: 'getInstrument',
    summary: 'Get an instrument',
    description: `With its latest price and that price’s as-of time. ${FRESH}`,
    tag: TAG,
    auth: 'signed',
    preview: true,
    successes: [
      {
        status: 200,
        description: 'The instrument',
        name: 'InstrumentResponse',
        schema: instrumentResponseSchema,
      },
    ],
    errors: [badRequest('The id is not a CUID.', [idInvalid]), instrumentNotFound],
  },
  'GET /v1/instruments/:instrumentId/prices': {
    operationId: 'getInstrumentPrices',
    summary: 'An instrument’s latest price and daily open, high, low and close',
    description:
      '`from` and `to` are dates (YYYY-MM-DD) in the instrument’s market time zone (`timeZone`), both ' +
      'included: `to` defaults to today there, `from` to the 30 days that end on `to`; a range is at most ' +
      `${DAILY_MAX_DAYS} days. One bar per day with an applied price, oldest first: a weekend, a holiday or a ` +
      `day without prices has none. ${FRESH} An unknown instrument is a 404 before its dates are checked.`,
    tag: TAG,
    auth: 'signed',
    preview: true,
    successes: [
      {
        status: 200,
        description: 'The latest price and the daily bars',
        name: 'InstrumentPricesResponse',
        schema: instrumentPricesResponseSchema,
      },
    ],
    errors: [
      badRequest('The id is not a CUID, or a date failed validation.', [
        idInvalid,
        validationVariant('dateMalformed', 'Not YYYY-MM-DD', 'from', 'date must be YYYY-MM-DD'),
        validationVariant('dateImpossible', 'No such date', 'to', 'date must be a real date'),
        validationVariant('rangeBackwards', 'from after to', 'from', 'must not be after to'),
        validationVariant(
          'rangeTooLong',
          `More than ${DAILY_MAX_DAYS} days`,
          'to',
          `must be at most ${DAILY_MAX_DAYS} days from from`,
        ),
      ]),
      instrumentNotFound,
    ],
  },
};

/** Response schemas these operations share, named once under components. */
export const MARKET_SHARED_SCHEMAS: [string, z.ZodType][] = [
  ['InvestmentType', investmentTypeSchema],
  ['Instrument', instrumentSchema],
  ['LatestPrice', latestPriceSchema],
  ['InstrumentPrices', instrumentPricesSchema],
  ['DailyBar', dailyBarSchema],
];
