import { buildTestApp } from '@partner-api/testkit/app.ts';
import { CONTRACT_VIOLATION_STATUS, checkResponse } from '@partner-api/testkit/contract-check.ts';
import { createPartner, signedInject } from '@partner-api/testkit/partner.ts';
import { and, eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { idempotencyKeys } from '../../src/db/schema.ts';
import type { OpenApiDocument } from '../../src/openapi/types.ts';
import { openApiDocumentOf } from '../../src/routes/docs.ts';

const RATE_HEADERS = {
  'x-request-id': 'req-1',
  'ratelimit-limit': '300',
  'ratelimit-remaining': '299',
  'ratelimit-reset': '60',
  'ratelimit-policy': '300;w=60',
  'content-type': 'application/json; charset=utf-8',
};
const me = { path: '/oauth/me', method: 'get' } as const;

describe('the response contract check', () => {
  let document: OpenApiDocument;
  beforeAll(async () => {
    const t = await buildTestApp('pglite');
    document = openApiDocumentOf(t.app)!;
    await t.close();
  });

  it('accepts a response as documented', () => {
    const body = JSON.stringify({ error: 'Unauthorized', message: 'Client ID mismatch' });
    expect(checkResponse(document, me, 401, RATE_HEADERS, body)).toEqual([]);
  });

  it('reports an undocumented status, a missing or malformed header, and a body off its schema', () => {
    expect(checkResponse(document, me, 418, RATE_HEADERS, '{}')).toEqual([
      'status 418 is not documented for GET /oauth/me',
    ]);
    const { 'x-request-id': _, ...noRequestId } = RATE_HEADERS;
    expect(checkResponse(document, me, 500, noRequestId, '{"error":"Internal Server Error"}')).toEqual([
      'required header X-Request-Id is missing',
    ]);
    expect(
      checkResponse(document, me, 500, { ...RATE_HEADERS, 'ratelimit-policy': '300' }, '{"error":"x"}'),
    ).toEqual(["header RateLimit-Policy: '300' does not match ^[0-9]+;w=[0-9]+$"]);
    const leaky = checkResponse(
      document,
      me,
      500,
      RATE_HEADERS,
      '{"error":"Internal Server Error","stack":"at x"}',
    );
    expect(leaky.join('\n')).toMatch(/must NOT have additional properties/);
    expect(
      checkResponse(document, me, 401, { ...RATE_HEADERS, 'content-type': 'text/plain' }, '{"error":"x"}'),
    ).toContain("content-type 'text/plain' is not application/json");
    expect(
      checkResponse(document, { path: '/oauth/token', method: 'post' }, 429, RATE_HEADERS, '{"error":"x"}'),
    ).toContain('required header Retry-After is missing');
  });

  it('turns a real off-contract response into a 599 and fails the suite when the app closes', async () => {
    const t = await buildTestApp('pglite');
    const partner = await createPartner(t);
    const key = '0b7e3c1e-8d0c-4a53-9f0e-1c2d3e4f5a6b';
    const create = () =>
      signedInject(t.app, partner, {
        method: 'POST',
        url: '/v1/customers',
        body: { firstName: 'Amina', lastName: 'Otieno' },
        idempotencyKey: key,
      });
    expect((await create()).statusCode).toBe(201);
    // A stored response that no longer matches the document, replayed verbatim.
    await t.ctx.database.db
      .update(idempotencyKeys)
      .set({ responseBody: '{"message":"Customer created successfully","data":{"id":"x"},"extra":true}' })
      .where(and(eq(idempotencyKeys.credentialId, partner.credentialId), eq(idempotencyKeys.key, key)));
    const replay = await create();
    expect(replay.statusCode).toBe(CONTRACT_VIOLATION_STATUS);
    expect(replay.json().violation).toMatch(/POST \/v1\/customers answered 201:[\s\S]*additional properties/);
    await expect(t.close()).rejects.toThrow(/1 response\(s\) broke the OpenAPI contract/);
  });
});
