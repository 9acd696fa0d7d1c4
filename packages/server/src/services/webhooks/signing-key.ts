import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { WEBHOOK_KEY_ALGORITHM, type WebhookKeyResponse, webhookKeyId } from '@partner-api/contract';
import type { AppContext } from '../../context.ts';

/**
 * The public half of the webhook signing key, as PEM and as a JWKS, named by the environment and
 * the key generation. Throws at start (not per request) when the configured key is not Ed25519.
 */
export function describeWebhookKey({
  privateKeyPem,
  appEnv,
  generation,
}: {
  privateKeyPem: string;
  appEnv: 'sandbox' | 'production';
  generation: number;
}): WebhookKeyResponse {
  const publicKey = createPublicKey(createPrivateKey(privateKeyPem));
  if (publicKey.asymmetricKeyType !== 'ed25519') {
    throw new Error('WEBHOOK_SIGNING_KEY must be an Ed25519 private key');
  }
  const jwk = publicKey.export({ format: 'jwk' });
  if (typeof jwk.x !== 'string') throw new Error('WEBHOOK_SIGNING_KEY: public key has no x coordinate');
  const keyId = webhookKeyId(appEnv, generation);
  return {
    keyId,
    algorithm: WEBHOOK_KEY_ALGORITHM,
    publicKey: publicKey.export({ format: 'pem', type: 'spki' }).toString(),
    jwks: { keys: [{ kty: 'OKP', crv: 'Ed25519', x: jwk.x, kid: keyId, alg: 'EdDSA', use: 'sig' }] },
  };
}

/** The key deliveries and the event stream sign with, under the id GET /v1/webhooks/key publishes. */
export function webhookSigningKey(ctx: Pick<AppContext, 'config' | 'secrets'>): {
  keyId: string;
  privateKey: KeyObject;
} {
  return {
    keyId: webhookKeyId(ctx.config.APP_ENV, ctx.config.WEBHOOK_KEY_GENERATION),
    privateKey: createPrivateKey(ctx.secrets.webhookSigningKey),
  };
}
