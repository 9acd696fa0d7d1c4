import { buildSignatureBase, requiredComponentsFor, signPartnerRequest } from '@partner-api/contract';

/**
 * The worked example of docs/signing.md, computed with the contract's own signer. The key is the
 * Ed25519 test key of RFC 9421 (Appendix B.1.4): public test data, never a real credential.
 */
export const EXAMPLE_KEY = {
  keyId: 'partner-key-2026-01',
  privateKeyPem:
    '-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIJ+DYvh6SEqVTm50DFtMDoQikTmiCqirVv9mWG9qfSnF\n-----END PRIVATE KEY-----\n',
  publicKeyPem:
    '-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAJrQLj5P/89iXES9+vFgrIy29clF9CC/oPPsw3c5D0bs=\n-----END PUBLIC KEY-----\n',
};

export const EXAMPLE_REQUEST = {
  method: 'POST',
  url: 'http://localhost:8080/v1/customers',
  body: '{"firstName":"Amina","lastName":"Otieno","msisdn":"254712000001"}',
  headers: {
    authorization: 'Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJqdGkiOiJleGFtcGxlIn0.c2lnbmF0dXJl',
    'x-client-id': 'org_0123456789abcdef0123456789abcdef',
    'content-type': 'application/json',
    'x-idempotency-key': '6f1c2a9e-3b7d-4c51-9a8e-2d4f6b8c0e13',
  },
  created: 1767225600,
};

export function workedExample() {
  const signed = signPartnerRequest({
    method: EXAMPLE_REQUEST.method,
    url: EXAMPLE_REQUEST.url,
    headers: EXAMPLE_REQUEST.headers,
    body: EXAMPLE_REQUEST.body,
    keyId: EXAMPLE_KEY.keyId,
    privateKey: EXAMPLE_KEY.privateKeyPem,
    created: EXAMPLE_REQUEST.created,
  });
  const components = requiredComponentsFor({
    method: EXAMPLE_REQUEST.method,
    hasBody: true,
    hasIdempotencyKey: true,
    isRevoke: false,
  });
  const { base } = buildSignatureBase(
    { method: EXAMPLE_REQUEST.method, targetUri: EXAMPLE_REQUEST.url, headers: signed },
    components,
    { created: EXAMPLE_REQUEST.created, expires: EXAMPLE_REQUEST.created + 300, keyid: EXAMPLE_KEY.keyId },
  );
  return {
    base,
    contentDigest: signed['content-digest']!,
    signatureInput: signed['signature-input']!,
    signature: signed.signature!,
  };
}
