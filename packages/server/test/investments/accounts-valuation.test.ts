/**
 * An account's assets and portfolio (docs/investments.md, Accounts): positions split available,
 * locked and pending; average cost from the buys' executions; value at the latest price; and the
 * valuation at the end of a past day from the units ledger and the prices then. The rows are
 * written directly (orders/life.ts is tested elsewhere), so every figure is known.
 */
import { randomUUID } from 'node:crypto';
import { createId } from '@partner-api/contract';
import {
  buildTestApp,
  describeStores,
  POSTGRES_SKIP_REASON,
  REDIS_SKIP_REASON,
  type TestApp,
} from '@partner-api/testkit/app.ts';
import { type Relay, startRelay, targetOf } from '@partner-api/testkit/faults.ts';
import { createPartner, type Partner, signedInject } from '@partner-api/testkit/partner.ts';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { one, run } from '../../src/db/query.ts';
import { insertCustomer } from '../ussd/support.ts';
import { ownInstrument } from './accounts-support.ts';

const ACCOUNT_NOT_FOUND = { error: 'Not found', message: 'Account not found' };

/** A customer's account, buys and sells with their executions and ledger entries, and prices. */
async function scenario(t: TestApp, partner: Partner) {
  const db = t.ctx.database.db;
  const customerId = await insertCustomer(t, partner);
  const accountId = createId();
  const org = partner.organizationId;
  await run(
    db,
    sql`insert into accounts (id, organization_id, customer_id) values (${accountId}, ${org}, ${customerId})`,
  );
  const a = await ownInstrument(t, '30.0000');
  const b = await ownInstrument(t, '12.5000');
  await run(db, sql`update stocks set investment_type = 'MONEY_MARKET_FUND' where id = ${b.id}`);
  /** An executed order with its execution and ledger entry, at a given time. */
  const trade = async (stockId: string, side: 'BUY' | 'SELL', units: string, price: string, at: string) => {
    const orderId = createId();
    await run(
      db,
      sql`insert into orders (id, organization_id, customer_id, stock_id, side, status, amount, quantity, price, created_at, updated_at)
      values (${orderId}, ${org}, ${customerId}, ${stockId}, ${side}, 'EXECUTED', ${units}::numeric * ${price}::numeric,
        ${units}::numeric, ${price}::numeric, ${at}::timestamptz, ${at}::timestamptz)`,
    );
    await run(
      db,
      sql`insert into executions (id, organization_id, order_id, stock_id, side, units, price, executed_at, settlement_date, status)
      values (${createId()}, ${org}, ${orderId}, ${stockId}, ${side}, ${units}::numeric, ${price}::numeric,
        ${at}::timestamptz, '2026-01-01', 'FILLED')`,
    );
    await run(
      db,
      sql`insert into ledger_entries (id, organization_id, customer_id, stock_id, order_id, kind, units, created_at)
      values (${createId()}, ${org}, ${customerId}, ${stockId}, ${orderId}, ${side},
        ${side === 'BUY' ? units : `-${units}`}::numeric, ${at}::timestamptz)`,
    );
  };
  const price = (stockId: string, value: string, at: string, status = 'APPLIED') =>
    run(
      db,
      sql`insert into prices (id, stock_id, price, as_of, source, status)
      values (${createId()}, ${stockId}, ${value}::numeric, ${at}::timestamptz, 'EDIT', ${status})`,
    );
  // A: 10 @ 20 on 3 June, 5 @ 26 on 5 June, 4 sold on 6 June: average (200 + 130) / 15 = 22.0000.
  await trade(a.id, 'BUY', '10', '20.0000', '2025-06-03T07:00:00Z');
  await price(a.id, '20.0000', '2025-06-03T06:55:00Z');
  // 23:30 EAT on 4 June: still 4 June in Nairobi (20:30 UTC).
  await price(a.id, '24.0000', '2025-06-04T20:30:00Z');
  // 00:30 EAT on 5 June (21:30 UTC on 4 June): not part of 4 June.
  await price(a.id, '25.0000', '2025-06-04T21:30:00Z');
  await price(a.id, '99.0000', '2025-06-04T20:40:00Z', 'HELD');
  await trade(a.id, 'BUY', '5', '26.0000', '2025-06-05T07:00:00Z');
  await trade(a.id, 'SELL', '4', '27.0000', '2025-06-06T07:00:00Z');
  // B: 3 @ 12.3333 on 5 June, 1 unit of which is still pending settlement.
  await trade(b.id, 'BUY', '3', '12.3333', '2025-06-05T08:00:00Z');
  await price(b.id, '12.3333', '2025-06-05T07:59:00Z');
  await run(
    db,
    sql`insert into holdings (organization_id, customer_id, stock_id, units, pending_units) values
    (${org}, ${customerId}, ${a.id}, 11, 0), (${org}, ${customerId}, ${b.id}, 3, 1)`,
  );
  return { customerId, accountId, a, b };
}

