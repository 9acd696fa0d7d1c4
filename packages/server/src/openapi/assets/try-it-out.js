// "Try it out" on /docs for signed operations: Swagger UI's request interceptor gets a token and signs
// each request in the page (browser-signer.js). The credential lives in this closure only: never in
// storage or cookies, sent only to POST /oauth/token; the private key is a non-extractable CryptoKey.
(() => {
  const signer = window.PartnerApiSigner;
  const panel = document.getElementById('try-it-out');
  const status = document.getElementById('try-status');
  const form = document.getElementById('try-form');
  const demoButton = document.getElementById('try-use-demo');
  /** Refresh a minute before the token expires, so a request never goes out with a dying one. */
  const TOKEN_MARGIN_MS = 60_000;
  const PAGE_FILLED = ['ClientId', 'SignatureInput', 'Signature', 'ContentDigest'];
  const METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

  let credential = null; // { clientId, clientSecret, keyId, key: CryptoKey, source }
  let token = null; // { value, refreshAt }
  let api = { origin: location.origin, prefix: '/v1', operations: [] }; // learned from the document as it loads

  function showStatus(text, state) {
    status.textContent = text;
    panel.dataset.credential = state;
  }

  /** Which operations are signed and which take an idempotency key, from the OpenAPI document itself. */
  function learnDocument(document) {
    const server = new URL(document.servers?.[0]?.url ?? '/v1', location.href);
    const operations = [];
    for (const [template, item] of Object.entries(document.paths ?? {})) {
      const literal = template.split(/\{[^}]+\}/).map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
      const pattern = new RegExp(`^${literal.join('[^/]+')}$`);
      for (const [method, operation] of Object.entries(item)) {
        if (!METHODS.has(method)) continue;
        const refs = (operation.parameters ?? []).map((p) => p.$ref ?? '');
        operations.push({
          method: method.toUpperCase(),
          pattern,
          signed: !(Array.isArray(operation.security) && operation.security.length === 0),
          idempotent: refs.includes('#/components/parameters/IdempotencyKey'),
          revoke: operation.operationId === 'revokeToken',
        });
      }
    }
    api = { origin: server.origin, prefix: server.pathname.replace(/\/$/, ''), operations };
    // In this page the signing headers are the page's job: optional fields, so an empty form can run.
    const parameters = document.components?.parameters ?? {};
    for (const name of PAGE_FILLED) {
      if (!parameters[name]) continue;
      parameters[name].required = false;
      parameters[name].description = `Filled in by this page when you send. ${parameters[name].description}`;
    }
    if (parameters.IdempotencyKey) {
      parameters.IdempotencyKey.required = false;
      parameters.IdempotencyKey.description =
        'Leave empty and this page sends a new UUID; send one again to see the stored response replayed. ' +
        parameters.IdempotencyKey.description;
    }
    return document;
  }

  function operationOf(method, url) {
    if (url.origin !== location.origin && url.origin !== api.origin) return undefined;
    if (!url.pathname.startsWith(`${api.prefix}/`)) return undefined;
    const path = url.pathname.slice(api.prefix.length);
    return api.operations.find((op) => op.method === method && op.pattern.test(path));
  }

  async function currentToken() {
    if (token && Date.now() < token.refreshAt) return token.value;
    const response = await fetch(`${location.origin}${api.prefix}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ clientId: credential.clientId, clientSecret: credential.clientSecret }),
    });
    const body = await response.json().catch(() => ({}));
    if (response.status !== 200) {
      throw new Error(`POST /oauth/token answered ${response.status}: ${body.message ?? body.error ?? ''}`);
    }
    token = { value: body.token, refreshAt: Date.now() + body.expiresIn * 1000 - TOKEN_MARGIN_MS };
    return token.value;
  }

  function takeHeader(headers, name) {
    let value;
    for (const key of Object.keys(headers)) {
      if (key.toLowerCase() !== name) continue;
      value = headers[key];
      delete headers[key];
    }
    return value === undefined || value === '' ? undefined : String(value);
  }

  /**
   * Swagger UI calls this before every request; signed operations leave it signed. A request that
   * cannot be signed is not sent: its fetch fails with the reason, which Swagger UI shows in place of
   * a response (an exception here would break its rendering).
   */
  async function requestInterceptor(request) {
    if (request.loadSpec) return request;
    try {
      return await signedRequest(request);
    } catch (error) {
      return { ...request, userFetch: () => Promise.reject(new Error(`Not sent: ${error.message}`)) };
    }
  }

  async function signedRequest(request) {
    const url = new URL(request.url, location.href);
    const method = String(request.method ?? 'GET').toUpperCase();
    const operation = operationOf(method, url);
    if (!operation?.signed) return request;
    if (!credential) throw new Error('no credential to sign with: choose one under "Try it out" above');

    const headers = request.headers ?? {};
    for (const name of ['authorization', 'x-client-id', 'signature', 'signature-input', 'content-digest']) {
      takeHeader(headers, name);
    }
    const typedKey = takeHeader(headers, 'x-idempotency-key');
    const signedHeaders = {
      authorization: `Bearer ${await currentToken()}`,
      'x-client-id': credential.clientId,
    };
    if (operation.idempotent) signedHeaders['x-idempotency-key'] = typedKey ?? crypto.randomUUID();

    let body = request.body;
    if (body !== undefined && body !== null && typeof body !== 'string') body = JSON.stringify(body);
    const bytes = new TextEncoder().encode(body ?? '');
    const hasBody = bytes.length > 0 && !operation.revoke;
    if (hasBody) signedHeaders['content-digest'] = await signer.contentDigest(bytes);

    // The server rebuilds @target-uri from its public base URL: the document's server URL.
    const targetUri = `${api.origin}${url.pathname}${url.search}`;
    const signature = await signer.signRequest({
      request: { method, targetUri, headers: signedHeaders },
      components: signer.requiredComponents({
        hasBody,
        hasIdempotencyKey: signedHeaders['x-idempotency-key'] !== undefined,
        isRevoke: operation.revoke,
      }),
      keyId: credential.keyId,
      key: credential.key,
    });
    // The revoked token is the one this request carries: the next request fetches another.
    if (operation.revoke) token = null;
    return {
      ...request,
      method,
      body,
      // The page's policy allows requests to its own origin only (connect-src 'self').
      url: `${location.origin}${url.pathname}${url.search}`,
      headers: { ...headers, ...signedHeaders, ...signature },
    };
  }

  /**
   * Learns the document as Swagger UI loads it, and marks the page-filled headers optional. A token
   * the server no longer takes (revoked elsewhere, say) is dropped, so the next request gets another.
   */
  function responseInterceptor(response) {
    if (response.status === 401 && /authentication token/.test(response.text ?? '')) token = null;
    if (!response.url?.endsWith(`/openapi.json`) || typeof response.text !== 'string') return response;
    try {
      const document = learnDocument(JSON.parse(response.text));
      response.text = JSON.stringify(document);
      response.body = document;
      response.obj = document;
    } catch {}
    return response;
  }

  async function useCredential({ clientId, clientSecret, keyId, privateKey }, source) {
    const key = await signer.importPrivateKey(privateKey);
    credential = {
      clientId: clientId.trim(),
      clientSecret: clientSecret.trim(),
      keyId: keyId.trim(),
      key,
      source,
    };
    token = null;
    const who = source === 'demo' ? 'the sandbox demo credential' : 'your credential';
    showStatus(`Signing as ${who}: client id ${credential.clientId}, key id ${credential.keyId}.`, source);
  }

  async function useDemoCredential() {
    const response = await fetch(demoButton.dataset.url, { cache: 'no-store' });
    if (response.status !== 200) throw new Error(`No sandbox demo credential here (${response.status})`);
    await useCredential(await response.json(), 'demo');
  }

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const fields = form.elements;
    try {
      await useCredential(
        {
          clientId: fields.clientId.value,
          clientSecret: fields.clientSecret.value,
          keyId: fields.keyId.value,
          privateKey: fields.privateKey.value,
        },
        'pasted',
      );
      // The fields are cleared: from here on the credential is only in this script's memory.
      form.reset();
    } catch (error) {
      showStatus(error.message, 'error');
    }
  });

  // WebCrypto exists only in secure contexts: say so before anyone pastes a key.
  if (!window.crypto?.subtle) {
    showStatus('Signing needs WebCrypto: open this page over HTTPS or on localhost.', 'error');
  } else if (demoButton) {
    const run = () => useDemoCredential().catch((error) => showStatus(error.message, 'error'));
    demoButton.addEventListener('click', run);
    // The sandbox signs with its demo credential from the start.
    run();
  }

  window.PartnerApiTryItOut = { requestInterceptor, responseInterceptor };
})();
