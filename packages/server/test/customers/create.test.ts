import { randomUUID } from 'node:crypto';
import { CUID_PATTERN } from '@partner-api/contract';
import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { createPartner, signedHeaders, signedInject } from '@partner-api/testkit/partner.ts';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { countCustomers, customerBody, invalid } from './helpers.ts';

const long = (n: number) => 'x'.repeat(n);

describeStores('POST /v1/customers on %s', (store) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp(store);
  });
  afterAll(() => t.close());

  const post = (
    partner: Awaited<ReturnType<typeof createPartner>>,
    body: unknown,
    idempotencyKey?: string | false,
  ) => signedInject(t.app, partner, { method: 'POST', url: '/v1/customers', body, idempotencyKey });

  it('refuses a lone surrogate as a validation error naming the field, and stores nothing', async () => {
    const p = await createPartner(t);
    for (const [field, value] of [
      ['firstName', 'A\ud800'],
      ['lastName', '\udfffB'],
      ['referenceId', 'ref-\ud83d'],
    ] as const) {
      const res = await post(p, customerBody({ [field]: value }));
      expect(res.statusCode, field).toBe(400);
      expect(res.json()).toEqual(
        invalid(field, 'must be valid Unicode text (an unpaired surrogate was sent)'),
      );
    }
    // A whole pair (an emoji) is text like any other.
    expect((await post(p, customerBody({ firstName: 'Amina \ud83d\ude00' }))).statusCode).toBe(201);
    expect(await countCustomers(t, p.organizationId)).toBe(1);
  });

  it('reports a lone surrogate together with the other invalid fields, one entry each', async () => {
    const p = await createPartner(t);
    const res = await post(
      p,
      customerBody({ firstName: 'A\ud800', msisdn: 'abc', identificationNumber: '\udc00' }),
    );
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      error: 'Validation failed',
      details: [
        { field: 'msisdn', message: 'msisdn must be 7 to 15 digits' },
        { field: 'firstName', message: 'must be valid Unicode text (an unpaired surrogate was sent)' },
        {
          field: 'identificationNumber',
          message: 'must be valid Unicode text (an unpaired surrogate was sent)',
        },
      ],
    });
    expect(await countCustomers(t, p.organizationId)).toBe(0);
  });

  it('creates a customer with defaults: 201, trimmed names, isActive true, the rest null', async () => {
    const p = await createPartner(t);
    const res = await post(p, { firstName: '  Amina ', lastName: 'Otieno' });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body.message).toBe('Customer created successfully');
    expect(body.data).toEqual({
      id: expect.stringMatching(CUID_PATTERN),
      organizationId: p.organizationId,
      firstName: 'Amina',
      lastName: 'Otieno',
      msisdn: null,
      isActive: true,
      identificationNumber: null,
      identificationType: null,
      referenceId: null,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect(new Date(body.data.createdAt).toISOString()).toBe(body.data.createdAt);
    const get = await signedInject(t.app, p, { method: 'GET', url: `/v1/customers/${body.data.id}` });
    expect(get.json()).toEqual({ data: body.data });
  });

  it('stores every field as sent, at the bounds', async () => {
    const p = await createPartner(t);
    const input = {
      firstName: long(100),
      lastName: 'B',
      msisdn: '1234567',
      isActive: false,
      identificationNumber: long(50),
      identificationType: 'PASSPORT',
      referenceId: long(100),
    };
    const res = await post(p, input);
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().data).toMatchObject(input);
    const fifteen = await post(p, customerBody({ msisdn: '123456789012345', identificationType: null }));
    expect(fifteen.json().data).toMatchObject({ msisdn: '123456789012345', identificationType: null });
  });

  const cases: [string, Record<string, unknown> | unknown, string, string][] = [
    ['firstName missing', { lastName: 'B' }, 'firstName', 'firstName is required'],
    ['lastName missing', { firstName: 'A' }, 'lastName', 'lastName is required'],
    ['firstName null', customerBody({ firstName: null }), 'firstName', 'firstName cannot be null'],
    ['firstName a number', customerBody({ firstName: 5 }), 'firstName', 'firstName must be a string'],
    ['firstName blank', customerBody({ firstName: '   ' }), 'firstName', 'firstName must not be empty'],
    [
      'lastName too long',
      customerBody({ lastName: long(101) }),
      'lastName',
      'lastName must be at most 100 characters',
    ],
    ['msisdn 6 digits', customerBody({ msisdn: '123456' }), 'msisdn', 'msisdn must be 7 to 15 digits'],
    [
      'msisdn 16 digits',
      customerBody({ msisdn: long(16).replace(/x/g, '1') }),
      'msisdn',
      'msisdn must be 7 to 15 digits',
    ],
    ['msisdn with +', customerBody({ msisdn: '+254712345678' }), 'msisdn', 'msisdn must be 7 to 15 digits'],
    [
      'msisdn a number',
      customerBody({ msisdn: 254712345678 }),
      'msisdn',
      'msisdn must be a string of 7 to 15 digits',
    ],
    ['isActive a string', customerBody({ isActive: 'true' }), 'isActive', 'isActive must be true or false'],
    [
      'identificationType unknown',
      customerBody({ identificationType: 'passport' }),
      'identificationType',
      'identificationType must be one of SSN, PASSPORT, DRIVER_LICENSE, NATIONAL_ID, TAX_ID, OTHER',
    ],
    [
      'identificationNumber too long',
      customerBody({ identificationNumber: long(51) }),
      'identificationNumber',
      'identificationNumber must be at most 50 characters',
    ],
    [
      'identificationNumber blank',
      customerBody({ identificationNumber: '  ' }),
      'identificationNumber',
      'identificationNumber must not be blank',
    ],
    ['referenceId empty', customerBody({ referenceId: '' }), 'referenceId', 'referenceId must not be empty'],
    [
      'referenceId too long',
      customerBody({ referenceId: long(101) }),
      'referenceId',
      'referenceId must be at most 100 characters',
    ],
    ['an unknown field', customerBody({ email: 'a@b.c' }), 'email', 'Unknown field'],
    [
      'organizationId in the body',
      customerBody({ organizationId: 'c123' }),
      'organizationId',
      'Unknown field',
    ],
    ['a JSON array', [customerBody()], '', 'Invalid input: expected object, received array'],
  ];

  it.each(cases)(
    'refuses %s with one entry naming the field, and writes nothing',
    async (_name, body, field, message) => {
      const p = await createPartner(t);
      const res = await post(p, body);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual(invalid(field, message));
      expect(await countCustomers(t, p.organizationId)).toBe(0);
    },
  );

  it('reports every invalid field at once, one entry each', async () => {
    const p = await createPartner(t);
    const res = await post(p, { firstName: '', msisdn: 'abc', isActive: 1, nickname: 'x', alias: 'y' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      error: 'Validation failed',
      details: [
        { field: 'firstName', message: 'firstName must not be empty' },
        { field: 'lastName', message: 'lastName is required' },
        { field: 'msisdn', message: 'msisdn must be 7 to 15 digits' },
        { field: 'isActive', message: 'isActive must be true or false' },
        { field: 'nickname', message: 'Unknown field' },
        { field: 'alias', message: 'Unknown field' },
      ],
    });
  });

  it('replays a repeated key: same status and body, Idempotent-Replayed, created once', async () => {
    const p = await createPartner(t);
    const key = randomUUID();
    const first = await post(p, customerBody(), key);
    const second = await post(p, customerBody(), key);
    expect(first.statusCode).toBe(201);
    expect(second.statusCode).toBe(201);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(second.body).toBe(first.body);
    expect(await countCustomers(t, p.organizationId)).toBe(1);
  });

  it('refuses a key reused with another body (422) and a missing key (400), writing nothing more', async () => {
    const p = await createPartner(t);
    const key = randomUUID();
    await post(p, customerBody(), key);
    const reused = await post(p, customerBody({ firstName: 'Other' }), key);
    expect(reused.statusCode).toBe(422);
    expect(reused.json()).toEqual({
      error: 'Unprocessable Entity',
      message: 'X-Idempotency-Key was already used with a different request payload',
    });
    const missing = await post(p, customerBody(), false);
    expect(missing.statusCode).toBe(400);
    expect(missing.json()).toEqual({
      error: 'Bad Request',
      message: 'X-Idempotency-Key header is required for this request',
    });
    expect(await countCustomers(t, p.organizationId)).toBe(1);
  });

  it('security: an unsigned request or a body changed after signing is refused and writes nothing', async () => {
    const p = await createPartner(t);
    const unsigned = await signedInject(t.app, p, {
      method: 'POST',
      url: '/v1/customers',
      body: customerBody(),
      tamper: (h) => {
        delete h.signature;
        delete h['signature-input'];
      },
    });
    expect(unsigned.statusCode).toBe(401);
    expect(unsigned.json()).toEqual({ error: 'Unauthorized', message: 'Signature verification failed' });
    const signedPayload = JSON.stringify(customerBody());
    const headers = signedHeaders(p, { method: 'POST', url: '/v1/customers' }, signedPayload);
    const swapped = await t.app.inject({
      method: 'POST',
      url: '/v1/customers',
      headers,
      payload: JSON.stringify(customerBody({ firstName: 'Mallory' })),
    });
    expect(swapped.statusCode).toBe(401);
    expect(swapped.json()).toEqual({ error: 'Unauthorized', message: 'Content-Digest verification failed' });
    expect(await countCustomers(t, p.organizationId)).toBe(0);
  });

  it('security: the customer always belongs to the token organization', async () => {
    const a = await createPartner(t);
    const b = await createPartner(t);
    const res = await post(b, customerBody());
    expect(res.json().data.organizationId).toBe(b.organizationId);
    expect(await countCustomers(t, a.organizationId)).toBe(0);
  });
});
