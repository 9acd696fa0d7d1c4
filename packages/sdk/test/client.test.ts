import { generateKeyPairSync } from 'node:crypto';
import {
  ErrorMessage,
  REVOKE_FORBIDDEN_COMPONENTS,
  requiredComponentsFor,
  verifyContentDigest,
  verifyRequestSignature,
} from '@partner-api/contract';
import { describe, expect, it } from 'vitest';
import {
  ApiError,
  AuthenticationError,
  ConflictError,
  IdempotencyError,
  PartnerClient,
  RateLimitError,
  ValidationError,
} from '../src/index.ts';

const { publicKey, privateKey } = generateKeyPairSync('ed25519');
const CLIENT_ID = `org_${'a'.repeat(32)}`;
const KEY_ID = 'unit-key';

type Sent = { method: string; url: string; headers: Record<string, string>; body: string | undefined };
type Reply = { status: number; body?: unknown; headers?: Record<string, string> };

/** A fetch that records what the SDK sends and answers from a script, one reply per request. */
function scriptedFetch(route: (sent: Sent, index: number) => Reply) {
  const sent: Sent[] = [];
  const fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const request: Sent = {
      method: init?.method ?? 'GET',
      url: String(input),
      headers: { ...(init?.headers as Record<string, string>) },
      body: init?.body as string | undefined,
    };
    sent.push(request);
    const reply = route(request, sent.length - 1);
    return new Response(reply.body === undefined ? null : JSON.stringify(reply.body), {
      status: reply.status,
      headers: { 'content-type': 'application/json', 'x-request-id': `req-${sent.length}`, ...reply.headers },
    });
  };
  return { fetch: fetch as typeof globalThis.fetch, sent };
}

let tokenCount = 0;
const tokenReply = (): Reply => {
  tokenCount += 1;
  return {
    status: 200,
    body: { token: `token-${tokenCount}`, tokenId: `jti-${tokenCount}`, expiresIn: 3600 },
  };
};

function clientWith(fetch: typeof globalThis.fetch, options = {}) {
  return new PartnerClient({
    baseUrl: 'http://partner.test/',
    clientId: CLIENT_ID,
    clientSecret: `${'b'.repeat(32)}_${'c'.repeat(32)}`,
    privateKey: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    keyId: KEY_ID,
    fetch,
    ...options,
  });
}

/** The server's own check, from the contract: signature (docs/signing.md's required components), digest. */
function verify(request: Sent, opts: { revoke?: boolean } = {}) {
  const hasBody = request.body !== undefined && !opts.revoke;
  const result = verifyRequestSignature({
    req: { method: request.method, targetUri: request.url, headers: request.headers },
    signatureInputHeader: request.headers['signature-input'],
    signatureHeader: request.headers.signature,
    resolveKey: (keyId) => (keyId === KEY_ID ? { publicKey, alg: 'ed25519' } : undefined),
    requiredComponents: requiredComponentsFor({
      method: request.method,
      hasBody,
      hasIdempotencyKey: request.headers['x-idempotency-key'] !== undefined,
      isRevoke: Boolean(opts.revoke),
    }),
    forbiddenComponents: opts.revoke ? [...REVOKE_FORBIDDEN_COMPONENTS] : [],
  });
  expect(result).toMatchObject({ ok: true });
  if (hasBody)
    expect(verifyContentDigest(request.headers['content-digest'], request.body!)).toEqual({ ok: true });
}

const createdOf = (request: Sent) => Number(/;created=(\d+)/.exec(request.headers['signature-input']!)?.[1]);
const isToken = (s: Sent) => s.url.endsWith('/v1/oauth/token');

