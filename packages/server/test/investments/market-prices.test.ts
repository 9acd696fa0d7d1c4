import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { createPartner, type Partner, signedInject } from '@partner-api/testkit/partner.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordPrice } from '../../src/services/market/prices.ts';
import { eat, INVESTMENTS_ENV, NONEXISTENT_ID, runTag, seedInstruments } from './market-support.ts';

const invalid = (field: string, message: string) => ({
  error: 'Validation failed',
  details: [{ field, message }],
});

describeStores('GET /v1/instruments/{instrumentId}/prices on %s', (store) => {
  let t: TestApp;
  let partner: Partner;
  let id: string;
  let symbol: string;
  const get = (url: string) => signedInject(t.app, partner, { method: 'GET', url });
  const price = (value: string, asOf: Date, source: 'FEED' | 'EDIT' = 'FEED') =>
    t.ctx.database.db.transaction((tx) => recordPrice(tx, { symbol, price: value, asOf, source }));

  beforeAll(async () => {
    t = await buildTestApp(store, INVESTMENTS_ENV);
    partner = await createPartner(t);
    const tag = runTag();
    ({ id, symbol } = (
      await seedInstruments(
        t,
        tag,
        [{ suffix: 'P', name: 'Prices {tag} Ltd', price: '100.0000' }],
        eat('2032-11-29T14:59'),
      )
    ).P!);
    // Tuesday: 104 opens, 109 high, 95 low, 101.5 closes; a held price (beyond the band) is no price.
    await price('104.0000', eat('2032-11-30T09:45'));
    await price('109.0000', eat('2032-11-30T11:00'));
    await price('130.0000', eat('2032-11-30T10:00'));
    await price('95.0000', eat('2032-11-30T12:00'));
    await price('101.5000', eat('2032-11-30T23:59'), 'EDIT');
    // 23:30 UTC is 02:30 EAT on Wednesday 1 December.
    await price('102.0000', new Date('2032-11-30T23:30:00Z'));
  });
  afterAll(() => t?.close());

  it('answers the latest price and the daily bars of the range, in the market’s time zone', async () => {
    const res = await get(`/v1/instruments/${id}/prices?from=2032-11-29&to=2032-12-02`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      data: {
        instrumentId: id,
        symbol,
        market: 'XNAI',
        timeZone: 'Africa/Nairobi',
        currency: 'KES',
        latest: { value: '102.0000', currency: 'KES', asOf: '2032-11-30T23:30:00.000Z', fresh: true },
        from: '2032-11-29',
        to: '2032-12-02',
        daily: [
          {
            date: '2032-11-29',
            open: '100.0000',
            high: '100.0000',
            low: '100.0000',
            close: '100.0000',
            count: 1,
          },
          {
            date: '2032-11-30',
            open: '104.0000',
            high: '109.0000',
            low: '95.0000',
            close: '101.5000',
            count: 4,
          },
          {
            date: '2032-12-01',
            open: '102.0000',
            high: '102.0000',
            low: '102.0000',
            close: '102.0000',
            count: 1,
          },
        ],
      },
    });
  });

  it('defaults to the 30 days that end today in the market’s time zone', async () => {
    t.ctx.clock = () => new Date('2032-12-20T22:00:00Z'); // 01:00 EAT on the 21st
    try {
      const body = (await get(`/v1/instruments/${id}/prices`)).json();
      expect([body.data.from, body.data.to]).toEqual(['2032-11-22', '2032-12-21']);
      expect(body.data.daily).toHaveLength(3);
      const fromOnly = (await get(`/v1/instruments/${id}/prices?to=2032-11-30`)).json();
      expect(fromOnly.data.from).toBe('2032-11-01');
      expect(fromOnly.data.daily.map((b: { date: string }) => b.date)).toEqual(['2032-11-29', '2032-11-30']);
    } finally {
      t.ctx.clock = () => new Date();
    }
  });

  it('a range without prices has no bars', async () => {
    const body = (await get(`/v1/instruments/${id}/prices?from=2032-12-04&to=2032-12-05`)).json();
    expect(body.data.daily).toEqual([]);
  });

  it.each([
    ['a malformed date', 'from=2032-1-01', invalid('from', 'date must be YYYY-MM-DD')],
    ['an impossible date', 'to=2032-02-30', invalid('to', 'date must be a real date')],
    ['a year past 9998', 'to=9999-01-01', invalid('to', 'must be a date between 1970 and 9999')],
    ['from after to', 'from=2032-12-02&to=2032-12-01', invalid('from', 'must not be after to')],
    [
      'a range over 366 days',
      'from=2031-01-01&to=2032-01-02',
      invalid('to', 'must be at most 366 days from from'),
    ],
    ['an unknown parameter', 'since=2032-12-01', invalid('since', 'Unknown field')],
  ])('refuses %s with 400', async (_name, query, body) => {
    const res = await get(`/v1/instruments/${id}/prices?${query}`);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual(body);
  });

  it('answers 404 for an unknown instrument (before its dates), 400 for a malformed id', async () => {
    const unknown = await get(`/v1/instruments/${NONEXISTENT_ID}/prices?from=2032-12-02&to=2032-12-01`);
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ error: 'Not found', message: 'Instrument not found' });
    const malformed = await get('/v1/instruments/SCOM/prices');
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json()).toEqual(invalid('instrumentId', 'Invalid instrument ID format'));
  });
});

