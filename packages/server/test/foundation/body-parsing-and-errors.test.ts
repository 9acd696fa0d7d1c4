import { Readable } from 'node:stream';
import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import {
  adminInject,
  INTERNAL_ERROR_BODY,
  JSON_HEADERS,
  NOT_FOUND_BODY,
  UUID,
} from '@partner-api/testkit/helpers.ts';
import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { JSON_BODY_LIMIT } from '../../src/plugins/body-parsing.ts';

// Well-formed credentials (no such credential exists): with them only the padding field fails
// validation, which proves the body was parsed.
const CLIENT_ID = `org_${'0'.repeat(32)}`;
const CLIENT_SECRET = `${'a'.repeat(32)}_${'b'.repeat(32)}`;

/** A valid JSON object of exactly `bytes` bytes (UTF-8), padded by an unknown field `pad`. */
function paddedTokenBody(bytes: number, padChar = 'x'): string {
  const head = `{"clientId":"${CLIENT_ID}","clientSecret":"${CLIENT_SECRET}","pad":"`;
  const tail = '"}';
  const room = bytes - Buffer.byteLength(head + tail);
  const charBytes = Buffer.byteLength(padChar);
  const body = head + padChar.repeat(Math.floor(room / charBytes)) + 'x'.repeat(room % charBytes) + tail;
  expect(Buffer.byteLength(body)).toBe(bytes);
  return body;
}

const postToken = (
  t: TestApp,
  payload: InjectOptions['payload'],
  headers: Record<string, string> = JSON_HEADERS,
) => t.app.inject({ method: 'POST', url: '/v1/oauth/token', headers, payload });

