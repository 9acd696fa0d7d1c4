import { describe, expect, it } from 'vitest';
import {
  parseAirtelCallback,
  verifyCallbackHash,
} from '../../../src/services/payments/providers/airtel/callbacks.ts';
import { callbackHash } from '../../../src/services/payments/providers/airtel/crypto.ts';
import { mapTransactionStatus } from '../../../src/services/payments/providers/airtel/result-codes.ts';

/** The documented callback, verbatim. */
const DOC_SAMPLE = `{
  "transaction": {
    "id": "BBZMiscxy",
    "message": "Paid UGX 5,000 to TECHNOLOGIES LIMITED Charge UGX 140, Trans ID MP210603.1234.L06941.",
    "status_code": "TS",
    "airtel_money_id": "MP210603.1234.L06941"
  }
}`;

describe('parseAirtelCallback', () => {
  it('reads the documented body: no amount, no phone; SUCCESS with the receipt', () => {
    const parsed = parseAirtelCallback(DOC_SAMPLE);
    expect(parsed).toMatchObject({
      ok: true,
      value: {
        transactionId: 'BBZMiscxy',
        statusCode: 'TS',
        status: 'SUCCESS',
        reason: null,
        airtelMoneyId: 'MP210603.1234.L06941',
        hash: null,
      },
    });
  });

  it.each([
    ['TF', 'Insufficient funds', 'FAILED'],
    ['TF', 'Transaction declined by the user', 'CANCELLED'],
    ['TF', 'Request cancelled by customer', 'CANCELLED'],
    ['TE', 'Transaction expired', 'FAILED'],
    ['TIP', 'in progress', 'PENDING'],
    ['TA', 'ambiguous', 'PENDING'],
    ['ts', 'lower case', 'SUCCESS'],
  ])('%s "%s" is %s', (code, message, status) => {
    const parsed = parseAirtelCallback({
      transaction: { id: 'x1', message, status_code: code, airtel_money_id: '' },
    });
    expect(parsed.ok && parsed.value.status).toBe(status);
    if (parsed.ok && status !== 'SUCCESS' && status !== 'PENDING')
      expect(parsed.value.reason).toBe(`Airtel ${code}: ${message}`);
    if (parsed.ok) expect(parsed.value.airtelMoneyId).toBeNull();
  });

  it('keeps a hash and tolerates third-party extras (amount, currency, msisdn)', () => {
    const parsed = parseAirtelCallback({
      transaction: {
        id: 42,
        status_code: 'TS',
        airtel_money_id: 'R1',
        amount: 10,
        currency: 'KES',
        msisdn: '733',
      },
      hash: 'abc=',
    });
    expect(parsed).toMatchObject({ ok: true, value: { transactionId: '42', hash: 'abc=' } });
  });

  it.each([
    ['not json', 'not JSON'],
    ['[]', 'body'],
    ['{}', 'transaction'],
    ['{"transaction":{"status_code":"TS"}}', 'transaction.id'],
    ['{"transaction":{"id":"a","status_code":"OK"}}', 'unknown "OK"'],
    ['{"transaction":{"id":"","status_code":"TS"}}', 'transaction.id'],
  ])('refuses %s (%s) without throwing', (raw, where) => {
    const parsed = parseAirtelCallback(raw);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error).toContain(where);
  });
});

describe('verifyCallbackHash', () => {
  const body = JSON.parse(DOC_SAMPLE) as Record<string, unknown>;
  const good = callbackHash('k', JSON.stringify(body.transaction));
  const withHash = (hash?: string) => {
    const parsed = parseAirtelCallback(JSON.stringify(hash === undefined ? body : { ...body, hash }));
    if (!parsed.ok) throw new Error(parsed.error);
    return parsed.value;
  };
  it('is valid, missing or a mismatch when a key is set; not-configured otherwise', () => {
    expect(verifyCallbackHash(withHash(good), 'k')).toBe('valid');
    expect(verifyCallbackHash(withHash(), 'k')).toBe('missing');
    expect(verifyCallbackHash(withHash(good), 'other')).toBe('mismatch');
    expect(verifyCallbackHash(withHash('short'), 'k')).toBe('mismatch');
    expect(verifyCallbackHash(withHash(good), undefined)).toBe('not-configured');
    expect(verifyCallbackHash(withHash(good), 'k', 'body')).toBe('mismatch');
    expect(verifyCallbackHash(withHash(callbackHash('k', JSON.stringify(body))), 'k', 'body')).toBe('valid');
  });
});

describe('mapTransactionStatus', () => {
  it('uses the status text when there is no message', () => {
    expect(mapTransactionStatus('TE')).toEqual({
      status: 'FAILED',
      reason: 'Airtel TE: Transaction expired',
    });
    expect(mapTransactionStatus('TS', 'whatever')).toEqual({ status: 'SUCCESS', reason: null });
  });
});
