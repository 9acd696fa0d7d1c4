// RFC 9421 request signing (Ed25519) and RFC 9530 Content-Digest with WebCrypto, for the reference
// page's "Try it out". It mirrors packages/contract/src/signature.ts (the server's own builder); the
// test suite checks it against the worked example of docs/signing.md. No dependencies, no build step.
((root) => {
  const subtle = () => {
    // WebCrypto exists only in secure contexts: HTTPS, or http://localhost and http://127.0.0.1.
    if (!root.crypto?.subtle)
      throw new Error('Signing needs WebCrypto: open this page over HTTPS or on localhost');
    return root.crypto.subtle;
  };

  const toBase64 = (buffer) => {
    let binary = '';
    for (const byte of new Uint8Array(buffer)) binary += String.fromCharCode(byte);
    return root.btoa(binary);
  };

  const fromBase64 = (text) => Uint8Array.from(root.atob(text), (c) => c.charCodeAt(0));

  /** An Ed25519 private key in PKCS#8 PEM, imported as non-extractable: it can sign, never be read back. */
  async function importPrivateKey(pem) {
    const match = /-----BEGIN PRIVATE KEY-----([A-Za-z0-9+/=\s]+)-----END PRIVATE KEY-----/.exec(pem);
    if (!match) throw new Error('The key must be a PKCS#8 PEM (-----BEGIN PRIVATE KEY-----)');
    try {
      return await subtle().importKey(
        'pkcs8',
        fromBase64(match[1].replace(/\s+/g, '')),
        { name: 'Ed25519' },
        false,
        ['sign'],
      );
    } catch (error) {
      throw new Error(`Not an Ed25519 private key (${error.message})`);
    }
  }

  /** `sha-512=:<base64>:` of the exact body bytes. */
  async function contentDigest(bytes) {
    return `sha-512=:${toBase64(await subtle().digest('SHA-512', bytes))}:`;
  }

  /** docs/signing.md, Required components (revoke covers neither body nor idempotency headers). */
  function requiredComponents({ hasBody, hasIdempotencyKey, isRevoke }) {
    const out = ['@method', '@target-uri', 'authorization', 'x-client-id'];
    if (hasBody && !isRevoke) out.push('content-digest');
    if (hasIdempotencyKey && !isRevoke) out.push('x-idempotency-key');
    return out;
  }

  // HTAB and visible ASCII only, as the server requires: anything else could forge extra base lines.
  const BASE_SAFE = /^[\t\x20-\x7e]*$/;

  function componentValue(name, request) {
    if (name === '@method') return request.method.toUpperCase();
    if (name === '@target-uri') return request.targetUri;
    const value = request.headers[name];
    if (value === undefined) throw new Error(`header ${name} is covered but not sent`);
    return String(value).replace(/^[ \t]+|[ \t]+$/g, '');
  }

  const sfString = (value) => {
    if (!/^[\x20-\x7e]*$/.test(value)) throw new Error('keyid must be printable ASCII');
    return `"${value.replace(/[\\"]/g, '\\$&')}"`;
  };

  /** The signature base (RFC 9421 §2.5) and its `@signature-params` value. */
  function signatureBase(request, components, { created, expires, keyId }) {
    const params =
      `(${components.map((name) => `"${name}"`).join(' ')})` +
      `;created=${created};expires=${expires};keyid=${sfString(keyId)}`;
    const lines = components.map((name) => {
      const value = componentValue(name, request);
      if (!BASE_SAFE.test(value)) throw new Error(`${name} holds characters a signature cannot cover`);
      return `"${name}": ${value}`;
    });
    lines.push(`"@signature-params": ${params}`);
    return { base: lines.join('\n'), params };
  }

  /**
   * Signature-Input and Signature for `request` ({ method, targetUri, headers with lower-case names }).
   * `created` defaults to now; valid for 300 s, the longest window the server accepts.
   */
  async function signRequest({ request, components, keyId, key, created, label = 'sig1' }) {
    const at = created ?? Math.floor(Date.now() / 1000);
    const { base, params } = signatureBase(request, components, { created: at, expires: at + 300, keyId });
    const signature = await subtle().sign({ name: 'Ed25519' }, key, new TextEncoder().encode(base));
    return { 'signature-input': `${label}=${params}`, signature: `${label}=:${toBase64(signature)}:` };
  }

  root.PartnerApiSigner = { importPrivateKey, contentDigest, requiredComponents, signatureBase, signRequest };
})(globalThis);
