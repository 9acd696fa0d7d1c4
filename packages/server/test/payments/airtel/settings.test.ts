import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  AIRTEL_BASE_URLS,
  AIRTEL_ENV_SHAPE,
  airtelSettingsFrom,
  callbackUrl,
} from '../../../src/services/payments/providers/airtel/settings.ts';

const TOKEN = 'a'.repeat(40);
const BASE = {
  AIRTEL_CLIENT_ID: 'id',
  AIRTEL_CLIENT_SECRET: 'secret',
  AIRTEL_COUNTRY: 'KE',
  AIRTEL_CURRENCY: 'KES',
  AIRTEL_CALLBACK_TOKEN: TOKEN,
  AIRTEL_DISBURSEMENT_PIN: '1234',
};

describe('airtelSettingsFrom', () => {
  it('is undefined when nothing is set (optional extras alone do not configure Airtel)', () => {
    expect(airtelSettingsFrom({}, 'https://api.example.com')).toBeUndefined();
    expect(airtelSettingsFrom({ AIRTEL_RECONCILE_AFTER_SECONDS: '200' }, 'https://x')).toBeUndefined();
  });

  it('names every missing variable when only some are set', () => {
    expect(() => airtelSettingsFrom({ AIRTEL_CLIENT_ID: 'id' }, 'https://x')).toThrow(
      /AIRTEL_CLIENT_SECRET: required[\s\S]*AIRTEL_COUNTRY[\s\S]*AIRTEL_CURRENCY[\s\S]*AIRTEL_CALLBACK_TOKEN[\s\S]*AIRTEL_DISBURSEMENT_PIN/,
    );
  });

  it('names bad values', () => {
    expect(() =>
      airtelSettingsFrom({ ...BASE, AIRTEL_COUNTRY: 'XX', AIRTEL_DISBURSEMENT_PIN: '12' }, 'https://x'),
    ).toThrow(/AIRTEL_COUNTRY: must be one of[\s\S]*AIRTEL_DISBURSEMENT_PIN: must be 4 digits/);
    expect(() => airtelSettingsFrom({ ...BASE, AIRTEL_RSA_PUBLIC_KEY: 'nope' }, 'https://x')).toThrow(
      /AIRTEL_RSA_PUBLIC_KEY/,
    );
  });

  it('fills the defaults: UAT base, v1 APIs, pkcs1, 180 s reconciliation, whole KES, the callback URL', () => {
    const s = airtelSettingsFrom(BASE, 'https://api.example.com/')!;
    expect(s).toMatchObject({
      baseUrl: AIRTEL_BASE_URLS.sandbox,
      country: 'KE',
      currency: 'KES',
      callingCode: '254',
      amountDecimals: 0,
      collectionApi: 'v1',
      disbursementApi: 'v1',
      pinPadding: 'pkcs1',
      signingKeyPadding: 'pkcs1',
      callbackHashInput: 'transaction',
      callbackAllowedIps: [],
      reconcileAfterMs: 180_000,
      timeouts: { tokenMs: 10_000, requestMs: 15_000 },
    });
    expect(s.rsaPublicKey).toBeUndefined();
    expect(s.callbackHmacKey).toBeUndefined();
    expect(callbackUrl(s)).toBe(`https://api.example.com/v1/payments/callbacks/airtel/${TOKEN}`);
    expect(airtelSettingsFrom({ ...BASE, APP_ENV: 'production' }, 'https://x')!.baseUrl).toBe(
      AIRTEL_BASE_URLS.production,
    );
  });

  it('takes every option, from raw strings or from values config.ts already parsed', () => {
    const pem = generateKeyPairSync('rsa', { modulusLength: 2048 })
      .publicKey.export({ type: 'spki', format: 'pem' })
      .toString();
    const raw = {
      ...BASE,
      AIRTEL_BASE_URL: 'https://openapi.airtel.co.zm',
      AIRTEL_COUNTRY: 'ZM',
      AIRTEL_CURRENCY: 'ZMW',
      AIRTEL_CALLBACK_HMAC_KEY: 'portal-key',
      AIRTEL_CALLBACK_HASH_INPUT: 'body',
      AIRTEL_CALLBACK_ALLOWED_IPS: '10.0.0.0/8, 192.168.1.1',
      AIRTEL_RSA_PUBLIC_KEY: pem.replaceAll('\n', '\\n'),
      AIRTEL_PIN_PADDING: 'oaep-sha256',
      AIRTEL_SIGNING_KEY_PADDING: 'oaep-sha1',
      AIRTEL_COLLECTION_API: 'v2',
      AIRTEL_DISBURSEMENT_API: 'v3',
      AIRTEL_RECONCILE_AFTER_SECONDS: '240',
      AIRTEL_REQUEST_TIMEOUT_MS: '5000',
    };
    const parsed = z.object(AIRTEL_ENV_SHAPE).parse(raw);
    for (const env of [raw, parsed]) {
      const s = airtelSettingsFrom(env, 'https://x')!;
      expect(s).toMatchObject({
        baseUrl: 'https://openapi.airtel.co.zm',
        callingCode: '260',
        amountDecimals: 2,
        callbackHmacKey: 'portal-key',
        callbackHashInput: 'body',
        callbackAllowedIps: ['10.0.0.0/8', '192.168.1.1'],
        pinPadding: 'oaep-sha256',
        signingKeyPadding: 'oaep-sha1',
        collectionApi: 'v2',
        disbursementApi: 'v3',
        reconcileAfterMs: 240_000,
        timeouts: { tokenMs: 5000, requestMs: 5000 },
      });
      expect(s.rsaPublicKey).toContain('-----BEGIN PUBLIC KEY-----\n');
    }
  });
});
