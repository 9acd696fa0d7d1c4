import { type FakePrices, startFakePrices } from '@partner-api/fakes';
import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { adminInject } from '@partner-api/testkit/helpers.ts';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { one } from '../../src/db/query.ts';
import { parseFeed } from '../../src/services/market/feed/client.ts';
import { priceFeedProvider } from '../../src/services/market/feed/index.ts';
import { type FeedWorker, startFeedWorker } from '../../src/services/market/feed-worker.ts';
import { upsertStocks } from '../../src/services/stocks/upsert.ts';

const silent = { info() {}, warn() {}, error() {} };
const eat = (local: string) => new Date(`${local}+03:00`);

describe('the price feed format (docs/market.md)', () => {
  it('reads JSON prices and rejects each row that is not one', () => {
    const pull = parseFeed(
      'json',
      JSON.stringify({
        prices: [
          { symbol: 'scom', price: '28.55', asOf: '2026-12-01T07:00:00Z' },
          { symbol: 'EQTY', price: 46.2, asOf: '2026-12-01T10:00:00+03:00' },
          { symbol: 'BAD', price: 'abc', asOf: '2026-12-01T07:00:00Z' },
          { symbol: 'ZERO', price: '0', asOf: '2026-12-01T07:00:00Z' },
          { symbol: 'NOTZ', price: '1', asOf: '2026-12-01T07:00:00' },
          null,
        ],
      }),
    );
    expect(pull).toEqual({
      ok: true,
      prices: [
        { symbol: 'SCOM', price: '28.55', asOf: new Date('2026-12-01T07:00:00Z') },
        { symbol: 'EQTY', price: '46.2', asOf: new Date('2026-12-01T07:00:00Z') },
      ],
      rejected: [
        { row: 3, reason: 'price must be a positive decimal with up to 4 decimals' },
        { row: 4, reason: 'price must be a positive decimal with up to 4 decimals' },
        { row: 5, reason: 'asOf must be an ISO 8601 time with its offset' },
        { row: 6, reason: 'symbol must be 1 to 12 letters, digits or dots' },
      ],
    });
    expect(parseFeed('json', '<html>')).toEqual({ ok: false, reason: 'the body is not JSON' });
    expect(parseFeed('json', '{"data":[]}')).toEqual({ ok: false, reason: 'the body has no prices array' });
  });

  it('reads CSV with its header, and refuses another header', () => {
    const pull = parseFeed('csv', 'symbol,price,as_of\r\nSCOM,28.55,2026-12-01T07:00:00Z\nKCB,1\n');
    expect(pull).toEqual({
      ok: true,
      prices: [{ symbol: 'SCOM', price: '28.55', asOf: new Date('2026-12-01T07:00:00Z') }],
      rejected: [{ row: 2, reason: 'a row must have 3 cells' }],
    });
    expect(parseFeed('csv', 'ticker,last\nSCOM,1\n')).toEqual({
      ok: false,
      reason: 'the CSV header must be symbol,price,as_of',
    });
  });
});

