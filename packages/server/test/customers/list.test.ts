import type { Customer } from '@partner-api/contract';
import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { createPartner, type Partner, signedInject } from '@partner-api/testkit/partner.ts';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createCustomerViaApi } from './helpers.ts';

describeStores('GET /v1/customers on %s', (store) => {
  let t: TestApp;
  let p: Partner;
  /** 12 customers, oldest first; every third inactive, alternate ones with a passport. */
  let created: Customer[];
  beforeAll(async () => {
    t = await buildTestApp(store);
    p = await createPartner(t);
    created = [];
    for (let i = 0; i < 12; i++) {
      created.push(
        await createCustomerViaApi(t, p, {
          firstName: `Customer${i}`,
          msisdn: `2547000000${String(i).padStart(2, '0')}`,
          isActive: i % 3 !== 0,
          identificationType: i % 2 === 0 ? 'PASSPORT' : null,
        }),
      );
    }
  });
  afterAll(() => t.close());

  const list = (query = '', partner = p) =>
    signedInject(t.app, partner, { method: 'GET', url: `/v1/customers${query}` });
  const newestFirst = () => [...created].reverse();

  it('defaults to page 1 of 10, newest first, with totals', async () => {
    const res = await list();
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      data: newestFirst().slice(0, 10),
      pagination: { page: 1, limit: 10, total: 12, totalPages: 2 },
    });
  });

  it('the last page holds the remainder; past the end is empty with true totals', async () => {
    const last = (await list('?page=2')).json();
    expect(last.data).toEqual(newestFirst().slice(10));
    expect(last.pagination).toEqual({ page: 2, limit: 10, total: 12, totalPages: 2 });
    const past = (await list('?page=3')).json();
    expect(past).toEqual({ data: [], pagination: { page: 3, limit: 10, total: 12, totalPages: 2 } });
    const farPast = (await list('?page=1000000000&limit=100')).json();
    expect(farPast.pagination).toEqual({ page: 1000000000, limit: 100, total: 12, totalPages: 1 });
  });

  it('pages are stable and disjoint: every customer exactly once', async () => {
    const seen: string[] = [];
    for (let page = 1; page <= 4; page++) {
      seen.push(...(await list(`?page=${page}&limit=5`)).json().data.map((c: Customer) => c.id));
    }
    expect(seen).toEqual(newestFirst().map((c) => c.id));
    expect((await list('?limit=100')).json().pagination).toEqual({
      page: 1,
      limit: 100,
      total: 12,
      totalPages: 1,
    });
  });

  it('filters by isActive, identificationType and exact msisdn, combined', async () => {
    const inactive = (await list('?isActive=false')).json();
    expect(inactive.data.map((c: Customer) => c.firstName)).toEqual([
      'Customer9',
      'Customer6',
      'Customer3',
      'Customer0',
    ]);
    expect(inactive.pagination.total).toBe(4);
    expect((await list('?isActive=true')).json().pagination.total).toBe(8);
    const passports = (await list('?identificationType=PASSPORT&isActive=true')).json();
    expect(passports.data.map((c: Customer) => c.firstName)).toEqual([
      'Customer10',
      'Customer8',
      'Customer4',
      'Customer2',
    ]);
    const byPhone = (await list('?msisdn=254700000007')).json();
    expect(byPhone.data).toEqual([created[7]]);
    // Exact match, not a prefix or substring.
    expect((await list('?msisdn=2547000000')).json().pagination.total).toBe(0);
    expect((await list('?identificationType=SSN')).json()).toEqual({
      data: [],
      pagination: { page: 1, limit: 10, total: 0, totalPages: 0 },
    });
  });

  it.each([
    ['page=0', 'page', 'page must be at least 1'],
    ['page=-1', 'page', 'page must be a whole number'],
    ['page=1.5', 'page', 'page must be a whole number'],
    ['page=abc', 'page', 'page must be a whole number'],
    ['page=', 'page', 'page must be a whole number'],
    ['page=1000000001', 'page', 'page must be at most 1000000000'],
    ['page=1&page=2', 'page', 'page must be a whole number'],
    ['limit=0', 'limit', 'limit must be at least 1'],
    ['limit=101', 'limit', 'limit must be at most 100'],
    ['limit=ten', 'limit', 'limit must be a whole number'],
    ['isActive=yes', 'isActive', "isActive must be 'true' or 'false'"],
    ['isActive=1', 'isActive', "isActive must be 'true' or 'false'"],
    [
      'identificationType=passport',
      'identificationType',
      'identificationType must be one of SSN, PASSPORT, DRIVER_LICENSE, NATIONAL_ID, TAX_ID, OTHER',
    ],
    ['msisdn=+254700000007', 'msisdn', 'msisdn must be 7 to 15 digits'],
    [`search=${'a'.repeat(101)}`, 'search', 'search must be at most 100 characters'],
    ['search=a&search=b', 'search', 'search must be a single string'],
    ['pageSize=5', 'pageSize', 'Unknown field'],
    ['isactive=true', 'isactive', 'Unknown field'],
  ])('refuses %s with a validation entry', async (query, field, message) => {
    const res = await list(`?${query}`);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'Validation failed', details: [{ field, message }] });
  });

  it("security: another organization's list never includes these customers", async () => {
    const b = await createPartner(t);
    const own = await createCustomerViaApi(t, b, { firstName: 'Customer0' });
    const res = await list('?limit=100', b);
    expect(res.json()).toEqual({ data: [own], pagination: { page: 1, limit: 100, total: 1, totalPages: 1 } });
    const searched = await list('?search=customer&limit=100', b);
    expect(searched.json().data).toEqual([own]);
    const byPhone = await list(`?msisdn=${created[3]!.msisdn}`, b);
    expect(byPhone.json().pagination.total).toBe(0);
  });

  it('security: an unauthenticated or unsigned list is 401', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/v1/customers' })).statusCode).toBe(401);
    const unsigned = await signedInject(t.app, p, {
      method: 'GET',
      url: '/v1/customers',
      tamper: (h) => {
        delete h.signature;
      },
    });
    expect(unsigned.statusCode).toBe(401);
    expect(unsigned.json()).toEqual({ error: 'Unauthorized', message: 'Signature verification failed' });
  });
});
