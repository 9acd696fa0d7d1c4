import { randomBytes } from 'node:crypto';
import SwaggerParser from '@apidevtools/swagger-parser';
import { createId, type Report, type Transaction } from '@partner-api/contract';
import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { createOrderWithTransactions } from '@partner-api/testkit/orders.ts';
import { createPartner, type Partner, signedInject } from '@partner-api/testkit/partner.ts';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { one, rows, run } from '../../src/db/query.ts';
import { localTime, NSE, nextDate } from '../../src/services/market/calendar.ts';
import { settleDueExecutions } from '../../src/services/orders/life.ts';
import { startPayments } from '../../src/services/payments/pipeline/start.ts';
import type { PaymentWorker } from '../../src/services/payments/pipeline/worker.ts';
import { upsertStocks } from '../../src/services/stocks/upsert.ts';
import { insertCustomer, orderRow, refOf, transactionsOf, ussdClient, waitFor } from '../ussd/support.ts';

const get = (t: TestApp, partner: Partner, url: string) =>
  signedInject(t.app, partner, { method: 'GET', url });

const validation = (field: string, message: string) => ({
  error: 'Validation failed',
  details: [{ field, message }],
});
const TRANSACTION_NOT_FOUND = { error: 'Not found', message: 'Transaction not found' };
const REPORT_NOT_FOUND = { error: 'Not found', message: 'Report not found' };

/** Newest first: createdAt descending, then id descending. */
const isNewestFirst = (list: { id: string; createdAt: string }[]) =>
  list.every(
    (item, i) =>
      i === 0 ||
      list[i - 1]!.createdAt > item.createdAt ||
      (list[i - 1]!.createdAt === item.createdAt && list[i - 1]!.id > item.id),
  );

