import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { countingStatements } from '@partner-api/testkit/counting-db.ts';
import { CUSTOMER_NOT_FOUND_BODY } from '@partner-api/testkit/helpers.ts';
import { createPartner, signedHeaders, signedInject } from '@partner-api/testkit/partner.ts';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { customerReader } from '../../src/services/customers/get.ts';
import { createCustomerViaApi, invalid, NONEXISTENT_ID } from './helpers.ts';

describeStores('GET /v1/customers/{id} on %s', (store) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp(store);
  });
  afterAll(() => t.close());

  it('returns the full customer under data', async () => {
    const p = await createPartner(t);
    const created = await createCustomerViaApi(t, p, {
      identificationNumber: 'A1234567',
      identificationType: 'NATIONAL_ID',
      referenceId: 'crm-42',
    });
    const res = await signedInject(t.app, p, { method: 'GET', url: `/v1/customers/${created.id}` });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ data: created });
  });

  it('answers 404 Customer not found for an unknown id', async () => {
    const p = await createPartner(t);
    const res = await signedInject(t.app, p, { method: 'GET', url: `/v1/customers/${NONEXISTENT_ID}` });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual(CUSTOMER_NOT_FOUND_BODY);
  });

  it.each([
    ['not a CUID', 'customer-1'],
    ['upper case', 'CABCDEFGHIJKLMNOPQRSTUVWX'],
    ['one character short', 'c00000000000000000000000'],
    ['SQL', "c' or '1'='1"],
  ])('refuses an id that is %s with 400 before any lookup', async (_name, id) => {
    const p = await createPartner(t);
    const res = await signedInject(t.app, p, {
      method: 'GET',
      url: `/v1/customers/${encodeURIComponent(id)}`,
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual(invalid('id', 'Invalid customer ID format'));
  });

  it("security: another organization's customer is reported exactly like a nonexistent one", async () => {
    const a = await createPartner(t);
    const b = await createPartner(t);
    const customer = await createCustomerViaApi(t, a);
    const foreign = await signedInject(t.app, b, { method: 'GET', url: `/v1/customers/${customer.id}` });
    const missing = await signedInject(t.app, b, { method: 'GET', url: `/v1/customers/${NONEXISTENT_ID}` });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.body).toBe(missing.body);
    expect(foreign.headers['content-type']).toBe(missing.headers['content-type']);
  });

  it('security: no token, or a signature over another path, is 401', async () => {
    const p = await createPartner(t);
    const customer = await createCustomerViaApi(t, p);
    const anonymous = await t.app.inject({ method: 'GET', url: `/v1/customers/${customer.id}` });
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.json()).toEqual({
      error: 'Unauthorized',
      message: 'Organization authentication token is required',
    });
    // Headers signed for one path, sent to another: a captured request cannot be redirected.
    const headers = signedHeaders(p, { method: 'GET', url: `/v1/customers/${NONEXISTENT_ID}` }, undefined);
    const replayedElsewhere = await t.app.inject({
      method: 'GET',
      url: `/v1/customers/${customer.id}`,
      headers,
    });
    expect(replayedElsewhere.statusCode).toBe(401);
    expect(replayedElsewhere.json().message).toBe('Signature verification failed');
  });

  // services/customers/get.ts reads a turn's customers in one statement (db/query.ts, coalescedReader).
  it("security: in one statement, each organization finds its own customers and never another's", async () => {
    const a = await createPartner(t);
    const b = await createPartner(t);
    const ofA = await createCustomerViaApi(t, a);
    const ofB = await createCustomerViaApi(t, b, { firstName: 'Baraka' });
    const { q, count } = countingStatements(t.ctx.database.db);
    const read = customerReader(q);
    const found = await Promise.all([
      read({ organizationId: a.organizationId, id: ofA.id }),
      read({ organizationId: b.organizationId, id: ofA.id }),
      read({ organizationId: b.organizationId, id: ofB.id }),
      read({ organizationId: a.organizationId, id: ofB.id }),
      read({ organizationId: a.organizationId, id: NONEXISTENT_ID }),
    ]);
    expect(count()).toBe(1);
    expect(found).toEqual([ofA, undefined, ofB, undefined, undefined]);
  });

  it('many GETs at once, from two organizations, each answered as alone', async () => {
    const a = await createPartner(t);
    const b = await createPartner(t);
    const ofA = await createCustomerViaApi(t, a);
    const get = (p: typeof a, id: string) =>
      signedInject(t.app, p, { method: 'GET', url: `/v1/customers/${id}` });
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) => (i % 2 === 0 ? get(a, ofA.id) : get(b, ofA.id))),
    );
    answers.forEach((res, i) => {
      if (i % 2 === 0) expect(res.json()).toEqual({ data: ofA });
      else expect([res.statusCode, res.json()]).toEqual([404, CUSTOMER_NOT_FOUND_BODY]);
    });
  });
});