describe('PartnerClient (scripted fetch)', () => {
  it('signs every attempt afresh and reuses one idempotency key across retries', async () => {
    const { fetch, sent } = scriptedFetch((request, index) => {
      if (isToken(request)) return tokenReply();
      return index === 1
        ? { status: 503, body: { error: 'Service Unavailable' }, headers: { 'retry-after': '1' } }
        : { status: 201, body: { message: 'Customer created successfully', data: { id: 'c1' } } };
    });
    const client = clientWith(fetch);
    await client.customers.create({ firstName: 'A', lastName: 'B' });
    const [token, first, second] = sent;
    expect(token!.headers.authorization).toBeUndefined();
    expect(token!.headers['signature-input']).toBeUndefined();
    expect(first!.url).toBe('http://partner.test/v1/customers');
    for (const attempt of [first!, second!]) {
      verify(attempt);
      expect(attempt.headers).toMatchObject({
        authorization: 'Bearer token-1',
        'x-client-id': CLIENT_ID,
        'content-type': 'application/json',
      });
    }
    expect(second!.headers['x-idempotency-key']).toMatch(/^[0-9a-f-]{36}$/);
    expect(second!.headers['x-idempotency-key']).toBe(first!.headers['x-idempotency-key']);
    // Retry-After: 1 put a second between them: the retry carries its own `created`.
    expect(createdOf(second!)).toBeGreaterThan(createdOf(first!));
  });

  it("the caller's idempotency key wins; a new call gets a new key", async () => {
    const { fetch, sent } = scriptedFetch((request) =>
      isToken(request) ? tokenReply() : { status: 200, body: {} },
    );
    const client = clientWith(fetch);
    const key = '0b9a3c9e-5d2f-4a57-9c1e-2f6a8d3b1e77';
    await client.customers.update('c1', { firstName: 'X' }, { idempotencyKey: key });
    await client.ussd.process('ussd_ab', '1');
    await client.ussd.process('ussd_ab', '1');
    const keys = sent.filter((s) => !isToken(s)).map((s) => s.headers['x-idempotency-key']);
    expect(keys[0]).toBe(key);
    expect(new Set(keys).size).toBe(3);
    // GETs carry none.
    await client.customers.list({ search: 'a b', isActive: true });
    const list = sent.at(-1)!;
    expect(list.headers['x-idempotency-key']).toBeUndefined();
    expect(list.url).toBe('http://partner.test/v1/customers?search=a+b&isActive=true');
    verify(list);
  });

  it('revoke is signed without body headers and sends none', async () => {
    const { fetch, sent } = scriptedFetch((request) =>
      isToken(request) ? tokenReply() : { status: 200, body: { message: 'Token revoked successfully' } },
    );
    await clientWith(fetch).oauth.revoke();
    const revoke = sent.at(-1)!;
    expect(revoke.url).toBe('http://partner.test/v1/oauth/revoke');
    for (const header of ['content-type', 'content-digest', 'x-idempotency-key']) {
      expect(revoke.headers[header]).toBeUndefined();
    }
    verify(revoke, { revoke: true });
  });

  it('GET /webhooks/key is sent with no token, client id or signature', async () => {
    const { fetch, sent } = scriptedFetch(() => ({ status: 200, body: { keyId: 'k-unit-1' } }));
    await clientWith(fetch, { baseUrl: 'http://keys-only.test/v1' }).webhooks.key();
    expect(sent).toHaveLength(1);
    expect(sent[0]!.url).toBe('http://keys-only.test/v1/webhooks/key');
    expect(Object.keys(sent[0]!.headers).sort()).toEqual(['accept', 'user-agent']);
  });

  it('refreshes the token once on "Invalid organization authentication token", never in a loop', async () => {
    const invalid = { status: 401, body: { error: 'Unauthorized', message: ErrorMessage.tokenInvalid } };
    const { fetch, sent } = scriptedFetch((request) => (isToken(request) ? tokenReply() : invalid));
    const error = await clientWith(fetch)
      .oauth.me()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthenticationError);
    const tokensUsed = sent.filter((s) => !isToken(s)).map((s) => s.headers.authorization);
    expect(tokensUsed).toHaveLength(2);
    expect(tokensUsed[0]).not.toBe(tokensUsed[1]);
    expect(sent.filter(isToken)).toHaveLength(2);
  });

  it('does not refresh the token for a refused signature', async () => {
    const refused = { status: 401, body: { error: 'Unauthorized', message: ErrorMessage.signatureFailed } };
    const { fetch, sent } = scriptedFetch((request) => (isToken(request) ? tokenReply() : refused));
    await expect(clientWith(fetch).oauth.me()).rejects.toMatchObject({
      message: ErrorMessage.signatureFailed,
    });
    expect(sent.filter(isToken)).toHaveLength(1);
    expect(sent).toHaveLength(2);
  });

  it('maps statuses to typed errors, retrying only 409, 429 and 5xx', async () => {
    const cases: Array<[Reply, new (...args: never[]) => Error, number]> = [
      [
        { status: 400, body: { error: 'Validation failed', details: [{ field: 'a', message: 'bad' }] } },
        ValidationError,
        1,
      ],
      [
        {
          status: 422,
          body: { error: 'Unprocessable Entity', message: ErrorMessage.idempotencyPayloadMismatch },
        },
        IdempotencyError,
        1,
      ],
      [
        { status: 409, body: { error: 'Conflict', message: ErrorMessage.idempotencyInProgress } },
        ConflictError,
        2,
      ],
      [
        { status: 429, body: { error: 'Too Many Requests' }, headers: { 'retry-after': '0' } },
        RateLimitError,
        2,
      ],
      [{ status: 500, body: { error: 'Internal Server Error' } }, ApiError, 2],
    ];
    for (const [reply, Class, attempts] of cases) {
      const { fetch, sent } = scriptedFetch((request) => (isToken(request) ? tokenReply() : reply));
      const error = await clientWith(fetch, { maxRetries: 1 })
        .customers.create({ firstName: 'A', lastName: 'B' })
        .catch((e: unknown) => e);
      expect(error, String(reply.status)).toBeInstanceOf(Class);
      expect(error).toMatchObject({ status: reply.status, label: (reply.body as { error: string }).error });
      expect((error as ApiError).requestId).toMatch(/^req-\d+$/);
      expect(
        sent.filter((s) => !isToken(s)),
        String(reply.status),
      ).toHaveLength(attempts);
    }
  });

  it('a validation error reads well on its own', async () => {
    const { fetch } = scriptedFetch((request) =>
      isToken(request)
        ? tokenReply()
        : {
            status: 400,
            body: {
              error: 'Validation failed',
              details: [{ field: 'msisdn', message: 'msisdn must be 7 to 15 digits' }],
            },
          },
    );
    const error = (await clientWith(fetch)
      .customers.get('c1')
      .catch((e: unknown) => e)) as ValidationError;
    expect(error.message).toBe('Validation failed: msisdn: msisdn must be 7 to 15 digits');
    expect(error.details).toEqual([{ field: 'msisdn', message: 'msisdn must be 7 to 15 digits' }]);
  });

  it('refuses a key that is not Ed25519 at construction, in its own words', () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey;
    const ed25519Public = generateKeyPairSync('ed25519').publicKey;
    const message =
      'PartnerClient: privateKey must be an Ed25519 private key (a PKCS#8 PEM string or a KeyObject)';
    for (const privateKey of [
      rsa,
      rsa.export({ format: 'pem', type: 'pkcs8' }).toString(),
      ed25519Public,
      'garbage',
      '-----BEGIN PRIVATE KEY-----\nZ2FyYmFnZQ==\n-----END PRIVATE KEY-----\n',
    ]) {
      expect(() => clientWith(globalThis.fetch, { privateKey })).toThrow(new TypeError(message));
    }
  });

  it('refuses a base URL that is not http or https at construction', () => {
    for (const baseUrl of ['localhost:8080', 'api.example.com', 'ftp://api.example.com']) {
      expect(() => clientWith(globalThis.fetch, { baseUrl })).toThrow(
        new TypeError(
          `PartnerClient: baseUrl must be an http:// or https:// URL (got ${JSON.stringify(baseUrl)})`,
        ),
      );
    }
    expect(() => clientWith(globalThis.fetch, { baseUrl: 'https://api.example.com/v1/' })).not.toThrow();
  });
});

