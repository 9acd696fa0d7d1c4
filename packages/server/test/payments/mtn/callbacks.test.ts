import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { CallbackPipeline } from '../../../src/services/payments/callback-pipeline.ts';
import type { Log } from '../../../src/services/payments/provider.ts';
import { mtnMsisdn } from '../../../src/services/payments/providers/mtn/adapter.ts';
import { parseMtnStatus } from '../../../src/services/payments/providers/mtn/callbacks.ts';
import { mapMtnStatus } from '../../../src/services/payments/providers/mtn/result-codes.ts';
import { handleMtnCallback } from '../../../src/services/payments/providers/mtn/routes.ts';
import {
  MTN_ENV_SHAPE,
  mtnReferenceId,
  mtnSettingsFrom,
  UUID_V4,
} from '../../../src/services/payments/providers/mtn/settings.ts';
import type { ExchangeRecord } from '../../../src/services/payments/providers/outcome.ts';

/** Published samples (MTN JS SDK status readme, MTN's failure-reasons post). */
const SUCCESS = {
  financialTransactionId: '1232581108',
  externalId: '6353636',
  amount: '5',
  currency: 'EUR',
  payer: { partyIdType: 'MSISDN', partyId: '0248888736' },
  payerMessage: 'Pay for product a',
  payeeNote: 'payer note',
  status: 'SUCCESSFUL',
};
const FAILED = {
  externalId: 'c1f4687688585858a173f12',
  amount: '500',
  currency: 'UGX',
  payer: { partyIdType: 'MSISDN', partyId: '25677000000' },
  payerMessage: 'Debit RequesttoPay',
  payeeNote: 'Debit  RequesttoPay',
  status: 'FAILED',
  reason: 'NOT_ENOUGH_FUNDS',
};

describe('MTN status body and callback parser', () => {
  it('reads the documented SUCCESSFUL and FAILED bodies', () => {
    expect(parseMtnStatus(SUCCESS)).toEqual({
      ok: true,
      value: {
        status: 'SUCCESS',
        reasonCode: null,
        reason: null,
        mtnStatus: 'SUCCESSFUL',
        amount: '5',
        currency: 'EUR',
        externalId: '6353636',
        financialTransactionId: '1232581108',
        partyId: '0248888736',
        referenceId: null,
      },
    });
    expect(parseMtnStatus(JSON.stringify(FAILED))).toMatchObject({
      ok: true,
      value: {
        status: 'FAILED',
        reasonCode: 'NOT_ENOUGH_FUNDS',
        reason: expect.stringMatching(/^MTN NOT_ENOUGH_FUNDS: /),
      },
    });
  });

  it('reads the older shapes: reason as an object, numbers where strings are meant, a payee', () => {
    const older = {
      ...FAILED,
      amount: 500,
      externalId: 6353636,
      payer: undefined,
      payee: { partyIdType: 'MSISDN', partyId: 46733123450 },
      reason: { code: 'APPROVAL_REJECTED', message: 'Rejected by the payer' },
    };
    expect(parseMtnStatus(older)).toMatchObject({
      ok: true,
      value: {
        status: 'CANCELLED',
        reasonCode: 'APPROVAL_REJECTED',
        reason: 'MTN APPROVAL_REJECTED: Rejected by the payer',
        amount: '500',
        externalId: '6353636',
        partyId: '46733123450',
      },
    });
    expect(parseMtnStatus({ status: 'PENDING' })).toMatchObject({ ok: true, value: { status: 'PENDING' } });
  });

  it.each([
    ['not JSON', '{"status":', /not JSON/],
    ['an array', '[]', /body/],
    ['no status', { amount: '5' }, /status/],
    ['an unknown status', { status: 'PAID' }, /status/],
    ['a bad amount', { status: 'SUCCESSFUL', amount: 'five' }, /amount/],
    ['an empty reason', { status: 'FAILED', reason: '' }, /reason/],
    ['a bad party', { status: 'SUCCESSFUL', payer: { partyIdType: 'PHONE', partyId: '1' } }, /payer/],
  ])('refuses %s without throwing', (_, body, error) => {
    const parsed = parseMtnStatus(body);
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.error).toMatch(error);
  });

  it('maps statuses and reasons: only a refusal by the customer is CANCELLED', () => {
    expect(mapMtnStatus('SUCCESSFUL')).toEqual({ status: 'SUCCESS', reasonCode: null, reason: null });
    expect(mapMtnStatus('FAILED', 'TRANSACTION_CANCELED').status).toBe('CANCELLED');
    expect(mapMtnStatus('FAILED', 'EXPIRED').status).toBe('FAILED');
    expect(mapMtnStatus('FAILED', 'COULD_NOT_PERFORM_TRANSACTION').status).toBe('FAILED');
    expect(mapMtnStatus('FAILED', 'SOMETHING_NEW')).toEqual({
      status: 'FAILED',
      reasonCode: 'SOMETHING_NEW',
      reason: 'MTN SOMETHING_NEW: no reason given',
    });
    expect(mapMtnStatus('FAILED').reason).toBe('MTN UNSPECIFIED: no reason given');
  });
});

