import {
  CustomerMessage,
  cuidSchema,
  customerCreatedResponseSchema,
  customerListResponseSchema,
  customerResponseSchema,
  customerUpdatedResponseSchema,
  ErrorLabel,
  ErrorMessage,
  meResponseSchema,
  PaymentMessage,
  paymentStatusResponseSchema,
  revokeResponseSchema,
  tokenResponseSchema,
  UssdMessage,
  UssdValidationMessage,
  ussdResponseSchema,
  webhookKeyResponseSchema,
} from '@partner-api/contract';
import { z } from 'zod';
import {
  badRequest,
  type ErrorResponseSpec,
  forbidden,
  idempotencyKeyNotUuid,
  idempotencyKeyRequired,
  notFound,
  unparsedBodyVariant,
  validationVariant,
  variant,
  withMessage,
} from './errors.ts';

export type SuccessSpec = {
  status: number;
  description: string;
  /** Component name of the body schema. */
  name: string;
  schema: z.ZodType;
  /** Extra response headers (component names). */
  headers?: string[];
  /** Other media types the same response is served as, by content negotiation (`Accept`). */
  alternatives?: { mediaType: string; description: string }[];
};

/**
 * What the route schemas cannot say: summary, success bodies and errors. Request bodies, query and
 * path parameters come from the zod schemas the route validates with (route-catalog.ts).
 */
export type OperationSpec = {
  operationId: string;
  summary: string;
  description: string;
  tag: 'Authentication' | 'Customers' | 'Payments' | 'Webhooks' | 'USSD' | 'Investments (preview)';
  /** `signed`: bearer token, x-client-id and an RFC 9421 signature; `none`: unauthenticated. */
  auth: 'signed' | 'none';
  idempotent?: true;
  /** Exists only with WEBHOOKS_PREVIEW: marked `x-preview: true` and introduced as a preview. */
  preview?: true;
  /** Component name of the request body schema (taken from the route). */
  requestName?: string;
  /** Path parameters a route checks itself (with the spec's own 400) instead of through a schema. */
  pathParams?: z.ZodObject;
  successes: SuccessSpec[];
  errors: ErrorResponseSpec[];
};

/** Routes under /v1 that are deliberately not in the partners' reference, and why. */
export const UNDOCUMENTED_ROUTES: Record<string, string> = {
  'POST /v1/webhooks/callback':
    "the payment provider's callback, authenticated with the provider's HMAC secret; partners never call it",
  'POST /v1/payments/callbacks/daraja/:token/:kind':
    "Safaricom Daraja's callbacks under an unguessable path token (docs/payments.md); partners never call it",
  'POST /v1/payments/callbacks/mtn/:token/:ref':
    "MTN MoMo's callbacks under an unguessable path token (docs/payments-mtn.md); partners never call it",
  'PUT /v1/payments/callbacks/mtn/:token/:ref':
    "MTN MoMo's callbacks, which some of its environments send as PUT (docs/payments-mtn.md)",
  'POST /v1/payments/callbacks/airtel/:token':
    "Airtel Money's callbacks under an unguessable path token (docs/payments-airtel.md); partners never call it",
  'POST /v1/payments/callbacks/airtel/:token/:ref':
    "Airtel Money's callbacks with an optional label after the token (docs/payments-airtel.md)",
  'POST /v1/sms/callbacks/africastalking/:token':
    "Africa's Talking's SMS delivery reports under an unguessable path token (docs/sms.md); partners never call it",
  'GET /v1/openapi.json': 'the document itself',
  'GET /v1/webhooks/events/stream':
    'preview only: the text/event-stream `partner listen` reads (docs/webhooks.md, "partner listen and events")',
};

const customerIdInvalid = validationVariant(
  'idInvalid',
  'Malformed customer id',
  'id',
  'Invalid customer ID format',
);
const customerNotFound = notFound('No such customer in the caller organization.', [
  variant(
    'customerNotFound',
    'Unknown or other organization',
    withMessage(ErrorLabel.notFound, ErrorMessage.customerNotFound),
  ),
]);

