import SwaggerParser from '@apidevtools/swagger-parser';
import { ErrorMessage } from '@partner-api/contract';
import { buildTestApp, type TestApp } from '@partner-api/testkit/app.ts';
import { bodyProblems } from '@partner-api/testkit/contract-check.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../src/openapi/build-document.ts';
import { OPERATIONS } from '../../src/openapi/operations.ts';
import type { OpenApiDocument, ResponseObject } from '../../src/openapi/types.ts';
import { openApiDocumentOf } from '../../src/routes/docs.ts';

const LIVE_OPERATIONS = [
  'post /oauth/token',
  'get /oauth/me',
  'post /oauth/revoke',
  'post /customers',
  'get /customers',
  'get /customers/{id}',
  'patch /customers/{id}',
  'get /payment/status/{orderId}',
  'get /webhooks/key',
  'post /ussd/session',
  'post /ussd/process',
];

const operationsOf = (document: OpenApiDocument) =>
  Object.entries(document.paths).flatMap(([path, item]) =>
    Object.keys(item).map((method) => `${method} ${path}`),
  );

describe('GET /v1/openapi.json', () => {
  let t: TestApp;
  let document: OpenApiDocument;

  beforeAll(async () => {
    t = await buildTestApp('pglite');
    const res = await t.app.inject({ method: 'GET', url: '/v1/openapi.json' });
    expect(res.statusCode).toBe(200);
    document = res.json();
  });
  afterAll(() => t?.close());

  it('is served without credentials, as JSON, under the global rate limit, built once at startup', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/openapi.json' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['ratelimit-policy']).toBe('100000;w=60');
    expect(res.headers['x-request-id']).toBeTruthy();
    expect(res.json()).toEqual(openApiDocumentOf(t.app));
    expect(document.openapi).toBe('3.0.3');
    expect(document.servers).toEqual([{ url: 'http://localhost:8080/v1', description: 'Sandbox (UAT)' }]);
  });

  it('validates as OpenAPI 3.0 with a real validator, which does reject a broken copy', async () => {
    await expect(SwaggerParser.validate(structuredClone(document) as never)).resolves.toBeTruthy();
    const broken = structuredClone(document) as unknown as { paths: Record<string, Record<string, unknown>> };
    delete (broken.paths['/customers']!.get as { responses?: unknown }).responses;
    await expect(SwaggerParser.validate(broken as never)).rejects.toThrow();
    const badSchema = structuredClone(document);
    badSchema.components.schemas.Customer = { type: 'no-such-type' };
    await expect(SwaggerParser.validate(badSchema as never)).rejects.toThrow();
  });

  it('lists every live operation and nothing else: no planned resources, no provider callback, no admin', () => {
    expect(operationsOf(document).sort()).toEqual([...LIVE_OPERATIONS].sort());
    const paths = Object.keys(document.paths).join(' ');
    expect(paths).not.toMatch(/callback|admin|accounts|portfolios|transactions|openapi|docs|sandbox/);
  });

  it('describes auth: bearer JWT scheme, and the signature, client id and digest headers where required', () => {
    expect(document.components.securitySchemes.bearerAuth).toMatchObject({
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'JWT',
    });
    expect(document.components.securitySchemes.bearerAuth!.description).toMatch(/RFC 9421.*\/docs\/signing/s);
    const refs = (method: 'get' | 'post' | 'patch', path: string) =>
      (document.paths[path]![method]!.parameters ?? []).map((p) =>
        '$ref' in p ? p.$ref.split('/').pop() : p.name,
      );
    for (const [method, path] of [
      ['post', '/oauth/token'],
      ['get', '/webhooks/key'],
    ] as const) {
      expect(document.paths[path]![method]!.security).toEqual([]);
      expect(refs(method, path)).not.toContain('SignatureInput');
    }
    expect(refs('post', '/customers')).toEqual(
      expect.arrayContaining(['ClientId', 'SignatureInput', 'Signature', 'ContentDigest', 'IdempotencyKey']),
    );
    expect(refs('get', '/customers')).not.toContain('ContentDigest');
    expect(refs('get', '/customers')).not.toContain('IdempotencyKey');
    expect(refs('post', '/oauth/revoke')).toEqual(['ClientId', 'SignatureInput', 'Signature', 'RequestId']);
    expect(refs('get', '/customers/{id}')).toContain('id');
    expect(refs('get', '/payment/status/{orderId}')).toContain('orderId');
    expect(document.components.parameters.IdempotencyKey!.schema).toEqual({ type: 'string', format: 'uuid' });
  });

  it('takes query parameters from the route schema, typed as parsed (integers, booleans) with their defaults', () => {
    const query = document.paths['/customers']!.get!.parameters!.filter((p) => !('$ref' in p));
    expect(query.map((p) => ('name' in p ? [p.name, p.in, p.required] : []))).toEqual([
      ['page', 'query', false],
      ['limit', 'query', false],
      ['isActive', 'query', false],
      ['identificationType', 'query', false],
      ['search', 'query', false],
      ['msisdn', 'query', false],
    ]);
    const byName = Object.fromEntries(query.map((p) => ('name' in p ? [p.name, p.schema] : [])));
    expect(byName.limit).toEqual({ default: 10, type: 'integer', minimum: 1, maximum: 100 });
    expect(byName.isActive).toEqual({ type: 'boolean' });
  });

  it('gives every response the request id and rate-limit headers, and Retry-After to every 429', () => {
    for (const item of Object.values(document.paths)) {
      for (const operation of Object.values(item)) {
        for (const [status, response] of Object.entries(operation!.responses)) {
          const names = Object.keys(response.headers ?? {});
          expect(names).toEqual(
            expect.arrayContaining([
              'X-Request-Id',
              'RateLimit-Limit',
              'RateLimit-Remaining',
              'RateLimit-Reset',
              'RateLimit-Policy',
            ]),
          );
          if (status === '429') expect(names).toContain('Retry-After');
        }
        expect(Object.keys(operation!.responses)).toEqual(expect.arrayContaining(['429', '500']));
      }
    }
    const replayed = document.paths['/ussd/process']!.post!.responses['200']!.headers!;
    expect(replayed['Idempotent-Replayed']).toBeDefined();
    expect(document.paths['/webhooks/key']!.get!.responses['200']!.headers!['Cache-Control']).toBeDefined();
  });

  it('uses the three reusable error shapes, with every exact message of the contract as an example', () => {
    for (const name of ['ValidationError', 'ErrorWithMessage', 'ErrorLabelOnly']) {
      expect(document.components.schemas[name]).toMatchObject({
        type: 'object',
        additionalProperties: false,
      });
    }
    const examples: unknown[] = [];
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        for (const [status, response] of Object.entries(operation!.responses) as [string, ResponseObject][]) {
          const media = response.content!['application/json']!;
          for (const [key, example] of Object.entries(media.examples ?? {})) {
            examples.push(example.value);
            const problems = bodyProblems(
              document,
              `${method} ${path} ${status} ${key}`,
              media.schema,
              example.value,
            );
            expect(problems, `${method} ${path} ${status} example ${key}`).toEqual([]);
          }
          if (Number(status) >= 400) expect(Object.keys(media.examples ?? {}).length).toBeGreaterThan(0);
        }
      }
    }
    const messages = new Set(examples.map((e) => (e as { message?: string }).message).filter(Boolean));
    for (const [name, message] of Object.entries(ErrorMessage)) {
      if (typeof message === 'string') expect(messages, name).toContain(message);
    }
    expect(
      [...messages].some((m) => /^No payment or disbursement transaction was found for the order c/.test(m!)),
    ).toBe(true);
  });

  it('shows the examples the server really answers', async () => {
    const vendorJson = await t.app.inject({
      method: 'POST',
      url: '/v1/oauth/token',
      headers: { 'content-type': 'application/vnd.api+json' },
      payload: '{}',
    });
    const example = (path: string, method: 'post', status: string, key: string) =>
      document.paths[path]![method]!.responses[status]!.content!['application/json']!.examples![key]!.value;
    expect(vendorJson.json()).toEqual(example('/oauth/token', 'post', '400', 'bodyNotParsed'));
    const badCredentials = await t.app.inject({
      method: 'POST',
      url: '/v1/oauth/token',
      payload: { clientId: `org_${'a'.repeat(32)}`, clientSecret: `${'b'.repeat(32)}_${'c'.repeat(32)}` },
    });
    expect(badCredentials.json()).toEqual(example('/oauth/token', 'post', '401', 'invalidCredentials'));
    const revokeMalformed = await t.app.inject({
      method: 'POST',
      url: '/v1/oauth/revoke',
      headers: { authorization: 'Bearer not-a-jwt' },
    });
    expect([revokeMalformed.statusCode, revokeMalformed.json()]).toEqual([
      400,
      example('/oauth/revoke', 'post', '400', 'tokenMalformed'),
    ]);
  });
});

describe('the document cannot fall behind the routes', () => {
  const routes = Object.keys(OPERATIONS).map((key) => {
    const [method, url] = key.split(' ') as [string, string];
    return { method, url, schema: undefined };
  });
  const build = (list: typeof routes) =>
    buildOpenApiDocument({ routes: list, publicBaseUrl: 'http://localhost:8080', appEnv: 'sandbox' });

  it('refuses a /v1 route it does not describe, and a description without a route', () => {
    expect(() =>
      build([...routes, { method: 'DELETE', url: '/v1/customers/:id', schema: undefined }]),
    ).toThrow(/DELETE \/v1\/customers\/:id is neither in the OpenAPI document/);
    expect(() => build(routes.slice(1))).toThrow(
      /describes POST \/v1\/oauth\/token, which is not registered/,
    );
  });

  it('leaves out routes outside /v1 and the listed undocumented ones', () => {
    const document = build([
      ...routes,
      { method: 'GET', url: '/healthz', schema: undefined },
      { method: 'POST', url: '/v1/webhooks/callback', schema: undefined },
    ]);
    expect(operationsOf(document)).toHaveLength(LIVE_OPERATIONS.length);
  });
});
