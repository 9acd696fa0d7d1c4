import { constants, createDecipheriv, createHmac, type KeyObject, privateDecrypt } from 'node:crypto';

/** Airtel's side of its message security, as its documentation describes it (the fake decrypts). */

/** The RSA paddings Airtel's pages name for `pin` and `x-key`. */
export type FakeAirtelRsaPadding = 'pkcs1' | 'oaep-sha1' | 'oaep-sha256';

/** What the callback `hash` covers: `transaction` as JSON, or the whole body without `hash`. */
export type FakeAirtelHashInput = 'transaction' | 'body';

/** Decrypts base64 `data` encrypted with the fake's public key. */
export function rsaDecrypt(key: KeyObject | string, base64: string, padding: FakeAirtelRsaPadding): string {
  const data = Buffer.from(base64, 'base64');
  if (padding !== 'pkcs1') {
    const oaepHash = padding === 'oaep-sha1' ? 'sha1' : 'sha256';
    return privateDecrypt({ key, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash }, data).toString(
      'utf8',
    );
  }
  // Node no longer decrypts PKCS#1 v1.5 itself (CVE-2023-46809), so the fake unpads the raw block:
  // 00 02, eight or more non-zero bytes, 00, then the message.
  const block = privateDecrypt({ key, padding: constants.RSA_NO_PADDING }, data);
  const separator = block.indexOf(0, 2);
  if (block[0] !== 0x00 || block[1] !== 0x02 || separator < 10) throw new Error('not PKCS#1 v1.5 padded');
  return block.subarray(separator + 1).toString('utf8');
}

/**
 * The payload a signed request's `x-signature` decrypts to, or null: `x-key` is the RSA-encrypted
 * `"<base64 AES key>:<base64 iv>"`, `x-signature` the body under AES-256-CBC with them.
 */
export function openSignature(
  signature: string,
  xKey: string,
  privateKey: KeyObject | string,
  padding: FakeAirtelRsaPadding,
): string | null {
  try {
    const [aesKey = '', iv = ''] = rsaDecrypt(privateKey, xKey, padding).split(':');
    const decipher = createDecipheriv(
      'aes-256-cbc',
      Buffer.from(aesKey, 'base64'),
      Buffer.from(iv, 'base64'),
    );
    const plain = [decipher.update(Buffer.from(signature, 'base64')), decipher.final()];
    return Buffer.concat(plain).toString('utf8');
  } catch {
    return null;
  }
}

/** "Callback with authentication": base64 HMAC-SHA256, with the portal's key, of what `input` names. */
export function callbackHash(key: string, body: Record<string, unknown>, input: FakeAirtelHashInput): string {
  const { hash: _hash, ...unsigned } = body;
  const subject = JSON.stringify(input === 'transaction' ? body.transaction : unsigned);
  return createHmac('sha256', key).update(subject, 'utf8').digest('base64');
}