describeStores('body parsing and error shapes on %s', (store) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp(store);
  });
  afterAll(() => t.close());

  it('the limit is the spec’s 102,400 bytes', () => {
    expect(JSON_BODY_LIMIT).toBe(102_400);
  });

  it('parses a JSON body of exactly 102,400 bytes (then validation names the unknown field)', async () => {
    const res = await postToken(t, paddedTokenBody(102_400));
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      error: 'Validation failed',
      details: [{ field: 'pad', message: 'Unknown field' }],
    });
  });

  it('answers a JSON body of 102,401 bytes with the bare 500', async () => {
    const res = await postToken(t, paddedTokenBody(102_401));
    expect(res.statusCode).toBe(500);
    expect(res.body).toBe(INTERNAL_ERROR_BODY);
  });

  it('counts the limit in bytes, not characters', async () => {
    const atLimit = paddedTokenBody(102_400, 'é');
    expect(atLimit.length).toBeLessThan(102_400);
    expect((await postToken(t, atLimit)).statusCode).toBe(400);

    const overLimit = paddedTokenBody(102_401, 'é');
    expect(overLimit.length).toBeLessThan(102_400);
    const res = await postToken(t, overLimit);
    expect(res.statusCode).toBe(500);
    expect(res.body).toBe(INTERNAL_ERROR_BODY);
  });

  it('enforces the limit on a chunked body that announces no length', async () => {
    // Well-formed JSON, so only the size can make it fail.
    const body = Buffer.from(paddedTokenBody(102_401));
    const chunks = [body.subarray(0, 50_000), body.subarray(50_000)];
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/oauth/token',
      headers: { ...JSON_HEADERS, 'transfer-encoding': 'chunked' },
      payload: Readable.from(chunks),
    });
    expect(res.statusCode).toBe(500);
    expect(res.body).toBe(INTERNAL_ERROR_BODY);
  });

  it('answers malformed JSON with the bare 500', async () => {
    for (const payload of ['{"clientId":', '{bad json}', "{'a':1}", '{"a":1}}', '   ']) {
      const res = await postToken(t, payload);
      expect(res.statusCode, payload).toBe(500);
      expect(res.body, payload).toBe(INTERNAL_ERROR_BODY);
    }
  });

  it('answers a top-level JSON string, number or null with the bare 500 (strict, like body-parser)', async () => {
    for (const payload of ['"hi"', '42', 'null', 'true']) {
      const res = await postToken(t, payload);
      expect(res.statusCode, payload).toBe(500);
      expect(res.body, payload).toBe(INTERNAL_ERROR_BODY);
    }
  });

  const postVendorJson = () =>
    postToken(t, JSON.stringify({ clientId: CLIENT_ID, clientSecret: CLIENT_SECRET }), {
      'content-type': 'application/vnd.api+json',
    });

  it('does not parse a +json content type: one validation entry for the whole body', async () => {
    const res = await postVendorJson();
    expect(res.statusCode).toBe(400);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['details', 'error']);
    expect(body.error).toBe('Validation failed');
    expect(body.details).toHaveLength(1);
    expect(body.details[0].field).toBe('');
    expect(body.details[0].message).toContain('expected object');
  });

  it('says the object was expected but undefined was received (spec wording)', async () => {
    const res = await postVendorJson();
    expect(res.json().details[0].message).toContain('received undefined');
  });

  it('counts Content-Type: application/json with an empty body as {}', async () => {
    const res = await postToken(t, '');
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      error: 'Validation failed',
      details: [
        { field: 'clientId', message: 'Invalid client ID format' },
        { field: 'clientSecret', message: 'Invalid client secret format' },
      ],
    });
  });

  it('parses application/json with a charset parameter', async () => {
    const res = await postToken(t, paddedTokenBody(200), {
      'content-type': 'application/json; charset=utf-8',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().details).toEqual([{ field: 'pad', message: 'Unknown field' }]);
  });

  it('answers an unmatched route with 404 {"error":"Not Found"}', async () => {
    for (const [method, url] of [
      ['GET', '/'],
      ['GET', '/v1'],
      ['GET', '/v1/nothing/here'],
      ['POST', '/v2/oauth/token'],
      ['GET', '/healthz/'],
    ] as const) {
      const res = await t.app.inject({ method, url });
      expect(res.statusCode, `${method} ${url}`).toBe(404);
      expect(res.body, `${method} ${url}`).toBe(NOT_FOUND_BODY);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
    }
  });

  it('answers an unsupported method on a live path like an unmatched route', async () => {
    for (const method of ['GET', 'PUT', 'PATCH', 'DELETE'] as const) {
      const res = await t.app.inject({ method, url: '/v1/oauth/token' });
      expect(res.statusCode, method).toBe(404);
      expect(res.body, method).toBe(NOT_FOUND_BODY);
    }
    const res = await t.app.inject({ method: 'POST', url: '/healthz' });
    expect(res.statusCode).toBe(404);
    expect(res.body).toBe(NOT_FOUND_BODY);
  });

  it('parses before routing: malformed or oversized JSON to an unmatched route is the bare 500', async () => {
    for (const payload of ['{bad', paddedTokenBody(102_401)]) {
      const res = await t.app.inject({ method: 'POST', url: '/v1/nothing', headers: JSON_HEADERS, payload });
      expect(res.statusCode).toBe(500);
      expect(res.body).toBe(INTERNAL_ERROR_BODY);
    }
    // A well-formed body to an unmatched route is just the 404.
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/nothing',
      headers: JSON_HEADERS,
      payload: '{}',
    });
    expect(res.statusCode).toBe(404);
    expect(res.body).toBe(NOT_FOUND_BODY);
  });

  it('parses before authentication: a malformed body to an authenticated route is the bare 500, not 401', async () => {
    for (const url of ['/v1/customers', '/v1/ussd/session', '/v1/ussd/process']) {
      const res = await t.app.inject({ method: 'POST', url, headers: JSON_HEADERS, payload: '{bad' });
      expect(res.statusCode, url).toBe(500);
      expect(res.body, url).toBe(INTERNAL_ERROR_BODY);
    }
  });

  it('never puts more than the label in a 500 body (public and admin listeners)', async () => {
    const bad = ['{bad', '"hi"', paddedTokenBody(102_401)];
    const targets = [
      { app: t.app, method: 'POST', url: '/v1/oauth/token' },
      { app: t.app, method: 'POST', url: '/v1/customers' },
      { app: t.app, method: 'PATCH', url: '/v1/customers/cjld2cjxh0000qzrmn831i7rn' },
      { app: t.admin, method: 'POST', url: '/admin/organizations' },
    ] as const;
    for (const target of targets) {
      for (const payload of bad) {
        const res = await target.app.inject({
          method: target.method,
          url: target.url,
          payload,
          headers: { ...JSON_HEADERS, authorization: `Bearer ${t.ctx.secrets.adminToken}` },
        });
        expect(res.statusCode, `${target.method} ${target.url}`).toBe(500);
        expect(res.body).toBe(INTERNAL_ERROR_BODY);
      }
    }
  });

  it('keeps database detail out of a 500 raised by the store', async () => {
    // PostgreSQL refuses NUL bytes in text: an unexpected database error, reported by label only.
    const res = await adminInject(t, 'POST', '/admin/organizations', { name: 'bad\u0000name' });
    if (res.statusCode === 500) expect(res.body).toBe(INTERNAL_ERROR_BODY);
    else expect(res.statusCode).toBe(400);
    expect(res.body).not.toMatch(/byte|sequence|0x00|UTF8|stack|at /i);
  });
});

