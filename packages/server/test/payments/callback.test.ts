import { createHmac } from 'node:crypto';
import { createId } from '@partner-api/contract';
import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { createPartner } from '@partner-api/testkit/partner.ts';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { holdings, orders, transactions } from '../../src/db/schema.ts';
import { cancelOrder } from '../../src/services/orders/life.ts';
import { signCallback } from '../../src/services/payments/callback-signature.ts';
import { ensureCatalog, insertCustomer, orderRow, transactionsOf } from '../ussd/support.ts';
import { placePendingBuy, sendCallback } from './support.ts';

describeStores('POST /v1/webhooks/callback on %s', (store) => {
  let t: TestApp;
  let stockIds: Awaited<ReturnType<typeof ensureCatalog>>;
  beforeAll(async () => {
    t = await buildTestApp(store);
    stockIds = await ensureCatalog(t);
  });
  afterAll(() => t.close());

  async function pendingBuy(amount = '1000.00') {
    const partner = await createPartner(t);
    const customerId = await insertCustomer(t, partner);
    const placed = await placePendingBuy(t, partner, { customerId, stockId: stockIds.buy, amount });
    return { partner, customerId, ...placed };
  }
  const holdingOf = async (customerId: string) =>
    t.ctx.database.db.select().from(holdings).where(eq(holdings.customerId, customerId));
  const transactionRow = async (id: string) =>
    (await t.ctx.database.db.select().from(transactions).where(eq(transactions.id, id)))[0];
  const outcomes = async () =>
    Object.fromEntries(
      (await t.ctx.metrics.paymentCallbacks.get()).values.map((v) => [String(v.labels.outcome), v.value]),
    );

  it('refuses a missing or bad signature with 401 and changes nothing', async () => {
    const { orderId, transactionId } = await pendingBuy();
    const body = JSON.stringify({ transactionId, status: 'SUCCESS', providerReference: 'QWE123' });
    const now = Math.floor(Date.now() / 1000);
    const mac = (secret: string, text: string) => createHmac('sha256', secret).update(text).digest('hex');
    const secret = t.ctx.secrets.providerCallbackSecret;
    const wrongSecret = `t=${now},v1=${mac('not-the-secret', `${now}.${body}`)}`;
    const otherBody = `t=${now},v1=${mac(secret, `${now}.${body} `)}`;
    // The form before signed callbacks carried a time: the body's HMAC alone.
    const untimed = `sha256=${mac(secret, body)}`;
    const before = (await outcomes()).rejected ?? 0;
    for (const signature of [null, '', 'sha256=zz', wrongSecret, otherBody, untimed, wrongSecret.slice(13)]) {
      const res = await sendCallback(t, body, signature);
      expect(res.statusCode, String(signature)).toBe(401);
      expect(res.json()).toEqual({ error: 'Unauthorized', message: 'Invalid callback signature' });
    }
    // A genuine signature made more than 300 s ago (or ahead): refused, saying why.
    for (const skew of [-301, 301]) {
      const stale = signCallback(secret, body, new Date((now + skew) * 1000));
      const res = await sendCallback(t, body, stale);
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({
        error: 'Unauthorized',
        message: 'Callback signature time is more than 300 seconds from ours',
      });
    }
    // Checked before validation: an unsigned caller learns nothing about the body's shape.
    const junk = await sendCallback(t, '{"nope":1}', null);
    expect(junk.statusCode).toBe(401);
    expect((await outcomes()).rejected).toBe(before + 10);
    expect(await transactionRow(transactionId)).toMatchObject({ status: 'PENDING', providerReference: null });
    expect(await orderRow(t, orderId)).toMatchObject({ status: 'PENDING_PAYMENT' });
  });

  it('SUCCESS pays then executes the order; a replay is 200 and changes nothing', async () => {
    const { customerId, orderId, transactionId } = await pendingBuy();
    // The signature covers the raw bytes as sent (spacing included), never a re-serialised body.
    const raw = `{ "transactionId": "${transactionId}", "status": "SUCCESS", "providerReference": "QK12AB34CD" }`;
    const res = await sendCallback(t, raw);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ message: 'Callback applied', data: { transactionId, status: 'SUCCESS' } });
    expect(await orderRow(t, orderId)).toMatchObject({
      status: 'EXECUTED',
      quantity: '40.0000',
      price: '25.0000',
    });
    const settled = await transactionRow(transactionId);
    expect(settled).toMatchObject({ status: 'SUCCESS', providerReference: 'QK12AB34CD' });
    expect(settled?.settledAt).toBeInstanceOf(Date);
    expect((await holdingOf(customerId)).map((h) => h.units)).toEqual(['40.0000']);

    for (const replay of [raw, JSON.stringify({ transactionId, status: 'FAILED', providerReference: 'X' })]) {
      const again = await sendCallback(t, replay);
      expect(again.statusCode).toBe(200);
      expect(again.json()).toEqual({
        message: 'Callback already applied',
        data: { transactionId, status: 'SUCCESS' },
      });
    }
    expect(await transactionRow(transactionId)).toEqual(settled);
    expect((await holdingOf(customerId)).map((h) => h.units)).toEqual(['40.0000']);
  });

  it('FAILED fails the order with the provider reason', async () => {
    const { customerId, orderId, transactionId } = await pendingBuy('1001.00');
    const res = await sendCallback(t, { transactionId, status: 'FAILED', reason: 'insufficient funds' });
    expect(res.json()).toEqual({ message: 'Callback applied', data: { transactionId, status: 'FAILED' } });
    expect(await transactionRow(transactionId)).toMatchObject({
      status: 'FAILED',
      failureReason: 'insufficient funds',
    });
    expect(await orderRow(t, orderId)).toMatchObject({ status: 'FAILED' });
    expect(await holdingOf(customerId)).toHaveLength(0);
  });

  it('no order is ever paid twice: concurrent SUCCESS callbacks apply once', async () => {
    const { customerId, orderId, transactionId } = await pendingBuy();
    const before = await outcomes();
    const responses = await Promise.all(
      ['R1', 'R2', 'R3', 'R4'].map((providerReference) =>
        sendCallback(t, { transactionId, status: 'SUCCESS', providerReference }),
      ),
    );
    expect(responses.map((r) => r.statusCode)).toEqual([200, 200, 200, 200]);
    const messages = responses.map((r) => r.json().message).sort();
    expect(messages).toEqual([
      'Callback already applied',
      'Callback already applied',
      'Callback already applied',
      'Callback applied',
    ]);
    const after = await outcomes();
    expect((after.applied ?? 0) - (before.applied ?? 0)).toBe(1);
    expect((after.duplicate ?? 0) - (before.duplicate ?? 0)).toBe(3);
    expect((await holdingOf(customerId)).map((h) => h.units)).toEqual(['40.0000']);
    expect(await orderRow(t, orderId)).toMatchObject({ status: 'EXECUTED' });
    expect(await transactionsOf(t, orderId)).toHaveLength(1);
  });

  it('money collected for an order cancelled meanwhile is refunded, once', async () => {
    const { partner, customerId, orderId, transactionId } = await pendingBuy('750.00');
    await t.ctx.database.db.transaction((tx) =>
      cancelOrder(tx, { organizationId: partner.organizationId, customerId, orderId }, t.ctx),
    );
    expect(await transactionRow(transactionId)).toMatchObject({ status: 'CANCELLED', settledAt: null });
    const late = await sendCallback(t, { transactionId, status: 'SUCCESS', providerReference: 'LATE1' });
    expect(late.json()).toEqual({
      message: 'Callback applied',
      data: { transactionId, status: 'CANCELLED' },
    });
    const again = await sendCallback(t, { transactionId, status: 'SUCCESS', providerReference: 'LATE1' });
    expect(again.json().message).toBe('Callback already applied');
    const moves = await transactionsOf(t, orderId);
    expect(moves.map((m) => [m.type, m.status, m.amount])).toEqual([
      ['INCOMING', 'CANCELLED', '750.00'],
      ['OUTGOING', 'PENDING', '750.00'],
    ]);
    expect(moves[0]?.providerReference).toBe('LATE1');
    expect(await orderRow(t, orderId)).toMatchObject({ status: 'CANCELLED' });
    expect(await holdingOf(customerId)).toHaveLength(0);
  });

  it('a disbursement outcome only settles the transaction', async () => {
    const { orderId, transactionId } = await pendingBuy();
    await sendCallback(t, { transactionId, status: 'SUCCESS' });
    const [order] = await t.ctx.database.db.select().from(orders).where(eq(orders.id, orderId));
    const refundId = createId();
    await t.ctx.database.db.insert(transactions).values({
      id: refundId,
      organizationId: order!.organizationId,
      orderId,
      type: 'OUTGOING',
      amount: '10.00',
      status: 'PENDING',
      provider: 'MPESA',
      msisdn: '254712345678',
    });
    const res = await sendCallback(t, {
      transactionId: refundId,
      status: 'FAILED',
      reason: 'recipient unreachable',
    });
    expect(res.json().data).toEqual({ transactionId: refundId, status: 'FAILED' });
    expect(await orderRow(t, orderId)).toMatchObject({ status: 'EXECUTED' });
  });

  it('404 for an unknown transaction; 400 for a malformed body with a good signature', async () => {
    const before = (await outcomes()).unknown ?? 0;
    const unknown = await sendCallback(t, { transactionId: createId(), status: 'SUCCESS' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ error: 'Not found', message: 'Transaction not found' });
    expect((await outcomes()).unknown).toBe(before + 1);

    const bad = await sendCallback(t, { transactionId: 'nope', status: 'DONE' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toEqual({
      error: 'Validation failed',
      details: [
        { field: 'transactionId', message: 'Invalid transaction ID format' },
        { field: 'status', message: 'status must be SUCCESS or FAILED' },
      ],
    });
  });
});