describe('MTN ids and numbers', () => {
  it('the X-Reference-Id is a UUID v4 derived from our id: stable, distinct', () => {
    const a = mtnReferenceId('cm9xk2tqd0000abcdefghijkl');
    expect(a).toMatch(UUID_V4);
    expect(mtnReferenceId('cm9xk2tqd0000abcdefghijkl')).toBe(a);
    expect(mtnReferenceId('cm9xk2tqd0000abcdefghijkm')).not.toBe(a);
  });

  it('numbers: international with or without +, local in the configured country, else none', () => {
    expect(mtnMsisdn('+256772123456', '256')).toBe('256772123456');
    expect(mtnMsisdn('256772123456', '256')).toBe('256772123456');
    expect(mtnMsisdn('0772123456', '256')).toBe('256772123456');
    expect(mtnMsisdn('0772 123-456', '256')).toBe('256772123456');
    expect(mtnMsisdn('+2567721234567890', '256')).toBeUndefined();
    expect(mtnMsisdn('not a number', '256')).toBeUndefined();
  });
});

const env = (more: Record<string, string> = {}) =>
  z.object(MTN_ENV_SHAPE).parse({
    MTN_TARGET_ENVIRONMENT: 'mtnuganda',
    MTN_CURRENCY: 'UGX',
    MTN_COLLECTION_SUBSCRIPTION_KEY: 'ck',
    MTN_COLLECTION_API_USER: '0b6a3a1e-7c1f-4d7e-9a53-3b1f1e0c2a11',
    MTN_COLLECTION_API_KEY: 'cak',
    MTN_DISBURSEMENT_SUBSCRIPTION_KEY: 'dk',
    MTN_DISBURSEMENT_API_USER: '5d2c8f4b-1e3a-4b6c-8d9e-0f1a2b3c4d22',
    MTN_DISBURSEMENT_API_KEY: 'dak',
    MTN_CALLBACK_TOKEN: 'a'.repeat(32),
    ...more,
  });