describeStores('an account’s assets and portfolio on %s', (store) => {
  let t: TestApp;
  let partner: Partner;
  let s: Awaited<ReturnType<typeof scenario>>;
  beforeAll(async () => {
    t = await buildTestApp(store, { INVESTMENTS_PREVIEW: 'true' });
    partner = await createPartner(t);
    s = await scenario(t, partner);
  });
  afterAll(() => t.close());

  const get = (url: string, as: Partner = partner) => signedInject(t.app, as, { method: 'GET', url });

  it('assets: per instrument, units split available / locked / pending, average cost, value at the latest price', async () => {
    const res = await get(`/v1/accounts/${s.accountId}/assets`);
    expect(res.statusCode, res.body).toBe(200);
    const stock = await one<{ asOf: string | null }>(
      t.ctx.database.db,
      sql`select price_as_of::text as "asOf" from stocks where id = ${s.a.id}`,
    );
    const asOfA = stock?.asOf ?? null;
    const bySymbol = [s.a, s.b].sort((x, y) => x.symbol.localeCompare(y.symbol));
    const expected: Record<string, object> = {
      [s.a.id]: {
        instrumentId: s.a.id,
        symbol: s.a.symbol,
        name: `Accounts ${s.a.symbol}`,
        investmentType: 'STOCK',
        currency: 'KES',
        units: '11.0000',
        available: '11.0000',
        locked: '0.0000',
        pendingSettlement: '0.0000',
        averageCost: '22.0000',
        cost: '242.00',
        price: '30.0000',
        priceAsOf: asOfA === null ? null : new Date(asOfA).toISOString(),
        value: '330.00',
        unrealisedGain: '88.00',
      },
      [s.b.id]: expect.objectContaining({
        investmentType: 'MONEY_MARKET_FUND',
        units: '3.0000',
        available: '2.0000',
        pendingSettlement: '1.0000',
        averageCost: '12.3333',
        // 3 × 12.3333 = 36.9999 → 37.00; 3 × 12.5 = 37.50.
        cost: '37.00',
        value: '37.50',
        unrealisedGain: '0.50',
      }),
    };
    expect(res.json()).toEqual({ data: bySymbol.map((x) => expected[x.id]) });
  });

  it('portfolio now: totals, by investment type and per position', async () => {
    const res = await get(`/v1/accounts/${s.accountId}/portfolio`);
    expect(res.statusCode, res.body).toBe(200);
    const data = res.json().data;
    expect(data).toMatchObject({
      accountId: s.accountId,
      customerId: s.customerId,
      currency: 'KES',
      date: null,
      value: '367.50',
      cost: '279.00',
      unrealisedGain: '88.50',
      byInvestmentType: [
        { investmentType: 'MONEY_MARKET_FUND', value: '37.50', cost: '37.00', unrealisedGain: '0.50' },
        { investmentType: 'STOCK', value: '330.00', cost: '242.00', unrealisedGain: '88.00' },
      ],
    });
    expect(data.positions).toHaveLength(2);
  });

  it('portfolio as of a past day: the ledger up to its end in Nairobi, the last applied price before then', async () => {
    // 4 June: 10 A at 24.0000 (the 23:30 EAT price; the next one is 5 June in Nairobi, the HELD one ignored); no B yet.
    const june4 = (await get(`/v1/accounts/${s.accountId}/portfolio?asOf=2025-06-04`)).json().data;
    expect(june4).toMatchObject({
      date: '2025-06-04',
      valuedAt: '2025-06-04T20:59:59.999Z',
      value: '240.00',
      cost: '200.00',
      unrealisedGain: '40.00',
      byInvestmentType: [
        { investmentType: 'STOCK', value: '240.00', cost: '200.00', unrealisedGain: '40.00' },
      ],
      positions: [
        {
          instrumentId: s.a.id,
          symbol: s.a.symbol,
          investmentType: 'STOCK',
          units: '10.0000',
          price: '24.0000',
          priceAsOf: '2025-06-04T20:30:00.000Z',
          value: '240.00',
          cost: '200.00',
        },
      ],
    });
    // 5 June: 15 A at 25.0000 (average 22), 3 B at 12.3333.
    const june5 = (await get(`/v1/accounts/${s.accountId}/portfolio?asOf=2025-06-05`)).json().data;
    expect(june5).toMatchObject({ value: '412.00', cost: '367.00', unrealisedGain: '45.00' });
    // Before the first trade: nothing.
    const before = (await get(`/v1/accounts/${s.accountId}/portfolio?asOf=2025-06-01`)).json().data;
    expect(before).toMatchObject({ value: '0.00', cost: '0.00', byInvestmentType: [], positions: [] });
  });

  it('errors: an unknown and another organization’s account, a malformed id, a bad or future asOf', async () => {
    const other = await createPartner(t);
    for (const path of ['', '/assets', '/portfolio']) {
      const foreign = await get(`/v1/accounts/${s.accountId}${path}`, other);
      const unknown = await get(`/v1/accounts/${createId()}${path}`);
      expect([foreign.statusCode, foreign.json()]).toEqual([404, ACCOUNT_NOT_FOUND]);
      expect(unknown.body).toBe(foreign.body);
      const bad = await get(`/v1/accounts/nope${path}`);
      expect(bad.json()).toEqual({
        error: 'Validation failed',
        details: [{ field: 'accountId', message: 'Invalid account ID format' }],
      });
    }
    for (const asOf of ['2025-02-30', '4 June', '2025-6-4']) {
      const res = await get(`/v1/accounts/${s.accountId}/portfolio?asOf=${encodeURIComponent(asOf)}`);
      expect([res.statusCode, res.json().details]).toEqual([
        400,
        [{ field: 'asOf', message: 'asOf must be a date (YYYY-MM-DD)' }],
      ]);
    }
    const future = await get(`/v1/accounts/${s.accountId}/portfolio?asOf=2999-01-01`);
    expect([future.statusCode, future.json().details]).toEqual([
      400,
      [{ field: 'asOf', message: 'asOf must not be after today' }],
    ]);
  });

  it('an account with nothing held: empty assets and a zero portfolio', async () => {
    const customerId = await insertCustomer(t, partner);
    const opened = await signedInject(t.app, partner, {
      method: 'POST',
      url: '/v1/accounts',
      body: { customerId },
      idempotencyKey: randomUUID(),
    });
    const id = opened.json().data.id;
    expect((await get(`/v1/accounts/${id}/assets`)).json()).toEqual({ data: [] });
    expect((await get(`/v1/accounts/${id}/portfolio`)).json().data).toMatchObject({
      value: '0.00',
      cost: '0.00',
      unrealisedGain: '0.00',
      positions: [],
    });
  });
});

