import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  aesSignature,
  airtelPublicKey,
  callbackHash,
  callbackHashSubject,
  encryptPin,
  openSignature,
  rsaDecrypt,
  signMessage,
} from '../../../src/services/payments/providers/airtel/crypto.ts';
import type { RsaPadding } from '../../../src/services/payments/providers/airtel/settings.ts';

const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
const spki = pair.publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
const PADDINGS: RsaPadding[] = ['pkcs1', 'oaep-sha1', 'oaep-sha256'];

describe('Airtel message signing', () => {
  it('x-signature matches the published vector (121-platform message_signing.ts)', () => {
    const payload =
      '{"reference":"1234","subscriber":{"country":"UG","currency":"UGX","msisdn":"752604392"},"transaction":{"amount":"100","country":"UG","currency":"UGX","id":"test_id "}}';
    const key = Buffer.from('PSw37xtnShLl7zgWn4dLSnf1J5GRhRsOD4OfvJOuLIM=', 'base64');
    const iv = Buffer.from('gGIhDvCBnSBhBgYiXCyMnw==', 'base64');
    expect(aesSignature(payload, key, iv)).toBe(
      'bDOsVGZzbK0P5jO/M5QVMH/qxSmRJLEvIPZCdW6H81xvsZNI6jZej54oBQlHZ38yy63QNeyyYcfEkGJ8f3f15wHWs86V9BCIpHSesS3SrhozE/gGA1fLydeSS26mw0jhyt9XIpabk1RjDH59SfsrkHKU38I5mRlthG/t2qXJck0FhNR64bgOExm9CsuxUlfpsSoW1g81g1u5a4yMFIHhp77f+h3EXNHzcEsdSWhqTho=',
    );
    // A different byte (the trailing space of the id) gives a different signature.
    expect(aesSignature(payload.replace('test_id ', 'test_id'), key, iv)).not.toBe(
      aesSignature(payload, key, iv),
    );
  });

  it.each(['pkcs1', 'oaep-sha1'] as const)(
    'x-key wraps "<key>:<iv>" with %s; the holder of the private key opens it',
    (padding) => {
      const payload = JSON.stringify({ a: 1, b: 'x' });
      const aes = { key: Buffer.alloc(32, 7), iv: Buffer.alloc(16, 9) };
      const headers = signMessage(payload, airtelPublicKey(spki), padding, aes);
      expect(rsaDecrypt(pair.privateKey, headers['x-key'], padding)).toBe(
        `${aes.key.toString('base64')}:${aes.iv.toString('base64')}`,
      );
      expect(
        openSignature({ signature: headers['x-signature'], key: headers['x-key'] }, pair.privateKey, padding),
      ).toBe(payload);
      // Fresh key and iv per request by default.
      const a = signMessage(payload, airtelPublicKey(spki), padding);
      const b = signMessage(payload, airtelPublicKey(spki), padding);
      expect(a['x-signature']).not.toBe(b['x-signature']);
    },
  );
});

describe('Airtel PIN encryption', () => {
  it.each(PADDINGS)('%s: decrypts to the PIN with the same padding only', (padding) => {
    const encrypted = encryptPin('1234', airtelPublicKey(spki), padding);
    expect(Buffer.from(encrypted, 'base64')).toHaveLength(256);
    expect(rsaDecrypt(pair.privateKey, encrypted, padding)).toBe('1234');
    for (const other of PADDINGS.filter((p) => p !== padding)) {
      let opened: string | null;
      try {
        opened = rsaDecrypt(pair.privateKey, encrypted, other);
      } catch {
        opened = null;
      }
      expect(opened).not.toBe('1234');
    }
  });

  it('takes the portal key as bare base64 or as PEM', () => {
    const pem = pair.publicKey.export({ type: 'spki', format: 'pem' }).toString();
    expect(airtelPublicKey(pem).asymmetricKeyType).toBe('rsa');
    expect(airtelPublicKey(spki).asymmetricKeyType).toBe('rsa');
    expect(() => airtelPublicKey('not a key')).toThrow();
  });
});

describe('Airtel callback hash', () => {
  const body = {
    transaction: {
      id: 'BBZMiscxy',
      message: 'Paid UGX 5,000',
      status_code: 'TS',
      airtel_money_id: 'MP210603.1234.L06941',
    },
  };
  it('is HMAC-SHA256 in base64 over JSON of transaction (default) or of the body without hash', () => {
    const t = callbackHashSubject({ ...body, hash: 'x' }, 'transaction');
    expect(t).toBe(JSON.stringify(body.transaction));
    expect(callbackHashSubject({ ...body, hash: 'x' }, 'body')).toBe(JSON.stringify(body));
    const hash = callbackHash('portal-key', t);
    expect(hash).toMatch(/^[A-Za-z0-9+/]{43}=$/);
    expect(callbackHash('other-key', t)).not.toBe(hash);
  });
});
