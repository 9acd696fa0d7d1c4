import { createId, monthlyStatementDataSchema, type Report } from '@partner-api/contract';
import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { ownDatabase } from '@partner-api/testkit/database.ts';
import { adminInject } from '@partner-api/testkit/helpers.ts';
import { createPartner, type Partner } from '@partner-api/testkit/partner.ts';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rows, run } from '../../src/db/query.ts';
import { settleDueExecutions } from '../../src/services/orders/life.ts';
import { startPayments } from '../../src/services/payments/pipeline/start.ts';
import type { PaymentWorker } from '../../src/services/payments/pipeline/worker.ts';
import {
  dueMonth,
  generateMonthlyStatements,
  monthlyStatementsTask,
} from '../../src/services/reports/statement.ts';
import { ownInstruments, requestsClient } from '../investments/requests-support.ts';
import { insertCustomer, waitFor } from '../ussd/support.ts';
import { dataOf } from '../webhooks/api-support.ts';
import { missingFrom, PLATFORM_ENV, pdfText, reportsClient } from './support.ts';

const eat = (local: string) => new Date(`${local}+03:00`);

describe('dueMonth: the month before, from 01:00 EAT on the 1st', () => {
  it('names the month whose statements are due', () => {
    expect(dueMonth(eat('2026-11-01T00:59'))).toBe('2026-09');
    expect(dueMonth(eat('2026-11-01T01:00'))).toBe('2026-10');
    expect(dueMonth(eat('2026-11-30T23:59'))).toBe('2026-10');
    expect(dueMonth(eat('2027-01-01T02:00'))).toBe('2026-12');
  });
});

