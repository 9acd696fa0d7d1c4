import type { KeyObject } from 'node:crypto';
import { computeContentDigest } from './digest.ts';
import { requiredComponentsFor, signRequest } from './signature.ts';

export type PartnerRequestToSign = {
  method: string;
  /** Absolute URL the partner calls, e.g. http://localhost:8080/v1/customers?page=2 */
  url: string;
  /** Lower-case header names; authorization and x-client-id must already be present. */
  headers: Record<string, string>;
  body?: string;
  keyId: string;
  privateKey: KeyObject | string;
  /** Seconds since the epoch; defaults to now. */
  created?: number;
  /** Seconds of validity; at most 300 (docs/signing.md). */
  validitySeconds?: number;
};

export const REVOKE_PATH = '/v1/oauth/revoke';

/**
 * The headers a partner request needs on top of its own: Content-Digest when it has a body, and a
 * Signature/Signature-Input pair covering every component the server requires for it.
 */
export function signPartnerRequest(request: PartnerRequestToSign): Record<string, string> {
  const isRevoke = request.method.toUpperCase() === 'POST' && new URL(request.url).pathname === REVOKE_PATH;
  const headers: Record<string, string> = { ...request.headers };
  const hasBody = request.body !== undefined && !isRevoke;
  if (hasBody) headers['content-digest'] = computeContentDigest(request.body!, 'sha-512');
  const components = requiredComponentsFor({
    method: request.method,
    hasBody,
    hasIdempotencyKey: headers['x-idempotency-key'] !== undefined,
    isRevoke,
  });
  const created = request.created ?? Math.floor(Date.now() / 1000);
  const { signatureInput, signature } = signRequest({
    req: { method: request.method, targetUri: request.url, headers },
    components,
    keyId: request.keyId,
    privateKey: request.privateKey,
    created,
    expires: created + (request.validitySeconds ?? 300),
  });
  return { ...headers, 'signature-input': signatureInput, signature };
}