describeStores('an instrument’s price freshness with market hours enforced on %s', (store) => {
  let t: TestApp;
  let partner: Partner;
  let id: string;
  let symbol: string;
  const latest = async () => {
    const one = (await signedInject(t.app, partner, { method: 'GET', url: `/v1/instruments/${id}` })).json();
    const prices = (
      await signedInject(t.app, partner, { method: 'GET', url: `/v1/instruments/${id}/prices` })
    ).json();
    const listed = (
      await signedInject(t.app, partner, { method: 'GET', url: `/v1/instruments?search=${symbol}` })
    ).json();
    expect(prices.data.latest).toEqual(one.data.latestPrice);
    expect(listed.data).toEqual([one.data]);
    return one.data.latestPrice;
  };

  beforeAll(async () => {
    t = await buildTestApp(store, {
      ...INVESTMENTS_ENV,
      MARKET_HOURS: 'enforced',
      PRICE_MAX_AGE_SECONDS: '900',
    });
    partner = await createPartner(t);
    const tag = runTag();
    ({ id, symbol } = (
      await seedInstruments(
        t,
        tag,
        [{ suffix: 'H', name: 'Hours {tag} Ltd', price: '25.0000' }],
        eat('2033-03-09T09:55'),
      )
    ).H!);
  });
  afterAll(() => t?.close());

  describe('fresh: an order placed now executes at the price', () => {
    it('in the session, at most PRICE_MAX_AGE_SECONDS old', async () => {
      t.ctx.clock = () => eat('2033-03-09T10:00'); // Wednesday, five minutes after the price
      expect(await latest()).toEqual({
        value: '25.0000',
        currency: 'KES',
        asOf: eat('2033-03-09T09:55').toISOString(),
        fresh: true,
      });
    });

    it('not in the session once it is older', async () => {
      t.ctx.clock = () => eat('2033-03-09T10:11');
      expect((await latest()).fresh).toBe(false);
    });

    it('not outside the session, however recent', async () => {
      t.ctx.clock = () => eat('2033-03-09T15:01');
      await t.ctx.database.db.transaction((tx) =>
        recordPrice(tx, { symbol, price: '25.5000', asOf: eat('2033-03-09T15:00'), source: 'EDIT' }),
      );
      expect(await latest()).toMatchObject({ value: '25.5000', fresh: false });
      t.ctx.clock = () => eat('2033-03-12T10:00'); // a Saturday
      expect((await latest()).fresh).toBe(false);
    });
  });
});