/**
 * Round trips counted on the wire as test/scale/round-trips.test.ts does: a relay in front of
 * PostgreSQL counts its Sync/Query messages. The rate limiter runs on Redis (without it, its
 * budget would be one more database round trip).
 */
const { DATABASE_URL, REDIS_URL } = process.env;
const skipReason = !DATABASE_URL ? POSTGRES_SKIP_REASON : !REDIS_URL ? REDIS_SKIP_REASON : undefined;
if (skipReason) describe('an account’s reads, round trips', () => it.skip(skipReason, () => {}));
describe.skipIf(skipReason !== undefined)('an account’s reads, round trips counted on the wire', () => {
  let postgres: Relay;
  let t: TestApp;
  let partner: Partner;
  let s: Awaited<ReturnType<typeof scenario>>;
  beforeAll(async () => {
    postgres = await startRelay(targetOf(DATABASE_URL!, 5432), { protocol: 'postgres' });
    t = await buildTestApp(
      'postgres',
      { INVESTMENTS_PREVIEW: 'true', DATABASE_URL: postgres.urlFor(DATABASE_URL!) },
      { withRedis: true },
    );
    partner = await createPartner(t);
    s = await scenario(t, partner);
    // The first request of a token loads its caller; every later one is served from memory.
    await signedInject(t.app, partner, { method: 'GET', url: '/v1/oauth/me' });
  });
  afterAll(async () => {
    await t?.close();
    await postgres?.close();
  });

  it('a portfolio read, now and as of a past day, and an assets read: one database round trip each', async () => {
    const counts: number[] = [];
    for (const url of [
      `/v1/accounts/${s.accountId}/portfolio`,
      `/v1/accounts/${s.accountId}/portfolio?asOf=2025-06-05`,
      `/v1/accounts/${s.accountId}/assets`,
    ]) {
      const before = postgres.exchanges;
      const res = await signedInject(t.app, partner, { method: 'GET', url });
      expect(res.statusCode, res.body).toBe(200);
      counts.push(postgres.exchanges - before);
    }
    expect(counts).toEqual([1, 1, 1]);
  });
});