describeStores('X-Request-Id on %s', (store) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp(store, { RATE_LIMIT_GLOBAL: '2/60s' });
  });
  afterAll(() => t.close());

  it('is on every response: 200, 400, 404, 429, 500, healthz, metrics and admin 401', async () => {
    const ip = '192.0.2.10';
    const responses = [
      await t.app.inject({ method: 'GET', url: '/healthz' }),
      await t.app.inject({ method: 'GET', url: '/metrics' }),
      await t.app.inject({ method: 'POST', url: '/v1/oauth/token', payload: {}, remoteAddress: ip }),
      await t.app.inject({ method: 'GET', url: '/nope', remoteAddress: ip }),
      await t.app.inject({ method: 'GET', url: '/nope', remoteAddress: ip }), // 429
      await t.app.inject({
        method: 'POST',
        url: '/nope',
        headers: JSON_HEADERS,
        payload: '{',
        remoteAddress: '192.0.2.11',
      }),
      await t.admin.inject({ method: 'GET', url: '/admin/organizations' }),
    ];
    expect(responses.map((r) => r.statusCode)).toEqual([200, 200, 400, 404, 429, 500, 401]);
    for (const res of responses) expect(res.headers['x-request-id']).toMatch(UUID);
  });

  it('is on the answer to a malformed URL or an over-long path parameter, in a spec shape', async () => {
    for (const url of ['/v1/customers/%zz', `/v1/customers/${'c'.repeat(101)}`]) {
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.headers['x-request-id'], url).toMatch(UUID);
      expect(
        Object.keys(res.json()).every((k) => ['error', 'message', 'details'].includes(k)),
        url,
      ).toBe(true);
    }
  });

  it('echoes a sane client id', async () => {
    for (const id of ['abc-123', 'req_01HZX.9:Z', 'a'.repeat(128), '3f2b9c1e-0d5e-4c1b-9a77-2b6f1c0e9d11']) {
      const res = await t.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': id } });
      expect(res.headers['x-request-id']).toBe(id);
      const notFound = await t.app.inject({ method: 'GET', url: '/nope', headers: { 'x-request-id': id } });
      expect(notFound.headers['x-request-id']).toBe(id);
    }
  });

  it('replaces an insane one with a fresh UUID', async () => {
    for (const id of [
      'has space',
      'a'.repeat(200),
      'a'.repeat(129),
      'new\u00e9line',
      'x;rm -rf',
      '<script>',
    ]) {
      const res = await t.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': id } });
      expect(res.headers['x-request-id'], id).toMatch(UUID);
    }
    const a = await t.app.inject({ method: 'GET', url: '/healthz' });
    const b = await t.app.inject({ method: 'GET', url: '/healthz' });
    expect(a.headers['x-request-id']).not.toBe(b.headers['x-request-id']);
  });
});
