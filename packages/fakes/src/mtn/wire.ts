import { randomBytes } from 'node:crypto';
import type { Answer } from '../kit/index.ts';
import type { FakeMtnScenario } from './scenarios.ts';

/** MTN MoMo's shapes: products and their credentials, error bodies, the payment status body. */

export type FakeMtnProduct = 'collection' | 'disbursement';

/** What MTN's partner portal gives per product: a subscription key, an API user (a UUID) and its key. */
export type FakeMtnCredentials = { subscriptionKey: string; apiUser: string; apiKey: string };

/** `X-Reference-Id` must be a UUID of version 4 (MTN's API reference). */
export const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

export type Outcome = { status: 'SUCCESSFUL' } | { status: 'FAILED'; reason: string } | null;

export type Payment = {
  product: FakeMtnProduct;
  referenceId: string;
  body: Record<string, unknown>;
  amount: string;
  msisdn: string;
  financialTransactionId: string;
  scenario: FakeMtnScenario;
  /** What the status query says; null while PENDING. */
  outcome: Outcome;
};

export const error = (status: number, code: string, message: string): Answer => ({
  status,
  body: { code, message },
});
export const notFound = () => error(404, 'RESOURCE_NOT_FOUND', 'Requested resource was not found.');
export const internalError = () =>
  error(500, 'INTERNAL_PROCESSING_ERROR', 'An internal error occurred while processing.');
/** Azure API Management's answer to a missing or wrong subscription key or token. */
export const accessDenied = (what: string): Answer => ({
  status: 401,
  body: { statusCode: 401, message: `Access denied due to invalid ${what}.` },
});

const shortestDecimal = (text: string) => (text.includes('.') ? text.replace(/\.?0+$/, '') : text);

/** The status body, as the query answers it and the callback carries it (without the reference). */
export function statusBody(payment: Payment, outcome: Outcome, forCallback = false) {
  const b = payment.body;
  const partyKey = payment.product === 'collection' ? 'payer' : 'payee';
  const status = outcome?.status ?? 'PENDING';
  const reason =
    outcome?.status !== 'FAILED'
      ? {}
      : payment.scenario === 'reason-object' && !forCallback
        ? { reason: { code: outcome.reason, message: 'The payer does not have enough funds.' } }
        : { reason: outcome.reason };
  return {
    ...(status === 'SUCCESSFUL' ? { financialTransactionId: payment.financialTransactionId } : {}),
    externalId: b.externalId,
    // MTN answers "5" to "5.0": the shortest decimal.
    amount: shortestDecimal(payment.amount),
    currency: b.currency,
    [partyKey]: { partyIdType: 'MSISDN', partyId: payment.msisdn },
    payerMessage: b.payerMessage,
    payeeNote: b.payeeNote,
    status,
    ...reason,
  };
}

/** The credentials the fake accepts by default (FAKE_MTN_ENV hands them to a server). */
export const FAKE_MTN_CREDENTIALS: Readonly<Record<FakeMtnProduct, FakeMtnCredentials>> = {
  collection: {
    subscriptionKey: 'fake-collection-subscription-key',
    apiUser: '0b6a3a1e-7c1f-4d7e-9a53-3b1f1e0c2a11',
    apiKey: 'fake-collection-api-key',
  },
  disbursement: {
    subscriptionKey: 'fake-disbursement-subscription-key',
    apiUser: '5d2c8f4b-1e3a-4b6c-8d9e-0f1a2b3c4d22',
    apiKey: 'fake-disbursement-api-key',
  },
};

/**
 * The environment variables a server needs to talk to a fake MTN at `fakeUrl` (with the fake's
 * default options): credentials, target environment and currency, and a fresh callback token.
 */
export function FAKE_MTN_ENV(
  fakeUrl: string,
  overrides: { targetEnvironment?: string; currency?: string; callbackToken?: string } = {},
): Record<string, string> {
  const { collection, disbursement } = FAKE_MTN_CREDENTIALS;
  return {
    MTN_BASE_URL: fakeUrl,
    MTN_TARGET_ENVIRONMENT: overrides.targetEnvironment ?? 'sandbox',
    MTN_CURRENCY: overrides.currency ?? 'EUR',
    MTN_COLLECTION_SUBSCRIPTION_KEY: collection.subscriptionKey,
    MTN_COLLECTION_API_USER: collection.apiUser,
    MTN_COLLECTION_API_KEY: collection.apiKey,
    MTN_DISBURSEMENT_SUBSCRIPTION_KEY: disbursement.subscriptionKey,
    MTN_DISBURSEMENT_API_USER: disbursement.apiUser,
    MTN_DISBURSEMENT_API_KEY: disbursement.apiKey,
    MTN_CALLBACK_TOKEN: overrides.callbackToken ?? randomBytes(24).toString('base64url'),
  };
}