describe('investments resources (scripted fetch)', () => {
  const page = (ids: string[], pageNo: number, totalPages: number) => ({
    status: 200,
    body: { data: ids.map((id) => ({ id })), pagination: { page: pageNo, limit: 2, total: 3, totalPages } },
  });

  it('calls each path; mutations are signed with one key per call, reused on a retry', async () => {
    let failedOnce = false;
    const { fetch, sent } = scriptedFetch((request) => {
      if (isToken(request)) return tokenReply();
      if (request.url.endsWith('/cancel') && !failedOnce) {
        failedOnce = true;
        return { status: 503, body: { error: 'Service Unavailable' }, headers: { 'retry-after': '0' } };
      }
      return { status: 200, body: { data: {} } };
    });
    const client = clientWith(fetch);
    await client.investmentTypes.list();
    await client.instruments.list({ search: 'sa', investmentType: 'STOCK' });
    await client.instruments.get('i1');
    await client.instruments.prices('i1', { from: '2026-01-01' });
    await client.accounts.create({ customerId: 'c1' });
    await client.accounts.list({ customerId: 'c1' });
    await client.accounts.get('a1');
    await client.accounts.update('a1', { language: 'sw' });
    await client.accounts.assets('a1');
    await client.accounts.portfolio('a1', { asOf: '2026-01-31' });
    await client.requests.create({ customerId: 'c1', instrumentId: 'i1', side: 'BUY', amount: '1000' });
    await client.requests.list({ status: 'EXECUTED' });
    await client.requests.get('r1');
    await client.requests.cancel('r/1');
    await client.transactions.list({ ledger: 'UNITS' });
    await client.transactions.get('t1');
    await client.reports.list({ type: 'TRADE_CONFIRMATION' });
    await client.reports.get('p1');
    const calls = sent.filter((s) => !isToken(s));
    for (const call of calls) verify(call);
    expect(calls.map((s) => `${s.method} ${s.url.replace('http://partner.test/v1', '')}`)).toEqual([
      'GET /investment-types',
      'GET /instruments?search=sa&investmentType=STOCK',
      'GET /instruments/i1',
      'GET /instruments/i1/prices?from=2026-01-01',
      'POST /accounts',
      'GET /accounts?customerId=c1',
      'GET /accounts/a1',
      'PATCH /accounts/a1',
      'GET /accounts/a1/assets',
      'GET /accounts/a1/portfolio?asOf=2026-01-31',
      'POST /requests',
      'GET /requests?status=EXECUTED',
      'GET /requests/r1',
      'POST /requests/r%2F1/cancel',
      'POST /requests/r%2F1/cancel',
      'GET /transactions?ledger=UNITS',
      'GET /transactions/t1',
      'GET /reports?type=TRADE_CONFIRMATION',
      'GET /reports/p1',
    ]);
    const keyed = calls.filter((s) => s.method !== 'GET').map((s) => s.headers['x-idempotency-key']);
    expect(keyed.every((key) => key !== undefined)).toBe(true);
    expect(keyed[3]).toBe(keyed[4]); // the cancel's retry
    expect(new Set(keyed).size).toBe(4);
    expect(calls.filter((s) => s.method === 'GET').every((s) => !s.headers['x-idempotency-key'])).toBe(true);
  });

  it('listAll walks every page of each list', async () => {
    const { fetch, sent } = scriptedFetch((request) => {
      if (isToken(request)) return tokenReply();
      return new URL(request.url).searchParams.get('page') === '1'
        ? page(['x1', 'x2'], 1, 2)
        : page(['x3'], 2, 2);
    });
    const client = clientWith(fetch);
    for (const resource of [
      client.instruments,
      client.accounts,
      client.requests,
      client.transactions,
      client.reports,
    ] as const) {
      const ids: string[] = [];
      for await (const item of resource.listAll({ limit: 2 })) ids.push(item.id);
      expect(ids).toEqual(['x1', 'x2', 'x3']);
    }
    expect(sent.filter((s) => !isToken(s))).toHaveLength(10);
    expect(sent.at(-1)!.url).toBe('http://partner.test/v1/reports?limit=2&page=2');
  });
});