export const OPERATIONS: Record<string, OperationSpec> = {
  'POST /v1/oauth/token': {
    operationId: 'createToken',
    summary: 'Exchange client credentials for a bearer token',
    description:
      'Unauthenticated and unsigned. Per-IP limit 10 requests per 15 minutes, in addition to the global limit; ' +
      'its rate-limit headers replace the global ones. Cache the token and reuse it until it expires (3600 s).',
    tag: 'Authentication',
    auth: 'none',
    requestName: 'TokenRequest',
    successes: [
      {
        status: 200,
        description: 'Authentication successful',
        name: 'TokenResponse',
        schema: tokenResponseSchema,
      },
    ],
    errors: [
      badRequest('Validation failed.', [
        validationVariant('clientIdFormat', 'Malformed client id', 'clientId', 'Invalid client ID format'),
        unparsedBodyVariant,
      ]),
      {
        status: 401,
        description: 'Unknown, inactive or expired credentials.',
        variants: [
          variant(
            'invalidCredentials',
            'Bad credentials',
            withMessage(ErrorLabel.unauthorized, ErrorMessage.invalidCredentials),
          ),
        ],
      },
    ],
  },
  'GET /v1/oauth/me': {
    operationId: 'getOrganization',
    summary: 'The organization of the token, with its active credentials',
    description: 'A deactivated organization answers 404 with the label alone.',
    tag: 'Authentication',
    auth: 'signed',
    successes: [
      { status: 200, description: 'The organization', name: 'MeResponse', schema: meResponseSchema },
    ],
    errors: [
      notFound('The organization no longer exists or was deactivated.', [
        variant('organizationGone', 'Organization gone', { error: ErrorLabel.notFound }),
      ]),
    ],
  },
  'POST /v1/oauth/revoke': {
    operationId: 'revokeToken',
    summary: 'Revoke the presented token',
    description:
      'No body, no query, no X-Idempotency-Key. The signature base must not cover x-idempotency-key, ' +
      'content-type, content-digest or content-length (covering one is a 401). The token is refused at once ' +
      'on every later request.',
    tag: 'Authentication',
    auth: 'signed',
    successes: [
      {
        status: 200,
        description: 'Token revoked successfully',
        name: 'RevokeResponse',
        schema: revokeResponseSchema,
      },
    ],
    errors: [
      badRequest('The token is malformed or expired.', [
        variant(
          'tokenMalformed',
          'Malformed or expired token',
          withMessage(ErrorLabel.badRequest, ErrorMessage.tokenMalformedOrExpired),
        ),
      ]),
    ],
  },
  'POST /v1/customers': {
    operationId: 'createCustomer',
    summary: 'Create a customer',
    description: `Answers 201 with message \`${CustomerMessage.created}\`. \`isActive\` defaults to true. Unknown fields are refused.`,
    tag: 'Customers',
    auth: 'signed',
    idempotent: true,
    requestName: 'CustomerCreate',
    successes: [
      {
        status: 201,
        description: 'Customer created',
        name: 'CustomerCreatedResponse',
        schema: customerCreatedResponseSchema,
      },
    ],
    errors: [
      badRequest('Validation failed, or X-Idempotency-Key missing or not a UUID.', [
        validationVariant('firstNameRequired', 'Missing first name', 'firstName', 'firstName is required'),
        validationVariant('unknownField', 'Unknown field', 'nickname', 'Unknown field'),
        unparsedBodyVariant,
        idempotencyKeyRequired,
        idempotencyKeyNotUuid,
      ]),
    ],
  },
  'GET /v1/customers': {
    operationId: 'listCustomers',
    summary: 'List customers, newest first',
    description:
      '`search` is a case-insensitive substring match on firstName, lastName, identificationNumber and ' +
      'referenceId. A page past the end gives `data: []` with true totals. Unknown parameters are refused.',
    tag: 'Customers',
    auth: 'signed',
    successes: [
      {
        status: 200,
        description: 'One page of customers',
        name: 'CustomerListResponse',
        schema: customerListResponseSchema,
      },
    ],
    errors: [
      badRequest('A query parameter failed validation.', [
        validationVariant('limitTooLarge', 'limit above 100', 'limit', 'limit must be at most 100'),
      ]),
    ],
  },
  'GET /v1/customers/:id': {
    operationId: 'getCustomer',
    summary: 'Get a customer',
    description: "Another organization's customer is answered exactly like a nonexistent one.",
    tag: 'Customers',
    auth: 'signed',
    successes: [
      { status: 200, description: 'The customer', name: 'CustomerResponse', schema: customerResponseSchema },
    ],
    errors: [badRequest('The id is not a CUID.', [customerIdInvalid]), customerNotFound],
  },
  'PATCH /v1/customers/:id': {
    operationId: 'updateCustomer',
    summary: 'Update a customer (partial)',
    description: `Any subset of the create fields; \`null\` clears msisdn, identificationNumber, identificationType or referenceId. Answers message \`${CustomerMessage.updated}\`.`,
    tag: 'Customers',
    auth: 'signed',
    idempotent: true,
    requestName: 'CustomerUpdate',
    successes: [
      {
        status: 200,
        description: 'Customer updated',
        name: 'CustomerUpdatedResponse',
        schema: customerUpdatedResponseSchema,
      },
    ],
    errors: [
      badRequest('Validation failed, or X-Idempotency-Key missing or not a UUID.', [
        customerIdInvalid,
        validationVariant('msisdnFormat', 'Bad msisdn', 'msisdn', 'msisdn must be 7 to 15 digits'),
        unparsedBodyVariant,
        idempotencyKeyRequired,
        idempotencyKeyNotUuid,
      ]),
      customerNotFound,
    ],
  },
  'GET /v1/payment/status/:orderId': {
    operationId: 'getPaymentStatus',
    summary: 'Status of the payment and/or disbursement of an order',
    description:
      'Poll it to learn a payment outcome; no events are sent. `payment` (INCOMING, C2B collection) and ' +
      '`disbursement` (OUTGOING, B2C) are absent when that transaction does not exist. Final statuses: ' +
      "SUCCESS, FAILED, CANCELLED. Another organization's order gets the same 404 as a nonexistent one.",
    tag: 'Payments',
    auth: 'signed',
    pathParams: z.object({
      orderId: cuidSchema.describe('The order id (CUID), as shown on the USSD submitted screen'),
    }),
    successes: [
      {
        status: 200,
        description: PaymentMessage.statusRetrieved,
        name: 'PaymentStatusResponse',
        schema: paymentStatusResponseSchema,
      },
    ],
    errors: [
      badRequest('The order id is not a plausible order reference (checked before the lookup).', [
        variant(
          'invalidOrderReference',
          'Not a CUID',
          withMessage(ErrorLabel.invalidRequest, ErrorMessage.invalidOrderReference),
        ),
      ]),
      notFound('No payment or disbursement transaction for this order in the caller organization.', [
        variant(
          'transactionNotFound',
          'Unknown order',
          withMessage(
            ErrorLabel.transactionNotFound,
            ErrorMessage.transactionNotFound('ckz0p8x3d0000a1b2c3d4e5f6'),
          ),
        ),
      ]),
    ],
  },
  'GET /v1/webhooks/key': {
    operationId: 'getWebhookKey',
    summary: 'The public key outbound webhooks are signed with',
    description:
      'Unauthenticated: send no token, no x-client-id and no signature. `keyId` equals the JWKS `kid`; a key id ' +
      'names exactly one key, so cache by base address and key id, and fetch again when a webhook names an ' +
      'unknown key id.',
    tag: 'Webhooks',
    auth: 'none',
    successes: [
      {
        status: 200,
        description: 'The ED25519 public key',
        name: 'WebhookKeyResponse',
        schema: webhookKeyResponseSchema,
        headers: ['Cache-Control'],
      },
    ],
    errors: [],
  },
  'POST /v1/ussd/session': {
    operationId: 'createUssdSession',
    summary: 'Open a USSD session on the HOME menu',
    description:
      `201 with message \`${UssdMessage.sessionCreated}\` and currentState HOME. After an unexpected internal ` +
      `failure: 200 with message \`${UssdMessage.sessionCreatedWithError}\` and currentState ERROR (detect the ` +
      'error state on the payload, not on the status code).',
    tag: 'USSD',
    auth: 'signed',
    idempotent: true,
    requestName: 'UssdSessionRequest',
    successes: [
      {
        status: 201,
        description: 'Session opened on HOME',
        name: 'UssdResponse',
        schema: ussdResponseSchema,
      },
      {
        status: 200,
        description: 'Session opened in the ERROR state',
        name: 'UssdResponse',
        schema: ussdResponseSchema,
      },
    ],
    errors: [
      badRequest('Validation failed, or X-Idempotency-Key missing or not a UUID.', [
        validationVariant(
          'customerIdFormat',
          'Malformed customer id',
          'customerId',
          'Invalid customer ID format',
        ),
        unparsedBodyVariant,
        idempotencyKeyRequired,
        idempotencyKeyNotUuid,
      ]),
      notFound('No such active customer in the caller organization.', [
        variant(
          'customerNotFound',
          'Unknown customer',
          withMessage(ErrorLabel.customerNotFound, ErrorMessage.ussdCustomerNotFound),
        ),
      ]),
    ],
  },
  'POST /v1/ussd/process': {
    operationId: 'processUssdChoice',
    summary: 'Advance a USSD session with a menu choice',
    description:
      `200 with message \`${UssdMessage.processed}\`; after an unexpected internal failure the session moves to ` +
      `ERROR and the message is \`${UssdMessage.processedWithError}\` (still 200). A choice that is not a key ` +
      'of the current menu keeps the state with `Invalid choice.` on the first line.',
    tag: 'USSD',
    auth: 'signed',
    idempotent: true,
    requestName: 'UssdProcessRequest',
    successes: [
      { status: 200, description: 'The next screen', name: 'UssdResponse', schema: ussdResponseSchema },
    ],
    errors: [
      badRequest(
        'Validation failed, the session expired or ended, or X-Idempotency-Key missing or not a UUID.',
        [
          validationVariant(
            'choiceAlphanumeric',
            'Choice not alphanumeric',
            'choice',
            UssdValidationMessage.choiceAlphanumeric,
          ),
          variant(
            'sessionExpired',
            'Session expired',
            withMessage(ErrorLabel.badRequest, ErrorMessage.sessionExpired),
          ),
          variant(
            'sessionInactive',
            'Session ended',
            withMessage(ErrorLabel.badRequest, ErrorMessage.sessionInactive),
          ),
          unparsedBodyVariant,
          idempotencyKeyRequired,
          idempotencyKeyNotUuid,
        ],
      ),
      forbidden([
        variant(
          'sessionForbidden',
          "Another organization's session",
          withMessage(ErrorLabel.sessionForbidden, ErrorMessage.sessionForbidden),
        ),
      ]),
      notFound('No such session.', [
        variant(
          'sessionNotFound',
          'Unknown session',
          withMessage(ErrorLabel.sessionNotFound, ErrorMessage.sessionNotFound),
        ),
      ]),
    ],
  },
};
