import { createId } from '@partner-api/contract';
import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { NOT_FOUND_BODY } from '@partner-api/testkit/helpers.ts';
import { createPartner, type Partner, signedInject } from '@partner-api/testkit/partner.ts';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { one } from '../../src/db/query.ts';
import { customers, holdings } from '../../src/db/schema.ts';
import { eat, INVESTMENTS_ENV, NONEXISTENT_ID, runTag, seedInstruments } from './market-support.ts';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const invalid = (field: string, message: string) => ({
  error: 'Validation failed',
  details: [{ field, message }],
});
const NOT_FOUND = { error: 'Not found', message: 'Instrument not found' };
const PRICED_AT = eat('2032-06-02T11:00');

describeStores('investment types and instruments (INVESTMENTS_PREVIEW) on %s', (store) => {
  let t: TestApp;
  let partner: Partner;
  const tag = runTag();
  let seeded: Awaited<ReturnType<typeof seedInstruments>>;
  const get = (url: string, p: Partner = partner) => signedInject(t.app, p, { method: 'GET', url });

  beforeAll(async () => {
    t = await buildTestApp(store, INVESTMENTS_ENV);
    partner = await createPartner(t);
    seeded = await seedInstruments(
      t,
      tag,
      [
        { suffix: 'A', name: 'Alpha {tag} Holdings', price: '28.5500', isin: 'KE1000001402' },
        {
          suffix: 'B',
          name: 'Beta {tag} Bank',
          price: '380.0000',
          minOrderAmount: '5000.00',
          fractional: false,
        },
        { suffix: 'C', name: 'Gamma {tag} 100%_Cement', price: '12.0000', isActive: false },
        { suffix: 'D', name: 'Delta {tag} Power', price: '4.2500' },
        // A type the platform does not admit: not in the catalogue (and kept inactive for other suites).
        {
          suffix: 'F',
          name: 'Fund {tag} Money Market',
          price: '1.0000',
          isActive: false,
          investmentType: 'MONEY_MARKET_FUND',
        },
      ],
      PRICED_AT,
    );
  });
  afterAll(() => t?.close());

  const expectedInstrument = (suffix: string, fields: Record<string, unknown>) => ({
    id: seeded[suffix]!.id,
    symbol: seeded[suffix]!.symbol,
    investmentType: 'STOCK',
    isin: null,
    market: 'XNAI',
    currency: 'KES',
    tradingStatus: 'ACTIVE',
    minOrderAmount: '100.00',
    fractional: true,
    createdAt: expect.stringMatching(ISO),
    updatedAt: expect.stringMatching(ISO),
    ...fields,
  });
  const ALPHA = () =>
    expectedInstrument('A', {
      name: `Alpha ${tag} Holdings`,
      isin: 'KE1000001402',
      latestPrice: { value: '28.5500', currency: 'KES', asOf: PRICED_AT.toISOString(), fresh: true },
    });
  const BETA = () =>
    expectedInstrument('B', {
      name: `Beta ${tag} Bank`,
      minOrderAmount: '5000.00',
      fractional: false,
      latestPrice: { value: '380.0000', currency: 'KES', asOf: PRICED_AT.toISOString(), fresh: true },
    });

  describe('GET /v1/investment-types', () => {
    it('lists the admitted types with their active instruments', async () => {
      const count = () =>
        one<{ n: number }>(
          t.ctx.database.db,
          sql`select count(*)::int as n from stocks where is_active and investment_type = 'STOCK'`,
        ).then((r) => r!.n);
      const before = await count();
      const res = await get('/v1/investment-types');
      const after = await count();
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(body).toEqual({
        data: [
          {
            id: 'STOCK',
            name: 'Stocks',
            description: expect.stringContaining('Shares listed on a securities exchange'),
            activeInstruments: expect.any(Number),
          },
        ],
      });
      // Other suites add instruments to the shared database meanwhile: the count lies between two reads.
      expect(body.data[0].activeInstruments).toBeGreaterThanOrEqual(Math.max(before, 3));
      expect(body.data[0].activeInstruments).toBeLessThanOrEqual(after);
    });

    it('takes no parameters', async () => {
      const res = await get('/v1/investment-types?page=1');
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual(invalid('page', 'Unknown field'));
    });
  });

  describe('GET /v1/instruments', () => {
    it('lists the catalogue by symbol with each instrument’s rules and latest price', async () => {
      const res = await get(`/v1/instruments?search=${tag}`);
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(body.pagination).toEqual({ page: 1, limit: 10, total: 4, totalPages: 1 });
      expect(body.data.map((i: { symbol: string }) => i.symbol)).toEqual(
        ['A', 'B', 'C', 'D'].map((s) => seeded[s]!.symbol),
      );
      expect(body.data[0]).toEqual(ALPHA());
      expect(body.data[1]).toEqual(BETA());
      expect(body.data[2]).toMatchObject({ symbol: seeded.C!.symbol, tradingStatus: 'INACTIVE' });
    });

    it('filters by trading status and investment type', async () => {
      const active = (await get(`/v1/instruments?search=${tag}&tradingStatus=ACTIVE`)).json();
      expect(active.data.map((i: { symbol: string }) => i.symbol)).toEqual(
        ['A', 'B', 'D'].map((s) => seeded[s]!.symbol),
      );
      const inactive = (await get(`/v1/instruments?search=${tag}&tradingStatus=INACTIVE`)).json();
      expect(inactive.data.map((i: { id: string }) => i.id)).toEqual([seeded.C!.id]);
      const stocks = (await get(`/v1/instruments?search=${tag}&investmentType=STOCK`)).json();
      expect(stocks.pagination.total).toBe(4);
    });

    it('searches the symbol or the name, case-insensitively, wildcards taken literally', async () => {
      const bySymbol = (await get(`/v1/instruments?search=${seeded.B!.symbol.toLowerCase()}`)).json();
      expect(bySymbol.data).toEqual([BETA()]);
      const byName = (
        await get(`/v1/instruments?search=${encodeURIComponent(`ALPHA ${tag.toLowerCase()}`)}`)
      ).json();
      expect(byName.data).toEqual([ALPHA()]);
      const literal = (await get(`/v1/instruments?search=${encodeURIComponent(`${tag} 100%_c`)}`)).json();
      expect(literal.data.map((i: { id: string }) => i.id)).toEqual([seeded.C!.id]);
      const wildcard = (await get(`/v1/instruments?search=${encodeURIComponent(`${tag}%Bank`)}`)).json();
      expect(wildcard).toEqual({ data: [], pagination: { page: 1, limit: 10, total: 0, totalPages: 0 } });
    });

    it('pages with true totals, past the end too', async () => {
      const second = (await get(`/v1/instruments?search=${tag}&limit=3&page=2`)).json();
      expect(second.data.map((i: { id: string }) => i.id)).toEqual([seeded.D!.id]);
      expect(second.pagination).toEqual({ page: 2, limit: 3, total: 4, totalPages: 2 });
      const past = (await get(`/v1/instruments?search=${tag}&limit=3&page=9`)).json();
      expect(past).toEqual({ data: [], pagination: { page: 9, limit: 3, total: 4, totalPages: 2 } });
    });

    it('leaves out an instrument of a type the platform does not admit', async () => {
      const res = (await get(`/v1/instruments?search=${encodeURIComponent(`Fund ${tag}`)}`)).json();
      expect(res.pagination.total).toBe(0);
      expect((await get(`/v1/instruments/${seeded.F!.id}`)).json()).toEqual(NOT_FOUND);
    });

    it.each([
      ['limit', 'limit=101', invalid('limit', 'limit must be at most 100')],
      ['page', 'page=0', invalid('page', 'page must be at least 1')],
      [
        'tradingStatus',
        'tradingStatus=OPEN',
        invalid('tradingStatus', 'tradingStatus must be one of ACTIVE, INACTIVE'),
      ],
      [
        'investmentType',
        'investmentType=BOND',
        invalid('investmentType', 'investmentType must be one of STOCK'),
      ],
      ['search', `search=${'x'.repeat(101)}`, invalid('search', 'search must be at most 100 characters')],
      ['an unknown parameter', 'status=ACTIVE', invalid('status', 'Unknown field')],
    ])('refuses a bad %s with 400', async (_name, query, body) => {
      const res = await get(`/v1/instruments?${query}`);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual(body);
    });
  });

  describe('GET /v1/instruments/{instrumentId}', () => {
    it('returns the instrument under data', async () => {
      const res = await get(`/v1/instruments/${seeded.A!.id}`);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ data: ALPHA() });
    });

    it('answers 404 Instrument not found for an unknown id', async () => {
      const res = await get(`/v1/instruments/${NONEXISTENT_ID}`);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual(NOT_FOUND);
    });

    it.each([
      ['not a CUID', 'SCOM'],
      ['upper case', 'CABCDEFGHIJKLMNOPQRSTUVWX'],
      ['SQL', "c' or '1'='1"],
    ])('refuses an id that is %s with 400 before any lookup', async (_name, id) => {
      const res = await get(`/v1/instruments/${encodeURIComponent(id)}`);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual(invalid('instrumentId', 'Invalid instrument ID format'));
    });
  });

  it('security: every organization sees the same catalogue, and nothing of an organization in it', async () => {
    const a = await createPartner(t);
    const b = await createPartner(t);
    // Organization A's customer holds Alpha: nothing of it may show in anyone's catalogue.
    const customerId = createId();
    await t.ctx.database.db.insert(customers).values({
      id: customerId,
      organizationId: a.organizationId,
      firstName: 'Holder',
      lastName: 'Of Alpha',
    });
    await t.ctx.database.db.insert(holdings).values({
      organizationId: a.organizationId,
      customerId,
      stockId: seeded.A!.id,
      units: '7.0000',
    });
    for (const url of [
      `/v1/instruments?search=${tag}`,
      `/v1/instruments/${seeded.A!.id}`,
      `/v1/instruments/${seeded.A!.id}/prices?from=2032-06-01&to=2032-06-02`,
    ]) {
      const seenByA = await get(url, a);
      const seenByB = await get(url, b);
      expect(seenByA.statusCode).toBe(200);
      expect(seenByB.body).toBe(seenByA.body);
      for (const leak of [a.organizationId, b.organizationId, customerId, '7.0000'])
        expect(seenByA.body).not.toContain(leak);
    }
    const unknownA = await get(`/v1/instruments/${NONEXISTENT_ID}`, a);
    const unknownB = await get(`/v1/instruments/${NONEXISTENT_ID}`, b);
    expect(unknownB.body).toBe(unknownA.body);
  });
});

describeStores('the market paths with INVESTMENTS_PREVIEW off on %s', (store) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp(store);
  });
  afterAll(() => t?.close());

  it.each([
    '/v1/investment-types',
    '/v1/instruments',
    `/v1/instruments/${NONEXISTENT_ID}`,
    `/v1/instruments/${NONEXISTENT_ID}/prices`,
  ])('GET %s answers as an unknown route', async (url) => {
    const partner = await createPartner(t);
    const res = await signedInject(t.app, partner, { method: 'GET', url });
    expect(res.statusCode).toBe(404);
    expect(res.body).toBe(NOT_FOUND_BODY);
  });
});