describeStores('the price feed pulled from its fake on %s', (store) => {
  let t: TestApp;
  let fake: FakePrices;
  let worker: FeedWorker;
  // Symbols of this run alone: the PostgreSQL test database keeps earlier runs' prices at the same times.
  const run = Math.random().toString(36).slice(2, 6).toUpperCase();
  const symbols = [`ZZF1${run}`, `ZZF2${run}`, `ZZF3${run}`] as const;
  let fakeNow = eat('2026-12-01T10:00');
  const priceOf = async (symbol: string) =>
    (
      await one<{ price: string }>(
        t.ctx.database.db,
        sql`select price::text as price from stocks where symbol = ${symbol}`,
      )
    )?.price;

  beforeAll(async () => {
    fake = await startFakePrices({
      // The third symbol is one we do not list.
      instruments: [
        { symbol: symbols[0], price: '100.0000' },
        { symbol: symbols[1], price: '50.0000' },
        { symbol: `${symbols[2]}X`, price: '10.0000' },
      ],
      now: () => fakeNow,
    });
    t = await buildTestApp(store, { PRICE_FEED_URL: fake.jsonUrl, PRICE_MAX_AGE_SECONDS: '900' });
    t.ctx.clock = () => eat('2026-12-01T10:01');
    await upsertStocks(t.ctx.database.db, [
      { symbol: symbols[0], name: 'Feed One', price: '100.0000', currency: 'KES' },
      { symbol: symbols[1], name: 'Feed Two', price: '50.0000', currency: 'KES' },
    ]);
    // Yesterday's close, the band's reference.
    await adminInject(t, 'POST', '/admin/prices', {
      symbol: symbols[0],
      price: '100',
      asOf: '2026-11-30T11:59:00Z',
    });
    await adminInject(t, 'POST', '/admin/prices', {
      symbol: symbols[1],
      price: '50',
      asOf: '2026-11-30T11:59:00Z',
    });
    worker = startFeedWorker(t.ctx, priceFeedProvider.createFeed(t.ctx.config.priceFeed!), 3_600_000, silent);
    t.ctx.feedWorker = worker;
  });
  afterAll(async () => {
    await worker?.stop();
    await t?.close();
    await fake?.close();
  });

  it('records each price, skips a symbol we do not list, and says ok in /healthz', async () => {
    const report = await worker.pullNow();
    expect(report).toMatchObject({ ok: true, unknown: 1, held: 0, rejected: 0 });
    expect(report.applied + report.repeated).toBe(2);
    expect(await priceOf(symbols[0])).toBe(fake.prices()[symbols[0]]);
    const health = (await t.app.inject({ method: 'GET', url: '/healthz' })).json();
    expect(health.prices.feed).toMatchObject({
      state: 'ok',
      lastError: null,
      newestAsOf: fakeNow.toISOString(),
    });
  });

  it('stale: a feed whose as-of time stops moving is recorded once and reported stale in a session', async () => {
    fake.setScenario('stale');
    await worker.pullNow();
    t.ctx.clock = () => eat('2026-12-01T10:30');
    const report = await worker.pullNow();
    expect(report).toMatchObject({ ok: true, applied: 0, repeated: 2 });
    expect(worker.health().state).toBe('stale');
    fake.setScenario('normal');
    fakeNow = eat('2026-12-01T10:29');
    await worker.pullNow();
    expect(worker.health().state).toBe('ok');
  });

  it('a jump beyond the band is held for the operator and the price stays; confirming applies it', async () => {
    const before = await priceOf(symbols[0]);
    fakeNow = eat('2026-12-01T10:40');
    fake.queue('jump');
    const report = await worker.pullNow();
    expect(report.held).toBe(1);
    expect(await priceOf(symbols[0])).toBe(before);
    const held = (await adminInject(t, 'GET', '/admin/prices/held')).json().data as {
      id: string;
      symbol: string;
    }[];
    const mine = held.find((p) => p.symbol === symbols[0]);
    expect(mine).toBeDefined();
    await adminInject(t, 'POST', `/admin/prices/${mine!.id}/confirm`);
    expect(await priceOf(symbols[0])).toBe(fake.prices()[symbols[0]]);
  });

  it('an outage records nothing and says failing; malformed rows are rejected beside the good ones', async () => {
    const before = await priceOf(symbols[1]);
    fake.queue('outage');
    fakeNow = eat('2026-12-01T10:45');
    expect(await worker.pullNow()).toMatchObject({ ok: false, applied: 0 });
    expect(worker.health()).toMatchObject({ state: 'failing', lastError: 'the feed answered 503' });
    expect(await priceOf(symbols[1])).toBe(before);

    fake.queue('malformed');
    fakeNow = eat('2026-12-01T10:50');
    const report = await worker.pullNow();
    expect(report).toMatchObject({ ok: true, rejected: 2 });
    expect(worker.health().state).toBe('ok');
  });

  it('an instrument missing from a pull keeps its price', async () => {
    const first = await priceOf(symbols[0]);
    fake.queue('missing');
    fakeNow = eat('2026-12-01T10:55');
    await worker.pullNow();
    expect(await priceOf(symbols[0])).toBe(first);
    expect(await priceOf(symbols[1])).toBe(fake.prices()[symbols[1]]);
  });
});
