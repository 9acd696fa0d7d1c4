import { z } from 'zod';

export const WEBHOOK_KEY_ALGORITHM = 'ED25519';
export const WEBHOOK_KEY_CACHE_CONTROL = 'public, max-age=300';

/** The environment and the generation are part of the id, so a rotation always changes it. */
export function webhookKeyId(appEnv: 'sandbox' | 'production', generation: number): string {
  return `service-${appEnv === 'production' ? 'live' : 'staging'}-ed25519-${generation}`;
}

export const webhookJwkSchema = z.object({
  kty: z.literal('OKP'),
  crv: z.literal('Ed25519'),
  /** base64url of the 32-byte public key (RFC 8037). */
  x: z.string(),
  kid: z.string(),
  alg: z.literal('EdDSA'),
  use: z.literal('sig'),
});
export type WebhookJwk = z.infer<typeof webhookJwkSchema>;

/** GET /webhooks/key: keyId equals the JWKS kid. */
export const webhookKeyResponseSchema = z.object({
  keyId: z.string(),
  algorithm: z.literal(WEBHOOK_KEY_ALGORITHM),
  /** SPKI PEM. */
  publicKey: z.string(),
  jwks: z.object({ keys: z.array(webhookJwkSchema) }),
});
export type WebhookKeyResponse = z.infer<typeof webhookKeyResponseSchema>;
