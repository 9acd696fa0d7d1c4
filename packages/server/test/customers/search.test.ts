import type { Customer } from '@partner-api/contract';
import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { createPartner, type Partner, signedInject } from '@partner-api/testkit/partner.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { likePattern } from '../../src/services/customers/list.ts';
import { createCustomerViaApi } from './helpers.ts';

describe('likePattern', () => {
  it('escapes the LIKE wildcards and the escape character', () => {
    expect(likePattern('50%_off\\')).toBe('%50\\%\\_off\\\\%');
    expect(likePattern('plain')).toBe('%plain%');
  });
});

describeStores('GET /v1/customers?search= on %s', (store) => {
  let t: TestApp;
  let p: Partner;
  const c: Record<string, Customer> = {};
  beforeAll(async () => {
    t = await buildTestApp(store);
    p = await createPartner(t);
    const rows: [string, Record<string, unknown>][] = [
      [
        'amina',
        { firstName: 'Amina', lastName: 'Otieno', identificationNumber: 'ID-111', referenceId: 'crm-1' },
      ],
      [
        'brian',
        { firstName: 'Brian', lastName: 'Kamau', identificationNumber: 'PX998877', referenceId: null },
      ],
      [
        'chebet',
        { firstName: 'Chebet', lastName: 'Kiprop', identificationNumber: null, referenceId: 'ORDER_2024' },
      ],
      ['percent', { firstName: 'Zawadi', lastName: 'Njeri', referenceId: 'promo-100%' }],
      ['backslash', { firstName: 'Wanjiku', lastName: 'Mwangi', identificationNumber: 'A\\B' }],
      ['unicode', { firstName: 'Zoë', lastName: 'Ñandú' }],
    ];
    for (const [key, fields] of rows) c[key] = await createCustomerViaApi(t, p, fields);
  });
  afterAll(() => t.close());

  const search = async (term: string, extra = '', partner = p) => {
    const res = await signedInject(t.app, partner, {
      method: 'GET',
      url: `/v1/customers?search=${encodeURIComponent(term)}${extra}`,
    });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as { data: Customer[]; pagination: { total: number } };
  };
  const ids = (result: { data: Customer[] }) => result.data.map((x) => x.id).sort();
  const of = (...keys: string[]) => keys.map((k) => c[k]!.id).sort();

  it.each([
    ['firstName', 'Brian', ['brian']],
    ['lastName', 'kipro', ['chebet']],
    ['identificationNumber', 'x9988', ['brian']],
    ['referenceId', 'crm-', ['amina']],
  ])('matches a substring of %s', async (_field, term, expected) => {
    expect(ids(await search(term as string))).toEqual(of(...(expected as string[])));
  });

  it('is case-insensitive, unicode included', async () => {
    expect(ids(await search('AMINA'))).toEqual(of('amina'));
    expect(ids(await search('order_2024'))).toEqual(of('chebet'));
    expect(ids(await search('zOË'))).toEqual(of('unicode'));
    expect(ids(await search('ñandú'))).toEqual(of('unicode'));
  });

  it('matches a term that is shorter than a trigram', async () => {
    expect(ids(await search('am'))).toEqual(of('amina', 'brian'));
  });

  it('treats %, _ and \\ literally', async () => {
    expect(ids(await search('%'))).toEqual(of('percent'));
    expect(ids(await search('_'))).toEqual(of('chebet'));
    expect(ids(await search('R_2'))).toEqual(of('chebet'));
    expect((await search('R%2')).data).toEqual([]);
    expect((await search('a_i')).data).toEqual([]);
    expect(ids(await search('\\'))).toEqual(of('backslash'));
  });

  it('matches within one field, never across two', async () => {
    expect((await search('Amina Otieno')).data).toEqual([]);
    expect((await search('aminaotieno')).data).toEqual([]);
  });

  it('combines with filters and pagination; a blank search lists everyone', async () => {
    const page = await search('a', '&limit=2&page=2');
    expect(page.pagination).toEqual({ page: 2, limit: 2, total: 5, totalPages: 3 });
    expect((await search('kamau', '&isActive=false')).data).toEqual([]);
    expect((await search('   ')).pagination.total).toBe(6);
    expect((await search('nobody-has-this')).pagination).toEqual({
      page: 1,
      limit: 10,
      total: 0,
      totalPages: 0,
    });
  });

  it("security: a search never reaches another organization's customers", async () => {
    const b = await createPartner(t);
    expect((await search('Amina', '', b)).data).toEqual([]);
    expect((await search('', '', b)).pagination.total).toBe(0);
  });
});
