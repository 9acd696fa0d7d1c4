import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { createOrderWithTransactions } from '@partner-api/testkit/orders.ts';
import { createPartner, type Partner, signedInject } from '@partner-api/testkit/partner.ts';
import type { SQLWrapper } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';

const notFound = (orderId: string) => ({
  error: 'Transaction not found',
  message: `No payment or disbursement transaction was found for the order ${orderId}`,
});
const NONEXISTENT_ORDER = 'c000000000000000000000000';

describeStores('GET /v1/payment/status/{orderId} on %s', (store) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp(store);
  });
  afterAll(() => t.close());

  const status = (p: Partner, orderId: string) =>
    signedInject(t.app, p, { method: 'GET', url: `/v1/payment/status/${orderId}` });

  it('returns the latest payment and the latest disbursement', async () => {
    const p = await createPartner(t);
    const order = await createOrderWithTransactions(t.ctx.database.db, p.organizationId, [
      { type: 'INCOMING', amount: '1000', status: 'FAILED', provider: 'MPESA' },
      { type: 'INCOMING', amount: '1000.5', status: 'SUCCESS', provider: 'AIRTEL_MONEY' },
      { type: 'OUTGOING', amount: '250.00', status: 'PENDING', provider: 'MTN_MOMO', currency: 'UGX' },
    ]);
    const res = await status(p, order.orderId);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      message: 'Transaction status retrieved successfully',
      data: {
        orderId: order.orderId,
        payment: {
          id: order.transactionIds[1],
          type: 'INCOMING',
          amount: '1000.50',
          currency: 'KES',
          status: 'SUCCESS',
          provider: 'AIRTEL_MONEY',
        },
        disbursement: {
          id: order.transactionIds[2],
          type: 'OUTGOING',
          amount: '250.00',
          currency: 'UGX',
          status: 'PENDING',
          provider: 'MTN_MOMO',
        },
      },
    });
  });

  it('leaves out the key of a transaction that does not exist', async () => {
    const p = await createPartner(t);
    const paid = await createOrderWithTransactions(t.ctx.database.db, p.organizationId, [
      { type: 'INCOMING', amount: '1000.00' },
    ]);
    const paidBody = (await status(p, paid.orderId)).json();
    expect(Object.keys(paidBody.data)).toEqual(['orderId', 'payment']);
    expect(paidBody.data.payment.amount).toBe('1000.00');
    const paidOut = await createOrderWithTransactions(t.ctx.database.db, p.organizationId, [
      { type: 'OUTGOING', amount: '99.99' },
    ]);
    expect(Object.keys((await status(p, paidOut.orderId)).json().data)).toEqual(['orderId', 'disbursement']);
  });

  it.each([
    ['not a CUID', 'order-123'],
    ['upper case', 'CJLD2CYUQ0000T3RMNIOD1FOY'],
    ['too long', `c${'a'.repeat(25)}`],
    ['SQL', "c' OR '1'='1"],
  ])('refuses an order id that is %s with the exact 400, before any lookup', async (_name, orderId) => {
    const p = await createPartner(t);
    const spy = vi.spyOn(t.ctx.database.db, 'selectDistinctOn');
    const res = await status(p, encodeURIComponent(orderId));
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      error: 'Invalid request',
      message: 'Order ID is not a valid order reference',
    });
    expect(spy).not.toHaveBeenCalled();
    spy.mockRestore();
  });

  it('404 names the order, for an unknown order and for an order without transactions', async () => {
    const p = await createPartner(t);
    const unknown = await status(p, NONEXISTENT_ORDER);
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual(notFound(NONEXISTENT_ORDER));
    const empty = await createOrderWithTransactions(t.ctx.database.db, p.organizationId, []);
    const none = await status(p, empty.orderId);
    expect(none.statusCode).toBe(404);
    expect(none.json()).toEqual(notFound(empty.orderId));
  });

  it('an unexpected failure is the bare 500, with no detail', async () => {
    const p = await createPartner(t);
    // Only the status query fails (its `distinct on`); the caller lookup before it runs as usual.
    const { db } = t.ctx.database;
    const execute = db.execute.bind(db);
    const spy = vi.spyOn(db, 'execute').mockImplementation(((query: SQLWrapper) => {
      if (new PgDialect().sqlToQuery(query.getSQL()).sql.includes('distinct on'))
        throw new Error('relation "transactions" secret detail');
      return execute(query);
    }) as typeof db.execute);
    const res = await status(p, NONEXISTENT_ORDER);
    spy.mockRestore();
    expect(res.statusCode).toBe(500);
    expect(res.body).toBe(JSON.stringify({ error: 'Internal Server Error' }));
  });

  it("security: another organization's order is answered exactly like a nonexistent one", async () => {
    const a = await createPartner(t);
    const b = await createPartner(t);
    const order = await createOrderWithTransactions(t.ctx.database.db, a.organizationId, [
      { type: 'INCOMING', amount: '500.00' },
    ]);
    const foreign = await status(b, order.orderId);
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json()).toEqual(notFound(order.orderId));
    // Same shape, headers and length as the answer for an order that never existed.
    const missing = await status(b, NONEXISTENT_ORDER);
    expect(foreign.body.replace(order.orderId, NONEXISTENT_ORDER)).toBe(missing.body);
    expect(foreign.headers['content-length']).toBe(missing.headers['content-length']);
    expect((await status(a, order.orderId)).statusCode).toBe(200);
  });

  it('security: no token is 401 before the order id is even looked at', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/payment/status/not-an-order' });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({
      error: 'Unauthorized',
      message: 'Organization authentication token is required',
    });
  });
});