describe('MTN settings', () => {
  it('none set: not configured; all set: production proxy, the country from the environment, defaults', () => {
    expect(mtnSettingsFrom({}, 'https://x.example')).toBeUndefined();
    expect(mtnSettingsFrom(env(), 'https://api.example.com/')).toMatchObject({
      baseUrl: 'https://proxy.momoapi.mtn.com',
      targetEnvironment: 'mtnuganda',
      currency: 'UGX',
      countryCode: '256',
      country: 'UG',
      callbackBaseUrl: 'https://api.example.com/v1/payments/callbacks/mtn',
      callbackAllowedIps: [],
      reconcileAfterMs: 60_000,
      timeouts: { tokenMs: 10_000, requestMs: 15_000 },
    });
    const custom = env({
      MTN_TARGET_ENVIRONMENT: 'sandbox',
      MTN_CURRENCY: 'EUR',
      MTN_RECONCILE_AFTER_SECONDS: '30',
      MTN_REQUEST_TIMEOUT_MS: '4000',
      MTN_CALLBACK_ALLOWED_IPS: '203.0.113.0/24, 198.51.100.7',
    });
    expect(mtnSettingsFrom(custom, 'https://x.example')).toMatchObject({
      baseUrl: 'https://sandbox.momodeveloper.mtn.com',
      countryCode: '46',
      reconcileAfterMs: 30_000,
      timeouts: { tokenMs: 4000, requestMs: 4000 },
      callbackAllowedIps: ['203.0.113.0/24', '198.51.100.7'],
    });
  });

  it('a partial or contradictory configuration throws, naming each variable', () => {
    const { MTN_COLLECTION_API_KEY: _, MTN_CALLBACK_TOKEN: __, ...partial } = env();
    expect(() => mtnSettingsFrom(partial, 'https://x.example')).toThrow(
      /MTN_COLLECTION_API_KEY: required[\s\S]*MTN_CALLBACK_TOKEN: required/,
    );
    expect(() => mtnSettingsFrom(env({ MTN_TARGET_ENVIRONMENT: 'sandbox' }), 'https://x.example')).toThrow(
      /MTN_CURRENCY: the MTN sandbox takes EUR only/,
    );
    expect(() => mtnSettingsFrom(env({ MTN_TARGET_ENVIRONMENT: 'mtnmars' }), 'https://x.example')).toThrow(
      /MTN_COUNTRY_CODE: required[\s\S]*MTN_COUNTRY: required/,
    );
    expect(
      mtnSettingsFrom(
        env({ MTN_TARGET_ENVIRONMENT: 'mtnmars', MTN_COUNTRY_CODE: '999', MTN_COUNTRY: 'MR' }),
        'h://x',
      ),
    ).toMatchObject({ countryCode: '999', country: 'MR' });
  });

  it('the shape refuses bad values', () => {
    const shape = z.object(MTN_ENV_SHAPE);
    for (const bad of [
      { MTN_TARGET_ENVIRONMENT: 'uganda' },
      { MTN_CURRENCY: 'ugx' },
      { MTN_COLLECTION_API_USER: 'not-a-uuid' },
      { MTN_CALLBACK_TOKEN: 'short' },
      { MTN_CALLBACK_ALLOWED_IPS: '10.0.0.1, nonsense' },
      { MTN_BASE_URL: 'ftp://x' },
      { MTN_RECONCILE_AFTER_SECONDS: '0' },
    ]) {
      expect(shape.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
    }
  });
});

describe('handleMtnCallback (pipeline stand-in)', () => {
  const silent = { info() {}, warn() {}, error() {}, debug() {} } as unknown as Log;
  function pipeline(ids: Record<string, string>) {
    const seen = {
      lookups: [] as string[],
      exchanges: [] as ExchangeRecord[],
      unmatched: [] as string[],
      orphanLookups: [] as unknown[],
    };
    const p: CallbackPipeline = {
      async findOrphanCollection(_a, input) {
        seen.orphanLookups.push(input);
        return { id: 'req1', transactionId: 't' };
      },
      async findRequestByProviderId(_a, key, value) {
        seen.lookups.push(`${key}=${value}`);
        return ids[`${key}=${value}`] ? { id: ids[`${key}=${value}`]!, transactionId: 't' } : undefined;
      },
      async handleCallback({ exchange }) {
        seen.exchanges.push(exchange);
        return 'applied';
      },
      async recordQueryAnswer() {},
      async recordUnmatched(_a, exchange, reason) {
        seen.exchanges.push(exchange);
        seen.unmatched.push(reason);
      },
    };
    return { p, seen };
  }
  const ref = mtnReferenceId('req1');

  it('matches by the path reference (any case), records the method and never the token', async () => {
    const { p, seen } = pipeline({ [`referenceId=${ref}`]: 'req1' });
    const body = JSON.stringify({ ...SUCCESS, externalId: 'req1', payerMessage: 'secret-token-here' });
    const outcome = await handleMtnCallback(p, {
      rawBody: body,
      method: 'PUT',
      pathRef: ref.toUpperCase(),
      receivedAt: new Date(),
      log: silent,
      secretValues: ['secret-token-here'],
    });
    expect(outcome).toBe('applied');
    expect(seen.exchanges[0]).toMatchObject({
      operation: 'callback:put',
      path: `/v1/payments/callbacks/mtn/[token]/${ref.toUpperCase()}`,
    });
    expect(JSON.stringify(seen.exchanges)).not.toContain('secret-token-here');
  });

  it('without a path reference, matches by externalId; neither: unmatched', async () => {
    const { p, seen } = pipeline({ 'externalId=req1': 'req1' });
    const base = { method: 'POST', receivedAt: new Date(), log: silent, matchWaitMs: 0 };
    expect(
      await handleMtnCallback(p, { ...base, rawBody: JSON.stringify({ ...SUCCESS, externalId: 'req1' }) }),
    ).toBe('applied');
    expect(await handleMtnCallback(p, { ...base, rawBody: JSON.stringify({ status: 'SUCCESSFUL' }) })).toBe(
      'unmatched',
    );
    expect(seen.lookups).toEqual(['externalId=req1']);
  });

  it('a paying callback whose reference is stored nowhere is unmatched: nothing is adopted by number and amount', async () => {
    // The reference is stored when the request is dispatched (worker.ts), before MTN can answer, so a
    // callback after a lost answer matches by it; one that matches nothing is never guessed at.
    const base = { method: 'POST', receivedAt: new Date(), log: silent, matchWaitMs: 0, pathRef: ref };
    const paid = JSON.stringify({
      ...SUCCESS,
      externalId: 'req1',
      payer: { partyIdType: 'MSISDN', partyId: '256772123456' },
    });
    const none = pipeline({});
    expect(await handleMtnCallback(none.p, { ...base, rawBody: paid })).toBe('unmatched');
    expect(none.seen.orphanLookups).toEqual([]);
    expect(none.seen.unmatched).toHaveLength(1);
    const stored = pipeline({ [`referenceId=${ref}`]: 'req1' });
    expect(await handleMtnCallback(stored.p, { ...base, rawBody: paid })).toBe('applied');
  });
});
