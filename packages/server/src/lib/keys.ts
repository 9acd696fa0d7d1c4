import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';

export class InvalidPublicKeyError extends Error {}

/** Accepts an SPKI PEM or a JWK (object or JSON string); only Ed25519 signing keys are accepted. */
export function parseSigningPublicKey(input: unknown): KeyObject {
  let key: KeyObject;
  try {
    if (typeof input === 'string' && input.includes('BEGIN PUBLIC KEY')) key = createPublicKey(input);
    else {
      const jwk = typeof input === 'string' ? JSON.parse(input) : input;
      key = createPublicKey({ key: jwk as import('node:crypto').JsonWebKey, format: 'jwk' });
    }
  } catch {
    throw new InvalidPublicKeyError('must be an SPKI PEM or a JWK public key');
  }
  if (key.asymmetricKeyType !== 'ed25519') throw new InvalidPublicKeyError('must be an Ed25519 public key');
  return key;
}

export function toPem(key: KeyObject): string {
  return key.export({ format: 'pem', type: 'spki' }).toString();
}

/** True for an Ed25519 private key in PEM (the webhook signing key, from the environment or DATA_DIR). */
export function isEd25519PrivateKeyPem(pem: string): boolean {
  try {
    return createPrivateKey(pem).asymmetricKeyType === 'ed25519';
  } catch {
    return false;
  }
}
