import { createId, ErrorMessage, RequestMessage } from '@partner-api/contract';
import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { createPartner, type Partner, signedInject } from '@partner-api/testkit/partner.ts';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { rows, run } from '../../src/db/query.ts';
import { insertCustomer, insertHolding } from '../ussd/support.ts';
import { dataOf } from '../webhooks/api-support.ts';
import {
  executedAs,
  ISO,
  keyInFlight,
  ordersOf,
  ownInstruments,
  REQUESTS_ENV,
  requestsClient,
} from './requests-support.ts';

const notFound = (message: string) => ({ error: 'Not found', message });
const conflict = (message: string) => ({ error: 'Conflict', message });
const invalid = (field: string, message: string) => ({
  error: 'Validation failed',
  details: [{ field, message }],
});

/**
 * The requests of the investments API without the payment worker: a buy stays PENDING_PAYMENT
 * with its collection queued, so that cancelling it can be seen (the executed path is in
 * requests-execution.test.ts).
 */
describeStores('requests (POST, GET, list, cancel) on %s', (store) => {
  let t: TestApp;
  let ids: Awaited<ReturnType<typeof ownInstruments>>;
  let partner: Partner;
  let customerId: string;
  let api: ReturnType<typeof requestsClient>;
  beforeAll(async () => {
    t = await buildTestApp(store, REQUESTS_ENV);
    ids = await ownInstruments(t, 'ZZR');
    partner = await createPartner(t);
    customerId = await insertCustomer(t, partner);
    api = requestsClient(t, partner);
  });
  afterAll(() => t.close());

  const buy = (amount = '1000', instrumentId = ids.fractional.id, customer = customerId) => ({
    customerId: customer,
    instrumentId,
    side: 'BUY',
    amount,
  });

  it('a buy by amount: 201, PENDING_PAYMENT with its queued collection; GET and the payment status agree', async () => {
    const res = await api.create(buy());
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json();
    expect(body).toEqual({
      message: RequestMessage.created,
      data: {
        id: expect.any(String),
        customerId,
        instrumentId: ids.fractional.id,
        side: 'BUY',
        status: 'PENDING_PAYMENT',
        amount: '1000.00',
        currency: 'KES',
        quantity: null,
        price: '25.0000',
        createdAt: expect.stringMatching(ISO),
        updatedAt: expect.stringMatching(ISO),
        execution: null,
        transactions: [
          { id: expect.any(String), type: 'INCOMING', status: 'PENDING', amount: '1000.00', currency: 'KES' },
        ],
      },
    });
    const id = body.data.id as string;
    const got = await api.get(id);
    expect([got.statusCode, got.json()]).toEqual([200, { data: body.data }]);
    // The request's id is the order id the payment status takes.
    const status = await signedInject(t.app, partner, { method: 'GET', url: `/v1/payment/status/${id}` });
    expect(status.statusCode, status.body).toBe(200);
    expect(status.json().data.payment).toMatchObject({ id: body.data.transactions[0].id, status: 'PENDING' });
    // REQUEST.CREATED and TRANSACTION.CREATED, through the outbox like a USSD buy's.
    expect((await dataOf(t, partner.organizationId, 'REQUEST.CREATED')).map((d) => d.orderId)).toContain(id);
    expect((await dataOf(t, partner.organizationId, 'TRANSACTION.CREATED')).map((d) => d.orderId)).toContain(
      id,
    );
  });

  it('a sell by units of a settled holding: 201, EXECUTED at once with its execution and payout', async () => {
    const seller = await insertCustomer(t, partner);
    await insertHolding(t, partner, seller, ids.fractional.id, '10');
    const res = await api.create({
      customerId: seller,
      instrumentId: ids.fractional.id,
      side: 'SELL',
      units: '4',
    });
    expect(res.statusCode, res.body).toBe(201);
    const data = res.json().data;
    expect(data).toMatchObject({
      side: 'SELL',
      ...executedAs('4.0000', '25.0000', '100.00'),
      transactions: [{ type: 'OUTGOING', status: 'PENDING', amount: '100.00', currency: 'KES' }],
    });
    // Not cancellable once executed.
    const cancelled = await api.cancel(data.id);
    expect([cancelled.statusCode, cancelled.json()]).toEqual([
      409,
      conflict(RequestMessage.notCancellable('EXECUTED')),
    ]);
  });

  it('a sell of more units than available is refused, nothing written; pending units are not available', async () => {
    const seller = await insertCustomer(t, partner);
    await insertHolding(t, partner, seller, ids.fractional.id, '5');
    await run(
      t.ctx.database.db,
      sql`update holdings set pending_units = 2 where customer_id = ${seller} and stock_id = ${ids.fractional.id}`,
    );
    const res = await api.create({
      customerId: seller,
      instrumentId: ids.fractional.id,
      side: 'SELL',
      units: '4',
    });
    expect(res.statusCode).toBe(409);
    expect(res.json().message).toMatch(/^Not enough units available: 4 requested, 3 available to sell\. 2 /);
    const none = await insertCustomer(t, partner);
    const nothing = await api.create({
      customerId: none,
      instrumentId: ids.fractional.id,
      side: 'SELL',
      units: '1',
    });
    expect([nothing.statusCode, nothing.json()]).toEqual([
      409,
      conflict('Not enough units available: 1 requested, 0 available to sell.'),
    ]);
    expect(await ordersOf(t, seller)).toBe(0);
    expect(await ordersOf(t, none)).toBe(0);
  });

  it('the instrument’s minimum and whole units: 400 on amount, nothing written', async () => {
    const customer = await insertCustomer(t, partner);
    const low = await api.create(buy('150', ids.whole.id, customer));
    expect([low.statusCode, low.json()]).toEqual([
      400,
      invalid('amount', `The minimum for ${ids.whole.symbol} is KES 200.`),
    ]);
    const partUnit = await api.create(buy('240', ids.whole.id, customer));
    expect([partUnit.statusCode, partUnit.json()]).toEqual([
      400,
      invalid('amount', `${ids.whole.symbol} is sold in whole units only. One unit costs KES 250.00.`),
    ]);
    const defaultMinimum = await api.create(buy('99', ids.fractional.id, customer));
    expect([defaultMinimum.statusCode, defaultMinimum.json()]).toEqual([
      400,
      invalid('amount', `The minimum for ${ids.fractional.symbol} is KES 100.`),
    ]);
    expect(await ordersOf(t, customer)).toBe(0);
  });

  it('malformed bodies: 400 with one entry per field', async () => {
    const cases: [unknown, ReturnType<typeof invalid>][] = [
      [{ ...buy(), amount: undefined }, invalid('amount', 'amount is required for a BUY')],
      [{ ...buy(), units: '3' }, invalid('units', 'units is not allowed for a BUY')],
      [
        { customerId, instrumentId: ids.fractional.id, side: 'SELL', units: '1.5' },
        invalid('units', "units must be a whole number of units, e.g. '1000'"),
      ],
      [{ ...buy('0') }, invalid('amount', 'amount must be at least 1')],
      [{ ...buy('1000001') }, invalid('amount', 'amount must be at most 1000000')],
      [{ ...buy(), amount: 1000 }, invalid('amount', "amount must be a string of digits, e.g. '1000'")],
      [{ ...buy(), side: 'HOLD' }, invalid('side', 'side must be one of BUY, SELL')],
      [{ ...buy(), customerId: 'nope' }, invalid('customerId', 'customerId must be a valid ID')],
      [{ ...buy(), quantity: '1' }, invalid('quantity', 'Unknown field')],
    ];
    for (const [body, answer] of cases) {
      const res = await api.create(body);
      expect([res.statusCode, res.json()], JSON.stringify(body)).toEqual([400, answer]);
    }
  });

  it('unknown, other organization’s and unavailable customers and instruments', async () => {
    const other = await createPartner(t);
    const theirs = await insertCustomer(t, other);
    const foreign = await api.create(buy('1000', ids.fractional.id, theirs));
    const unknown = await api.create(buy('1000', ids.fractional.id, createId()));
    expect([foreign.statusCode, foreign.json()]).toEqual([404, notFound(ErrorMessage.customerNotFound)]);
    expect([unknown.statusCode, unknown.json()]).toEqual([404, notFound(ErrorMessage.customerNotFound)]);
    const noInstrument = await api.create(buy('1000', createId()));
    expect([noInstrument.statusCode, noInstrument.json()]).toEqual([
      404,
      notFound(RequestMessage.instrumentNotFound),
    ]);
    const inactive = await insertCustomer(t, partner, { isActive: false });
    const refused = await api.create(buy('1000', ids.fractional.id, inactive));
    expect([refused.statusCode, refused.json()]).toEqual([409, conflict(RequestMessage.customerInactive)]);
    const noPhone = await insertCustomer(t, partner, { msisdn: null });
    const phoneless = await api.create(buy('1000', ids.fractional.id, noPhone));
    expect([phoneless.statusCode, phoneless.json()]).toEqual([
      409,
      conflict('Cannot proceed: no phone number is registered for payment.'),
    ]);
    // A number no provider serves: refused before any order, never a prompt that will not come.
    const unserved = await insertCustomer(t, partner, { msisdn: '12025550123' });
    const noProvider = await api.create(buy('1000', ids.fractional.id, unserved));
    expect(noProvider.statusCode).toBe(409);
    expect(noProvider.json().message).toMatch(/ are not available yet\.$/);
    for (const c of [inactive, noPhone, unserved]) expect(await ordersOf(t, c)).toBe(0);
  });

  it('cancel a pending buy: CANCELLED with its collection, REQUEST.UPDATED; again is a 409', async () => {
    const created = await api.create(buy('500'));
    const id = created.json().data.id as string;
    const res = await api.cancel(id);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      message: RequestMessage.cancelled,
      data: {
        ...created.json().data,
        status: 'CANCELLED',
        updatedAt: expect.stringMatching(ISO),
        transactions: [{ ...created.json().data.transactions[0], status: 'CANCELLED' }],
      },
    });
    const updated = await dataOf(t, partner.organizationId, 'REQUEST.UPDATED');
    expect(updated.filter((d) => d.orderId === id).map((d) => d.status)).toEqual(['CANCELLED']);
    const again = await api.cancel(id);
    expect([again.statusCode, again.json()]).toEqual([
      409,
      conflict(RequestMessage.notCancellable('CANCELLED')),
    ]);
  });

  it('cancel a paid buy: CANCELLED and its amount refunded to the number that paid', async () => {
    const created = await api.create(buy('300'));
    const id = created.json().data.id as string;
    const db = t.ctx.database.db;
    await run(db, sql`update orders set status = 'PAID' where id = ${id}`);
    await run(db, sql`update transactions set status = 'SUCCESS' where order_id = ${id}`);
    const res = await api.cancel(id);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toMatchObject({
      status: 'CANCELLED',
      transactions: [
        { type: 'INCOMING', status: 'SUCCESS', amount: '300.00' },
        { type: 'OUTGOING', status: 'PENDING', amount: '300.00' },
      ],
    });
  });

  it('create and cancel are idempotent: replay, in-flight 409, mismatch 422', async () => {
    const body = buy('700');
    const key = crypto.randomUUID();
    const first = await api.create(body, key);
    expect(first.statusCode).toBe(201);
    const replay = await api.create(body, key);
    expect([replay.statusCode, replay.body, replay.headers['idempotent-replayed']]).toEqual([
      201,
      first.body,
      'true',
    ]);
    const mismatch = await api.create(buy('701'), key);
    expect([mismatch.statusCode, mismatch.json()]).toEqual([
      422,
      { error: 'Unprocessable Entity', message: ErrorMessage.idempotencyPayloadMismatch },
    ]);
    const held = await keyInFlight(t, partner, '/v1/requests', JSON.stringify(body));
    const locked = await api.create(body, held);
    expect([locked.statusCode, locked.json()]).toEqual([409, conflict(ErrorMessage.idempotencyInProgress)]);
    const id = first.json().data.id as string;
    const placed = await rows<{ id: string }>(
      t.ctx.database.db,
      sql`select id from orders where customer_id = ${customerId} and amount = 700`,
    );
    expect(placed).toEqual([{ id }]);

    const cancelKey = crypto.randomUUID();
    const cancelled = await api.cancel(id, cancelKey);
    expect(cancelled.statusCode).toBe(200);
    const cancelReplay = await api.cancel(id, cancelKey);
    expect([cancelReplay.statusCode, cancelReplay.body, cancelReplay.headers['idempotent-replayed']]).toEqual(
      [200, cancelled.body, 'true'],
    );
    const otherId = (await api.create(buy('702'))).json().data.id as string;
    const cancelMismatch = await api.cancel(otherId, cancelKey);
    expect(cancelMismatch.statusCode).toBe(422);
    const cancelHeld = await keyInFlight(t, partner, `/v1/requests/${otherId}/cancel`, '');
    const cancelLocked = await api.cancel(otherId, cancelHeld);
    expect([cancelLocked.statusCode, cancelLocked.json()]).toEqual([
      409,
      conflict(ErrorMessage.idempotencyInProgress),
    ]);
    const missingKey = await signedInject(t.app, partner, {
      method: 'POST',
      url: '/v1/requests',
      body,
      idempotencyKey: false,
    });
    expect([missingKey.statusCode, missingKey.json()]).toEqual([
      400,
      { error: 'Bad Request', message: ErrorMessage.idempotencyKeyRequired },
    ]);
  });

  it('another organization’s request answers as an unknown one; malformed ids are 400', async () => {
    const id = (await api.create(buy('400'))).json().data.id as string;
    const other = requestsClient(t, await createPartner(t));
    const unknown = notFound(RequestMessage.notFound);
    for (const res of [
      await other.get(id),
      await other.cancel(id),
      await api.get(createId()),
      await api.cancel(createId()),
    ])
      expect([res.statusCode, res.json()]).toEqual([404, unknown]);
    expect((await other.list()).json().data).toEqual([]);
    const malformed = invalid('requestId', 'Invalid request ID format');
    for (const res of [await api.get('nope'), await api.cancel('nope')])
      expect([res.statusCode, res.json()]).toEqual([400, malformed]);
    expect((await api.get(id)).json().data.status).toBe('PENDING_PAYMENT');
  });

  it('lists newest first with filters and the pagination object', async () => {
    const lister = await createPartner(t);
    const mine = requestsClient(t, lister);
    const a = await insertCustomer(t, lister);
    const b = await insertCustomer(t, lister);
    await insertHolding(t, lister, b, ids.fractional.id, '3');
    const made: string[] = [];
    for (const body of [
      buy('100', ids.fractional.id, a),
      buy('500', ids.whole.id, a),
      { customerId: b, instrumentId: ids.fractional.id, side: 'SELL', units: '1' },
      buy('200', ids.fractional.id, b),
    ]) {
      const res = await mine.create(body);
      expect(res.statusCode, res.body).toBe(201);
      made.push(res.json().data.id);
    }
    await mine.cancel(made[0]!);
    const all = await mine.list();
    expect(all.statusCode).toBe(200);
    expect(all.json().data.map((r: { id: string }) => r.id)).toEqual([...made].reverse());
    expect(all.json().pagination).toEqual({ page: 1, limit: 10, total: 4, totalPages: 1 });
    const ofA = (await mine.list(`?customerId=${a}`)).json();
    expect(ofA.data.map((r: { id: string }) => r.id)).toEqual([made[1], made[0]]);
    const page2 = (await mine.list('?limit=3&page=2')).json();
    expect(page2).toMatchObject({ pagination: { page: 2, limit: 3, total: 4, totalPages: 2 } });
    expect(page2.data.map((r: { id: string }) => r.id)).toEqual([made[0]]);
    const byStatus = (await mine.list('?status=EXECUTED')).json().data;
    expect(byStatus.map((r: { id: string }) => r.id)).toEqual([made[2]]);
    const byInstrument = (await mine.list(`?instrumentId=${ids.whole.id}`)).json().data;
    expect(byInstrument.map((r: { id: string }) => r.id)).toEqual([made[1]]);
    const today = new Date().toISOString().slice(0, 10);
    expect((await mine.list(`?createdFrom=${today}&createdTo=${today}`)).json().pagination.total).toBe(4);
    expect((await mine.list('?createdTo=2020-01-01')).json()).toEqual({
      data: [],
      pagination: { page: 1, limit: 10, total: 0, totalPages: 0 },
    });
    const errors: [string, ReturnType<typeof invalid>][] = [
      [
        '?status=DONE',
        invalid('status', 'status must be one of PENDING_PAYMENT, PAID, EXECUTED, FAILED, CANCELLED'),
      ],
      [
        '?createdFrom=2026-02-01&createdTo=2026-01-01',
        invalid('createdTo', 'createdTo must not be before createdFrom'),
      ],
      ['?createdFrom=yesterday', invalid('createdFrom', 'createdFrom must be a date (YYYY-MM-DD)')],
      ['?customerId=nope', invalid('customerId', 'Invalid customer ID format')],
      ['?limit=101', invalid('limit', 'limit must be at most 100')],
      ['?side=BUY', invalid('side', 'Unknown field')],
    ];
    for (const [query, answer] of errors) {
      const res = await mine.list(query);
      expect([res.statusCode, res.json()], query).toEqual([400, answer]);
    }
  });
});

describeStores('requests with INVESTMENTS_PREVIEW off on %s', (store) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp(store);
  });
  afterAll(() => t.close());

  it('every requests path answers as an unknown route', async () => {
    const partner = await createPartner(t);
    const api = requestsClient(t, partner);
    const id = createId();
    for (const res of [await api.create({}), await api.list(), await api.get(id), await api.cancel(id)])
      expect([res.statusCode, res.body]).toEqual([404, '{"error":"Not Found"}']);
  });
});
