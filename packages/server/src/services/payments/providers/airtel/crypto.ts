import {
  constants,
  createCipheriv,
  createDecipheriv,
  createHmac,
  createPublicKey,
  type KeyObject,
  privateDecrypt,
  publicEncrypt,
  randomBytes,
  timingSafeEqual,
} from 'node:crypto';
import type { CallbackHashInput, RsaPadding } from './settings.ts';

/** Airtel's public key as the portal shows it (bare base64 SPKI) or as PEM. */
export function airtelPublicKey(text: string): KeyObject {
  const trimmed = text.trim();
  const pem = trimmed.includes('-----BEGIN')
    ? trimmed
    : `-----BEGIN PUBLIC KEY-----\n${trimmed.replace(/\s+/g, '').replace(/(.{64})/g, '$1\n')}\n-----END PUBLIC KEY-----`;
  return createPublicKey(pem);
}

function rsaOptions(padding: RsaPadding) {
  switch (padding) {
    case 'pkcs1':
      return { padding: constants.RSA_PKCS1_PADDING };
    case 'oaep-sha1':
      return { padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha1' };
    case 'oaep-sha256':
      return { padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' };
  }
}

/** RSA-encrypts `data` with Airtel's key; base64. */
export function rsaEncrypt(key: KeyObject, data: string, padding: RsaPadding): string {
  return publicEncrypt({ key, ...rsaOptions(padding) }, Buffer.from(data, 'utf8')).toString('base64');
}

/** The fake's side (and tests'): decrypts what `rsaEncrypt` made with the matching private key. */
export function rsaDecrypt(key: KeyObject | string, base64: string, padding: RsaPadding): string {
  const data = Buffer.from(base64, 'base64');
  if (padding !== 'pkcs1') return privateDecrypt({ key, ...rsaOptions(padding) }, data).toString('utf8');
  // Node refuses PKCS#1 v1.5 decryption (CVE-2023-46809): decrypt raw and strip the padding,
  // 00 02 <at least 8 non-zero bytes> 00 <message>. Only the fake and tests decrypt.
  const block = privateDecrypt({ key, padding: constants.RSA_NO_PADDING }, data);
  const end = block.indexOf(0, 2);
  if (block[0] !== 0 || block[1] !== 2 || end < 10) throw new Error('not PKCS#1 v1.5 padded');
  return block.subarray(end + 1).toString('utf8');
}

/** The disbursement `pin`: the wallet PIN RSA-encrypted with Airtel's key, base64. */
export function encryptPin(pin: string, key: KeyObject, padding: RsaPadding): string {
  return rsaEncrypt(key, pin, padding);
}

/** `x-signature`: base64 of AES-256-CBC (PKCS#7) over the exact body string sent. */
export function aesSignature(payload: string, key: Buffer, iv: Buffer): string {
  const cipher = createCipheriv('aes-256-cbc', key, iv);
  return Buffer.concat([cipher.update(payload, 'utf8'), cipher.final()]).toString('base64');
}

/**
 * Message signing (v2 payments, v3 disbursements): a fresh AES key and iv per request; the body
 * encrypted with them is `x-signature`, and `"<base64 key>:<base64 iv>"` RSA-encrypted with
 * Airtel's key is `x-key`. `aes` is for tests (121-platform's `message_signing.ts` vector); omit it in use.
 */
export function signMessage(
  payload: string,
  publicKey: KeyObject,
  padding: RsaPadding,
  aes: { key: Buffer; iv: Buffer } = { key: randomBytes(32), iv: randomBytes(16) },
): { 'x-signature': string; 'x-key': string } {
  return {
    'x-signature': aesSignature(payload, aes.key, aes.iv),
    'x-key': rsaEncrypt(publicKey, `${aes.key.toString('base64')}:${aes.iv.toString('base64')}`, padding),
  };
}

/** The fake's check of a signed request: the payload `x-signature` decrypts to, or null. */
export function openSignature(
  headers: { signature: string; key: string },
  privateKey: KeyObject | string,
  padding: RsaPadding,
): string | null {
  try {
    const [key, iv] = rsaDecrypt(privateKey, headers.key, padding).split(':');
    const decipher = createDecipheriv('aes-256-cbc', Buffer.from(key!, 'base64'), Buffer.from(iv!, 'base64'));
    return Buffer.concat([
      decipher.update(Buffer.from(headers.signature, 'base64')),
      decipher.final(),
    ]).toString('utf8');
  } catch {
    return null;
  }
}

/** What the callback `hash` covers: JSON of `transaction` (mode `transaction`), or of the body without `hash`. */
export function callbackHashSubject(body: Record<string, unknown>, mode: CallbackHashInput): string {
  if (mode === 'transaction') return JSON.stringify(body.transaction);
  const { hash: _hash, ...rest } = body;
  return JSON.stringify(rest);
}

/** HMAC-SHA256 of `subject` with the portal's callback key, base64. */
export function callbackHash(key: string, subject: string): string {
  return createHmac('sha256', key).update(subject, 'utf8').digest('base64');
}

/** Constant-time comparison of a received hash with the expected one. */
export function hashMatches(received: string, expected: string): boolean {
  const a = Buffer.from(received);
  const b = Buffer.from(expected);
  return timingSafeEqual(a.length === b.length ? a : b, b) && a.length === b.length;
}