describeStores('monthly statements from a month of activity on %s', (store) => {
  let t: TestApp;
  let database: Awaited<ReturnType<typeof ownDatabase>>;
  let simulator: PaymentWorker;
  let ids: Awaited<ReturnType<typeof ownInstruments>>;
  beforeAll(async () => {
    // A database of its own: statements are written for every account of the store.
    database = await ownDatabase(store, 'statements');
    t = await buildTestApp(store, {
      ...database.env,
      INVESTMENTS_PREVIEW: 'true',
      WEBHOOKS_PREVIEW: 'true',
      SANDBOX_SETTLE_MS: '50',
      ...PLATFORM_ENV,
    });
    ids = await ownInstruments(t, 'STM');
    simulator = startPayments(t.ctx, t.app.log);
  });
  afterAll(async () => {
    await simulator.stop();
    await t.close();
    await database.drop();
  });

  /** An executed request whose ledger entries are moved to `day` (EAT noon): activity across days. */
  async function trade(partner: Partner, customerId: string, body: Record<string, string>, day: string) {
    const api = requestsClient(t, partner);
    const res = await api.create({ customerId, ...body });
    expect(res.statusCode, res.body).toBe(201);
    const id = res.json().data.id as string;
    // Executed, and every payment of it (collection, refund, payout) settled into the money ledger.
    await waitFor(async () => {
      const request = (await api.get(id)).json().data;
      const settled = request.transactions.every((p: { status: string }) => p.status === 'SUCCESS');
      return request.status === 'EXECUTED' && settled ? true : undefined;
    });
    const at = eat(`${day}T12:00`).toISOString();
    const db = t.ctx.database.db;
    await run(db, sql`update money_entries set created_at = ${at}::timestamptz where order_id = ${id}`);
    await run(db, sql`update ledger_entries set created_at = ${at}::timestamptz where order_id = ${id}`);
    return id;
  }

  const price = (stockId: string, value: string, asOf: string) =>
    run(
      t.ctx.database.db,
      sql`insert into prices (id, stock_id, price, as_of, source, status)
    values (${createId()}, ${stockId}, ${value}::numeric, ${eat(asOf).toISOString()}::timestamptz, 'EDIT', 'APPLIED')`,
    );

  it('one statement per account with a position or activity, its totals the ledgers’ sums', async () => {
    const db = t.ctx.database.db;
    const partner = await createPartner(t);
    const [a, b, c, d, idle] = [
      await insertCustomer(t, partner),
      await insertCustomer(t, partner),
      await insertCustomer(t, partner),
      await insertCustomer(t, partner),
      await insertCustomer(t, partner),
    ];
    const { fractional, whole } = ids;
    // a: a position from September; in October a buy, a whole-units buy with its change refunded, a sell.
    await trade(partner, a, { instrumentId: fractional.id, side: 'BUY', amount: '100' }, '2026-09-20');
    await trade(partner, a, { instrumentId: fractional.id, side: 'BUY', amount: '100' }, '2026-10-03');
    await trade(partner, a, { instrumentId: whole.id, side: 'BUY', amount: '600' }, '2026-10-10');
    await settleDueExecutions(db, new Date(Date.now() + 8 * 86_400_000));
    await trade(partner, a, { instrumentId: whole.id, side: 'SELL', units: '1' }, '2026-10-20');
    // b: October activity only; c: a position, no activity; d: November activity only; idle: nothing.
    await trade(partner, b, { instrumentId: fractional.id, side: 'BUY', amount: '200' }, '2026-10-31');
    await trade(partner, c, { instrumentId: fractional.id, side: 'BUY', amount: '100' }, '2026-09-02');
    await trade(partner, d, { instrumentId: fractional.id, side: 'BUY', amount: '100' }, '2026-11-01');
    await price(fractional.id, '20.0000', '2026-09-30T15:00');
    await price(fractional.id, '30.0000', '2026-10-31T15:00');
    await price(fractional.id, '99.0000', '2026-11-01T10:00');
    await price(whole.id, '250.0000', '2026-10-15T10:00');

    t.ctx.clock = () => eat('2026-11-01T01:05');
    const [first, second] = await Promise.all([
      generateMonthlyStatements(db, t.ctx, '2026-10'),
      generateMonthlyStatements(db, t.ctx, '2026-10'),
    ]);
    // Two instances at once: each statement written by one of them.
    const written = [...first!, ...second!];
    expect(written.map((r) => r.customerId).sort()).toEqual([a, b, c].sort());
    expect(await generateMonthlyStatements(db, t.ctx, '2026-10')).toEqual([]);
    const again = await adminInject(t, 'POST', '/admin/reports/statements', { month: '2026-10' });
    expect([again.statusCode, again.json()]).toEqual([200, { month: '2026-10', written: 0, reportIds: [] }]);
    const current = await adminInject(t, 'POST', '/admin/reports/statements', { month: '2026-11' });
    expect([current.statusCode, current.json()]).toEqual([
      400,
      {
        error: 'Validation failed',
        details: [{ field: 'month', message: 'must be a month that has ended' }],
      },
    ]);
    const stored = await rows<{ customerId: string; n: number }>(
      db,
      sql`select customer_id as "customerId", count(*)::int as n from reports
    where type = 'MONTHLY_STATEMENT' and customer_id in (${a}, ${b}, ${c}, ${d}, ${idle}) group by customer_id`,
    );
    expect(stored.sort((x, y) => x.customerId.localeCompare(y.customerId))).toEqual(
      [a, b, c].sort().map((customerId) => ({ customerId, n: 1 })),
    );

    const [from, before] = [eat('2026-10-01T00:00').toISOString(), eat('2026-11-01T00:00').toISOString()];
    for (const report of written) {
      const data = monthlyStatementDataSchema.parse(report.data);
      expect(data.period).toEqual({
        month: '2026-10',
        from: '2026-10-01',
        to: '2026-10-31',
        timeZone: 'Africa/Nairobi',
      });
      expect(data.platform).toEqual({
        name: PLATFORM_ENV.PLATFORM_NAME,
        licence: PLATFORM_ENV.PLATFORM_LICENCE,
      });
      const money = await rows<{
        currency: string;
        collected: string;
        paidOut: string;
        refunded: string;
        net: string;
      }>(
        db,
        sql`select currency,
      coalesce(sum(amount) filter (where kind = 'COLLECTION'), 0)::numeric(18,2)::text as collected,
      coalesce(sum(amount) filter (where kind = 'PAYOUT'), 0)::numeric(18,2)::text as "paidOut",
      coalesce(sum(amount) filter (where kind = 'REFUND'), 0)::numeric(18,2)::text as refunded,
      sum(amount)::numeric(18,2)::text as net
    from money_entries where customer_id = ${report.customerId}
      and created_at >= ${from}::timestamptz and created_at < ${before}::timestamptz group by currency`,
      );
      const units = await rows<{ instrumentId: string; net: string; n: number }>(
        db,
        sql`select stock_id as "instrumentId", sum(units)::numeric(18,4)::text as net, count(*)::int as n
    from ledger_entries where customer_id = ${report.customerId}
      and created_at >= ${from}::timestamptz and created_at < ${before}::timestamptz group by stock_id`,
      );
      const entries = await rows<{ n: number }>(
        db,
        sql`select ((select count(*) from money_entries where customer_id = ${report.customerId}
      and created_at >= ${from}::timestamptz and created_at < ${before}::timestamptz)
      + (select count(*) from ledger_entries where customer_id = ${report.customerId}
      and created_at >= ${from}::timestamptz and created_at < ${before}::timestamptz))::int as n`,
      );
      expect(data.totals.money).toEqual(money);
      expect(data.totals.units.map(({ instrumentId, net }) => ({ instrumentId, net })).sort()).toEqual(
        units.map(({ instrumentId, net }) => ({ instrumentId, net })).sort(),
      );
      expect(data.transactions).toHaveLength(entries[0]!.n);
      expect(data.totals.transactions).toBe(entries[0]!.n);
      // Closing = opening + the month's net, per instrument.
      const unitsOf = (list: typeof data.opening.positions, id: string) =>
        Number(list.find((p) => p.instrument.id === id)?.units ?? '0');
      for (const { instrumentId, net } of data.totals.units)
        expect(unitsOf(data.closing.positions, instrumentId)).toBeCloseTo(
          unitsOf(data.opening.positions, instrumentId) + Number(net),
          4,
        );
    }

    const byCustomer = (id: string) =>
      monthlyStatementDataSchema.parse(written.find((r) => r.customerId === id)!.data);
    const ofA = byCustomer(a);
    expect(ofA.opening).toEqual({
      positions: [
        {
          instrument: {
            id: ids.fractional.id,
            symbol: ids.fractional.symbol,
            name: ids.fractional.name,
            currency: 'KES',
          },
          units: '4.0000',
          price: '20.0000',
          priceAsOf: eat('2026-09-30T15:00').toISOString(),
          value: '80.00',
        },
      ],
      values: [{ currency: 'KES', value: '80.00' }],
    });
    expect(ofA.closing.positions.map((p) => [p.instrument.symbol, p.units, p.price, p.value])).toEqual(
      [
        [ids.fractional.symbol, '8.0000', '30.0000', '240.00'],
        [ids.whole.symbol, '1.0000', '250.0000', '250.00'],
      ].sort((x, y) => x[0]!.localeCompare(y[0]!)),
    );
    expect(ofA.transactions.map((l) => `${l.bookingDate} ${l.type}`).sort()).toEqual([
      '2026-10-03 BUY',
      '2026-10-03 COLLECTION',
      '2026-10-10 BUY',
      '2026-10-10 COLLECTION',
      '2026-10-10 REFUND',
      '2026-10-20 PAYOUT',
      '2026-10-20 SELL',
    ]);
    expect(ofA.totals.money).toEqual([
      { currency: 'KES', collected: '700.00', paidOut: '-250.00', refunded: '-100.00', net: '350.00' },
    ]);
    expect(byCustomer(c)).toMatchObject({
      transactions: [],
      closing: { values: [{ currency: 'KES', value: '120.00' }] },
    });

    // Housekeeping's task: before 01:00 on 1 November the month due is September (a and c held or
    // traded then); from 01:00 October, already written; a second tick of a done month writes nothing.
    const task = monthlyStatementsTask(db, t.ctx);
    expect(await task(eat('2026-11-01T00:30'))).toBe(2);
    expect(await task(eat('2026-11-01T01:10'))).toBe(0);
    expect(await task(eat('2026-11-01T01:20'))).toBe(0);
    const september = await rows<{ customerId: string }>(
      db,
      sql`select customer_id as "customerId" from reports where type = 'MONTHLY_STATEMENT'
    and data->'period'->>'month' = '2026-09'`,
    );
    expect(september.map((r) => r.customerId).sort()).toEqual([a, c].sort());

    // Served to the partner as JSON and PDF, announced by REPORT.CREATED.
    const reports = reportsClient(t, partner);
    const listed = (await reports.list('?type=MONTHLY_STATEMENT')).json().data as Report[];
    const october = listed.filter((r) => (r.data.period as { month: string }).month === '2026-10');
    expect(october.map((r) => r.id).sort()).toEqual(written.map((r) => r.id).sort());
    for (const report of written) {
      const pdf = await reports.pdf(report.id);
      expect(pdf.headers['content-type']).toBe('application/pdf');
      expect(missingFrom(await pdfText(pdf.rawPayload), report)).toEqual([]);
    }
    const events = await dataOf(t, partner.organizationId, 'REPORT.CREATED');
    expect(
      events
        .filter((e) => e.type === 'MONTHLY_STATEMENT')
        .map((e) => e.id)
        .sort(),
    ).toEqual(listed.map((r) => r.id).sort());
  });
});