describeStores('investments ledger: transactions and reports on %s', (store) => {
  let t: TestApp;
  let simulator: PaymentWorker;
  let symbol: string;
  let stockId: string;
  beforeAll(async () => {
    t = await buildTestApp(store, { INVESTMENTS_PREVIEW: 'true', SANDBOX_SETTLE_MS: '200' });
    symbol = `LG${randomBytes(3).toString('hex').toUpperCase()}`;
    const [stock] = await upsertStocks(t.ctx.database.db, [
      { symbol, name: 'Ledger Test Holdings', price: '25.0000', currency: 'KES' },
    ]);
    stockId = stock!.id;
    simulator = startPayments(t.ctx, t.app.log);
  });
  afterAll(async () => {
    await simulator.stop();
    await t.close();
  });

  it('the document describes the four operations as preview, and validates as OpenAPI 3.0', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/openapi.json' });
    const document = res.json();
    await expect(SwaggerParser.validate(structuredClone(document))).resolves.toBeTruthy();
    for (const [path, operationId] of [
      ['/transactions', 'listTransactions'],
      ['/transactions/{transactionId}', 'getTransaction'],
      ['/reports', 'listReports'],
      ['/reports/{reportId}', 'getReport'],
    ]) {
      expect(document.paths[path!].get).toMatchObject({
        operationId,
        'x-preview': true,
        tags: ['Investments (preview)'],
      });
    }
  });

  it('a USSD buy and sell: the collection, the execution, the sell and the payout, with their references', async () => {
    const partner = await createPartner(t);
    const customerId = await insertCustomer(t, partner);
    const db = t.ctx.database.db;
    const client = ussdClient(t, partner);
    const buyId = refOf(await client.walk(customerId, ['1', '8', symbol, '1', '1', '100', '1']));
    await waitFor(async () => ((await orderRow(t, buyId))?.status === 'EXECUTED' ? true : undefined));
    expect(await settleDueExecutions(db, new Date(Date.now() + 8 * 86_400_000))).toBeGreaterThan(0);
    const sold = await client.walk(customerId, ['1', '8', symbol, '1', '2', '3', '1']);
    expect(sold.currentState, sold.menu.text).toBe('SELL_SUBMITTED');
    const sellId = refOf(sold);
    await waitFor(async () => {
      const paid = await one<{ n: number }>(
        db,
        sql`select count(*)::int as n from money_entries where customer_id = ${customerId}`,
      );
      return paid?.n === 2 ? true : undefined;
    });

    const [collection] = await transactionsOf(t, buyId);
    const [payout] = await transactionsOf(t, sellId);
    const executions = await rows<{ id: string; orderId: string; settlementDate: string }>(
      db,
      sql`select id, order_id as "orderId", settlement_date as "settlementDate" from executions
    where order_id in (${buyId}, ${sellId})`,
    );
    const executionOf = (orderId: string) => executions.find((e) => e.orderId === orderId)!;
    const entries = await rows<{ id: string; kind: string }>(
      db,
      sql`select id, kind from ledger_entries where customer_id = ${customerId}`,
    );
    const entryOf = (kind: string) => entries.find((e) => e.kind === kind)!.id;

    const res = await get(t, partner, `/v1/transactions?customerId=${customerId}`);
    expect(res.statusCode, res.body).toBe(200);
    const { data, pagination } = res.json() as { data: Transaction[]; pagination: unknown };
    expect(pagination).toEqual({ page: 1, limit: 10, total: 4, totalPages: 1 });
    expect(isNewestFirst(data)).toBe(true);
    // The sell's units and its payout are written together; the buy's units after its collection.
    expect(data.slice(2).map((d) => d.type)).toEqual(['BUY', 'COLLECTION']);
    expect(data.map((d) => d.type).sort()).toEqual(['BUY', 'COLLECTION', 'PAYOUT', 'SELL']);
    const byType = (type: string) => data.find((d) => d.type === type)!;
    const today = localTime(NSE.timeZone, new Date()).date;

    expect(byType('COLLECTION')).toMatchObject({
      id: collection!.id,
      customerId,
      ledger: 'MONEY',
      status: 'SUCCESS',
      amount: '100.00',
      currency: 'KES',
      units: null,
      instrumentId: stockId,
      provider: collection!.provider,
      failureReason: null,
      bookingDate: today,
      valueDate: today,
      execution: null,
      references: [
        { type: 'REQUEST', id: buyId },
        { type: 'PAYMENT', id: collection!.id },
      ],
    });
    expect(byType('BUY')).toMatchObject({
      id: entryOf('BUY'),
      ledger: 'UNITS',
      status: 'SUCCESS',
      amount: null,
      currency: null,
      units: '4.0000',
      instrumentId: stockId,
      provider: null,
      bookingDate: today,
      valueDate: executionOf(buyId).settlementDate,
      execution: {
        id: executionOf(buyId).id,
        price: '25.0000',
        settlementDate: executionOf(buyId).settlementDate,
        status: 'SETTLED',
      },
      references: [
        { type: 'REQUEST', id: buyId },
        { type: 'EXECUTION', id: executionOf(buyId).id },
      ],
    });
    expect(byType('SELL')).toMatchObject({
      id: entryOf('SELL'),
      ledger: 'UNITS',
      units: '-3.0000',
      valueDate: executionOf(sellId).settlementDate,
      execution: { id: executionOf(sellId).id, price: '25.0000', status: 'FILLED' },
      references: [
        { type: 'REQUEST', id: sellId },
        { type: 'EXECUTION', id: executionOf(sellId).id },
      ],
    });
    expect(byType('PAYOUT')).toMatchObject({
      id: payout!.id,
      ledger: 'MONEY',
      status: 'SUCCESS',
      amount: '-75.00',
      units: null,
      bookingDate: today,
      references: [
        { type: 'REQUEST', id: sellId },
        { type: 'PAYMENT', id: payout!.id },
      ],
    });
    expect(byType('BUY').execution!.executedAt).toMatch(/Z$/);

    // Each is fetched by its id: the payment transaction's for money, the entry's for units.
    for (const item of data) {
      const one = await get(t, partner, `/v1/transactions/${item.id}`);
      expect(one.statusCode, one.body).toBe(200);
      expect(one.json()).toEqual({ data: item });
    }

    const list = async (query: string) => {
      const answer = await get(t, partner, `/v1/transactions?customerId=${customerId}&${query}`);
      expect(answer.statusCode, answer.body).toBe(200);
      return answer.json() as { data: Transaction[]; pagination: Record<string, number> };
    };
    expect((await list(`requestId=${buyId}`)).data.map((d) => d.type)).toEqual(['BUY', 'COLLECTION']);
    expect((await list(`requestId=${sellId}`)).data.map((d) => d.type).sort()).toEqual(['PAYOUT', 'SELL']);
    expect((await list('type=PAYOUT')).data.map((d) => d.id)).toEqual([payout!.id]);
    expect((await list('ledger=UNITS')).data.map((d) => d.type).sort()).toEqual(['BUY', 'SELL']);
    expect((await list('ledger=MONEY&type=BUY')).data).toEqual([]);
    expect((await list(`from=${today}&to=${today}`)).pagination.total).toBe(4);
    expect((await list(`from=${nextDate(today)}`)).pagination.total).toBe(0);
    expect((await list(`to=${nextDate(today, -1)}`)).pagination.total).toBe(0);
    const second = await list('limit=1&page=2');
    expect(second.pagination).toEqual({ page: 2, limit: 1, total: 4, totalPages: 4 });
    expect(second.data).toEqual([data[1]]);
    // Every page size walks the merged ledgers to the same order, each row once.
    for (const limit of [1, 2, 3]) {
      const walked: Transaction[] = [];
      for (let page = 1; page <= Math.ceil(4 / limit); page++)
        walked.push(...(await list(`limit=${limit}&page=${page}`)).data);
      expect(walked.map((d) => d.id)).toEqual(data.map((d) => d.id));
    }
    expect((await list('page=9')).data).toEqual([]);
    // Without a filter the organization's transactions are listed: this customer's only.
    const all = await get(t, partner, '/v1/transactions?limit=100');
    expect((all.json() as { data: Transaction[] }).data).toEqual(data);
  });

  it('a payment transaction of every status is a money movement, booked only once money moved', async () => {
    const partner = await createPartner(t);
    const seeded = await createOrderWithTransactions(t.ctx.database.db, partner.organizationId, [
      { type: 'INCOMING', amount: '80.00', status: 'FAILED' },
      { type: 'INCOMING', amount: '80.00', status: 'PENDING' },
      { type: 'OUTGOING', amount: '80.00', status: 'PENDING' },
    ]);
    await run(
      t.ctx.database.db,
      sql`update transactions set failure_reason = 'Request cancelled by user' where id = ${seeded.transactionIds[0]!}`,
    );
    const [failed, pending, refund] = seeded.transactionIds as [string, string, string];
    const answer = await get(t, partner, `/v1/transactions/${pending}`);
    expect(answer.statusCode, answer.body).toBe(200);
    expect(answer.json().data).toMatchObject({
      id: pending,
      customerId: seeded.customerId,
      ledger: 'MONEY',
      type: 'COLLECTION',
      status: 'PENDING',
      amount: '80.00',
      bookingDate: null,
      valueDate: null,
      references: [
        { type: 'REQUEST', id: seeded.orderId },
        { type: 'PAYMENT', id: pending },
      ],
    });
    expect((await get(t, partner, `/v1/transactions/${failed}`)).json().data).toMatchObject({
      type: 'COLLECTION',
      status: 'FAILED',
      failureReason: 'Request cancelled by user',
    });
    // A buy's money going back out is a refund, negative.
    expect((await get(t, partner, `/v1/transactions/${refund}`)).json().data).toMatchObject({
      type: 'REFUND',
      status: 'PENDING',
      amount: '-80.00',
    });
    // Units held before the ledger began: no request, no execution; its value date is its booking date.
    const opening = createId();
    await run(
      t.ctx.database.db,
      sql`insert into ledger_entries (id, organization_id, customer_id, stock_id, kind, units)
    values (${opening}, ${partner.organizationId}, ${seeded.customerId}, ${stockId}, 'OPENING', 2)`,
    );
    const openingData = (await get(t, partner, `/v1/transactions/${opening}`)).json().data as Transaction;
    expect(openingData).toMatchObject({
      ledger: 'UNITS',
      type: 'OPENING',
      status: 'SUCCESS',
      units: '2.0000',
      execution: null,
      references: [],
    });
    expect(openingData.valueDate).toBe(openingData.bookingDate);
    expect(openingData.bookingDate).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    const listed = await get(t, partner, '/v1/transactions?type=COLLECTION');
    expect(listed.json().data.map((d: Transaction) => d.id)).toEqual([pending, failed]);
    expect(
      (await get(t, partner, '/v1/transactions?type=REFUND')).json().data.map((d: Transaction) => d.id),
    ).toEqual([refund]);
  });

  it("another organization's transactions are reported exactly like nonexistent ones, and never listed", async () => {
    const owner = await createPartner(t);
    const other = await createPartner(t);
    const seeded = await createOrderWithTransactions(t.ctx.database.db, owner.organizationId, [
      { type: 'INCOMING', amount: '50.00', status: 'PENDING' },
    ]);
    const id = seeded.transactionIds[0]!;
    expect((await get(t, owner, `/v1/transactions/${id}`)).statusCode).toBe(200);
    for (const url of [`/v1/transactions/${id}`, `/v1/transactions/${createId()}`]) {
      const res = await get(t, other, url);
      expect([res.statusCode, res.json()]).toEqual([404, TRANSACTION_NOT_FOUND]);
    }
    for (const query of ['', `?customerId=${seeded.customerId}`, `?requestId=${seeded.orderId}`]) {
      const res = await get(t, other, `/v1/transactions${query}`);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ data: [], pagination: { page: 1, limit: 10, total: 0, totalPages: 0 } });
    }
  });

  it('refuses a malformed id and every invalid query parameter', async () => {
    const partner = await createPartner(t);
    const cases: [string, ReturnType<typeof validation>][] = [
      ['/v1/transactions/not-a-cuid', validation('transactionId', 'Invalid transaction ID format')],
      ['/v1/transactions?limit=101', validation('limit', 'limit must be at most 100')],
      ['/v1/transactions?page=0', validation('page', 'page must be at least 1')],
      ['/v1/transactions?customerId=nope', validation('customerId', 'Invalid customer ID format')],
      ['/v1/transactions?requestId=nope', validation('requestId', 'Invalid request ID format')],
      [
        '/v1/transactions?type=DIVIDEND',
        validation('type', 'type must be one of COLLECTION, PAYOUT, REFUND, BUY, SELL, OPENING, REVERSAL'),
      ],
      ['/v1/transactions?ledger=CASH', validation('ledger', 'ledger must be one of MONEY, UNITS')],
      ['/v1/transactions?from=2026-02-30', validation('from', 'from must be a date (YYYY-MM-DD)')],
      ['/v1/transactions?to=yesterday', validation('to', 'to must be a date (YYYY-MM-DD)')],
      ['/v1/transactions?from=2026-03-02&to=2026-03-01', validation('to', 'to must not be before from')],
      ['/v1/transactions?status=SUCCESS', validation('status', 'Unknown field')],
      ['/v1/reports/not-a-cuid', validation('reportId', 'Invalid report ID format')],
      ['/v1/reports?limit=101', validation('limit', 'limit must be at most 100')],
      ['/v1/reports?customerId=nope', validation('customerId', 'Invalid customer ID format')],
      [
        '/v1/reports?type=INVOICE',
        validation('type', 'type must be one of TRADE_CONFIRMATION, MONTHLY_STATEMENT'),
      ],
      ['/v1/reports?instrumentId=x', validation('instrumentId', 'Unknown field')],
    ];
    for (const [url, body] of cases) {
      const res = await get(t, partner, url);
      expect([url, res.statusCode, res.json()]).toEqual([url, 400, body]);
    }
  });

  it('reports: listed newest first with filters, fetched by id, another organization’s answered as nonexistent', async () => {
    const partner = await createPartner(t);
    const other = await createPartner(t);
    const first = await insertCustomer(t, partner);
    const second = await insertCustomer(t, partner);
    const stranger = await insertCustomer(t, other);
    const db = t.ctx.database.db;
    const insert = async (
      organizationId: string,
      customerId: string,
      type: string,
      minutesAgo: number,
      replaces?: string,
    ) => {
      const id = createId();
      const createdAt = new Date(Date.now() - minutesAgo * 60_000).toISOString();
      const data = { orderId: createId(), summary: `${type} ${minutesAgo}` };
      await run(
        db,
        sql`insert into reports (id, organization_id, customer_id, type, data, replaces, created_at)
      values (${id}, ${organizationId}, ${customerId}, ${type}, ${JSON.stringify(data)}::jsonb, ${replaces ?? null}, ${createdAt}::timestamptz)`,
      );
      return { id, customerId, type, replaces: replaces ?? null, createdAt, data };
    };
    const oldest = await insert(partner.organizationId, first, 'TRADE_CONFIRMATION', 30);
    const statement = await insert(partner.organizationId, second, 'MONTHLY_STATEMENT', 20);
    const correction = await insert(partner.organizationId, first, 'TRADE_CONFIRMATION', 10, oldest.id);
    const foreign = await insert(other.organizationId, stranger, 'TRADE_CONFIRMATION', 5);

    const list = async (query = '') => {
      const res = await get(t, partner, `/v1/reports${query}`);
      expect(res.statusCode, res.body).toBe(200);
      return res.json() as { data: Report[]; pagination: Record<string, number> };
    };
    const all = await list();
    expect(all).toEqual({
      data: [correction, statement, oldest],
      pagination: { page: 1, limit: 10, total: 3, totalPages: 1 },
    });
    expect((await list(`?customerId=${first}`)).data.map((r) => r.id)).toEqual([correction.id, oldest.id]);
    expect((await list('?type=MONTHLY_STATEMENT')).data).toEqual([statement]);
    expect((await list(`?customerId=${second}&type=TRADE_CONFIRMATION`)).data).toEqual([]);
    expect(await list('?limit=2&page=2')).toEqual({
      data: [oldest],
      pagination: { page: 2, limit: 2, total: 3, totalPages: 2 },
    });
    expect((await list(`?customerId=${stranger}`)).data).toEqual([]);

    const got = await get(t, partner, `/v1/reports/${correction.id}`);
    expect([got.statusCode, got.json()]).toEqual([200, { data: correction }]);
    for (const id of [foreign.id, createId()]) {
      const res = await get(t, partner, `/v1/reports/${id}`);
      expect([res.statusCode, res.json()]).toEqual([404, REPORT_NOT_FOUND]);
    }
    expect((await get(t, other, `/v1/reports/${foreign.id}`)).json()).toEqual({ data: foreign });
  });
});

describeStores('investments ledger with the preview off on %s', (store) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp(store);
  });
  afterAll(() => t.close());

  it('every path answers exactly as an unmatched route', async () => {
    const partner = await createPartner(t);
    for (const url of [
      '/v1/transactions',
      `/v1/transactions/${createId()}`,
      '/v1/reports',
      `/v1/reports/${createId()}`,
    ]) {
      const res = await get(t, partner, url);
      expect([url, res.statusCode, res.body]).toEqual([url, 404, '{"error":"Not Found"}']);
    }
  });
});
