import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { adminInject } from '@partner-api/testkit/helpers.ts';
import { createPartner, type Partner, signedInject } from '@partner-api/testkit/partner.ts';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { placeSell } from '../../src/services/orders/life.ts';
import {
  ensureCatalog,
  FIXTURES,
  insertCustomer,
  insertHolding,
  refOf,
  type UssdData,
  ussdClient,
} from '../ussd/support.ts';
import { dataOf, eventsOf, ISO_DATE, PREVIEW_ENV } from './api-support.ts';

/**
 * Each event type is written to the outbox with its data when the change commits, in the change's
 * own transaction, and not at all when the change rolls back (docs/webhooks.md, Events and their
 * data). Payments are settled by hand through the admin API: the same apply-once path as the
 * provider's answers.
 */
describeStores('events written with the change on %s', (store) => {
  let t: TestApp;
  let stockIds: Awaited<ReturnType<typeof ensureCatalog>>;
  beforeAll(async () => {
    t = await buildTestApp(store, PREVIEW_ENV);
    stockIds = await ensureCatalog(t);
  });
  afterAll(() => t.close());
  afterEach(() => {
    t.ctx.faultInjector = undefined;
  });

  const date = expect.stringMatching(ISO_DATE);

  async function customerOf(partner: Partner, id: string) {
    const res = await signedInject(t.app, partner, { method: 'GET', url: `/v1/customers/${id}` });
    expect(res.statusCode).toBe(200);
    return res.json().data;
  }

  it('CUSTOMER.CREATED and CUSTOMER.UPDATED carry the customer exactly as GET answers it', async () => {
    const partner = await createPartner(t);
    const created = await signedInject(t.app, partner, {
      method: 'POST',
      url: '/v1/customers',
      body: { firstName: 'Amina', lastName: 'Otieno', msisdn: '254712000001', referenceId: 'ref-1' },
    });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().data.id as string;
    expect(await dataOf(t, partner.organizationId, 'CUSTOMER.CREATED')).toEqual([
      await customerOf(partner, id),
    ]);

    const patched = await signedInject(t.app, partner, {
      method: 'PATCH',
      url: `/v1/customers/${id}`,
      body: { lastName: 'Kamau', referenceId: null },
    });
    expect(patched.statusCode, patched.body).toBe(200);
    const updated = await dataOf(t, partner.organizationId, 'CUSTOMER.UPDATED');
    expect(updated).toEqual([await customerOf(partner, id)]);
    expect(updated[0]).toMatchObject({ lastName: 'Kamau', referenceId: null });

    // An empty patch changes nothing, so it tells nobody anything.
    const empty = await signedInject(t.app, partner, {
      method: 'PATCH',
      url: `/v1/customers/${id}`,
      body: {},
    });
    expect(empty.statusCode).toBe(200);
    expect(await dataOf(t, partner.organizationId, 'CUSTOMER.UPDATED')).toHaveLength(1);
  });

  it('a refused create or patch writes no event (validation, another organization)', async () => {
    const partner = await createPartner(t);
    const other = await createPartner(t);
    const bad = await signedInject(t.app, partner, {
      method: 'POST',
      url: '/v1/customers',
      body: { firstName: 'Amina', lastName: 'Otieno', msisdn: '12' },
    });
    expect(bad.statusCode).toBe(400);
    const theirs = await insertCustomer(t, other);
    const foreign = await signedInject(t.app, partner, {
      method: 'PATCH',
      url: `/v1/customers/${theirs}`,
      body: { lastName: 'Kamau' },
    });
    expect(foreign.statusCode).toBe(404);
    // createPartner's token is the only event of each organization.
    expect((await eventsOf(t, partner.organizationId)).map((e) => e.event)).toEqual(['AUTH.CREATED']);
    expect((await eventsOf(t, other.organizationId)).map((e) => e.event)).toEqual(['AUTH.CREATED']);
  });

  it('AUTH.CREATED at token issue and AUTH.DELETED at revoke: ids and expiry, never the token', async () => {
    const partner = await createPartner(t);
    const issued = await t.app.inject({
      method: 'POST',
      url: '/v1/oauth/token',
      payload: { clientId: partner.clientId, clientSecret: partner.clientSecret },
    });
    expect(issued.statusCode).toBe(200);
    const token = issued.json();
    const created = await dataOf(t, partner.organizationId, 'AUTH.CREATED');
    expect(created).toHaveLength(2);
    expect(created).toContainEqual({
      clientId: partner.clientId,
      tokenId: token.tokenId,
      scope: ['READ', 'WRITE'],
      expiresAt: token.createdAt + token.expiresIn,
    });
    for (const data of created) expect(JSON.stringify(data)).not.toContain(token.token.split('.')[1]);

    const revoked = await signedInject(
      t.app,
      { ...partner, token: token.token },
      {
        method: 'POST',
        url: '/v1/oauth/revoke',
      },
    );
    expect(revoked.statusCode).toBe(200);
    const deleted = await dataOf(t, partner.organizationId, 'AUTH.DELETED');
    expect(deleted).toEqual([
      {
        clientId: partner.clientId,
        tokenId: token.tokenId,
        expiresAt: token.createdAt + token.expiresIn,
        revokedAt: expect.any(Number),
      },
    ]);
    expect(JSON.stringify(deleted)).not.toContain(token.token.split('.')[1]);
  });

  /** A buy submitted through USSD; 1002 is an amount the sandbox simulator never settles. */
  async function submitBuy(partner: Partner, customerId: string, symbol: string, amount = '1002') {
    const submitted = await ussdClient(t, partner).walk(customerId, [
      '1',
      '8',
      symbol,
      '1',
      '1',
      amount,
      '1',
    ]);
    expect(submitted.currentState, submitted.ussdText).toBe('BUY_SUBMITTED');
    const orderId = refOf(submitted);
    const [created] = await dataOf(t, partner.organizationId, 'TRANSACTION.CREATED');
    return { orderId, transactionId: (created as { transactionId: string }).transactionId };
  }

  const settle = (transactionId: string, status: 'SUCCESS' | 'FAILED', reason?: string) =>
    adminInject(t, 'POST', `/admin/transactions/${transactionId}/settle`, { status, reason });

  it('a buy: REQUEST.CREATED and TRANSACTION.CREATED, then PAID and EXECUTED with the settled payment', async () => {
    const partner = await createPartner(t);
    const customerId = await insertCustomer(t, partner, { msisdn: '254712000002' });
    const { orderId, transactionId } = await submitBuy(partner, customerId, FIXTURES.buy.symbol);
    const order = {
      orderId,
      customerId,
      stockId: stockIds.buy,
      side: 'BUY',
      amount: '1002.00',
      currency: 'KES',
      createdAt: date,
      updatedAt: date,
    };
    expect(await dataOf(t, partner.organizationId, 'REQUEST.CREATED')).toEqual([
      { ...order, status: 'PENDING_PAYMENT', quantity: null, price: FIXTURES.buy.price },
    ]);
    const payment = {
      transactionId,
      orderId,
      type: 'INCOMING',
      amount: '1002.00',
      currency: 'KES',
      provider: 'MPESA',
      createdAt: date,
      updatedAt: date,
    };
    expect(await dataOf(t, partner.organizationId, 'TRANSACTION.CREATED')).toEqual([
      { ...payment, status: 'PENDING', failureReason: null },
    ]);

    expect((await settle(transactionId, 'SUCCESS')).statusCode).toBe(200);
    expect(await dataOf(t, partner.organizationId, 'TRANSACTION.UPDATED')).toEqual([
      { ...payment, status: 'SUCCESS', failureReason: null },
    ]);
    // 1002 / 25 = 40.08 → 40 whole units at 25.0000 (lib/money.ts, unitsFor).
    const updates = await dataOf(t, partner.organizationId, 'REQUEST.UPDATED');
    expect(updates).toHaveLength(2);
    expect(updates).toContainEqual({ ...order, status: 'PAID', quantity: null, price: FIXTURES.buy.price });
    expect(updates).toContainEqual({
      ...order,
      status: 'EXECUTED',
      quantity: expect.stringMatching(/^40(\.\d+)?$/),
      price: FIXTURES.buy.price,
    });
    // The events never carry the customer's number.
    expect(JSON.stringify(await eventsOf(t, partner.organizationId))).not.toContain('254712000002');
  });

  it('a failed collection: TRANSACTION.UPDATED with the reason and REQUEST.UPDATED FAILED', async () => {
    const partner = await createPartner(t);
    const customerId = await insertCustomer(t, partner, { msisdn: '254712000003' });
    const { orderId, transactionId } = await submitBuy(partner, customerId, FIXTURES.buy.symbol);
    expect((await settle(transactionId, 'FAILED', 'insufficient funds')).statusCode).toBe(200);
    expect(await dataOf(t, partner.organizationId, 'TRANSACTION.UPDATED')).toEqual([
      expect.objectContaining({ transactionId, status: 'FAILED', failureReason: 'insufficient funds' }),
    ]);
    expect(await dataOf(t, partner.organizationId, 'REQUEST.UPDATED')).toEqual([
      expect.objectContaining({ orderId, status: 'FAILED' }),
    ]);
  });

  /** PORTFOLIO → REQUESTS → REQUEST_DETAILS → CANCEL_REQUEST_CONFIRMATION → Yes, cancel. */
  async function cancelNewest(partner: Partner, customerId: string) {
    const client = ussdClient(t, partner);
    let data: UssdData = await client.walk(customerId, ['2', '1', '1', '1']);
    expect(data.currentState).toBe('CANCEL_REQUEST_CONFIRMATION');
    data = (await client.press(data.sessionId, '1')).json().data;
    return data;
  }

  it('a cancel: REQUEST.UPDATED CANCELLED and the pending collection TRANSACTION.UPDATED CANCELLED', async () => {
    const partner = await createPartner(t);
    const customerId = await insertCustomer(t, partner, { msisdn: '254712000004' });
    const { orderId, transactionId } = await submitBuy(partner, customerId, FIXTURES.cancel.symbol);
    await cancelNewest(partner, customerId);
    expect(await dataOf(t, partner.organizationId, 'REQUEST.UPDATED')).toEqual([
      expect.objectContaining({ orderId, status: 'CANCELLED' }),
    ]);
    expect(await dataOf(t, partner.organizationId, 'TRANSACTION.UPDATED')).toEqual([
      expect.objectContaining({ transactionId, status: 'CANCELLED', failureReason: null }),
    ]);

    // Paid anyway after the cancel: the collection is marked, and the refund is a new transaction.
    expect((await settle(transactionId, 'SUCCESS')).statusCode).toBe(200);
    const updated = await dataOf(t, partner.organizationId, 'TRANSACTION.UPDATED');
    expect(updated).toHaveLength(2);
    expect(updated).toContainEqual(
      expect.objectContaining({
        transactionId,
        status: 'CANCELLED',
        failureReason: 'paid after the order was cancelled; refunded',
      }),
    );
    const created = await dataOf(t, partner.organizationId, 'TRANSACTION.CREATED');
    expect(created).toHaveLength(2);
    expect(created).toContainEqual(
      expect.objectContaining({ orderId, type: 'OUTGOING', status: 'PENDING', amount: '1002.00' }),
    );
  });

  it('a sell: REQUEST.CREATED EXECUTED with units and price, and the payout TRANSACTION.CREATED', async () => {
    const partner = await createPartner(t);
    const customerId = await insertCustomer(t, partner, { msisdn: '254712000005' });
    await insertHolding(t, partner, customerId, stockIds.sell, '10.0000');
    const submitted = await ussdClient(t, partner).walk(customerId, ['1', '8', 'ZZSELL', '1', '2', '3', '1']);
    expect(submitted.currentState, submitted.ussdText).toBe('SELL_SUBMITTED');
    const orderId = refOf(submitted);
    expect(await dataOf(t, partner.organizationId, 'REQUEST.CREATED')).toEqual([
      {
        orderId,
        customerId,
        stockId: stockIds.sell,
        side: 'SELL',
        status: 'EXECUTED',
        amount: '120.00',
        currency: 'KES',
        quantity: '3.0000',
        price: FIXTURES.sell.price,
        createdAt: date,
        updatedAt: date,
      },
    ]);
    expect(await dataOf(t, partner.organizationId, 'TRANSACTION.CREATED')).toEqual([
      expect.objectContaining({ orderId, type: 'OUTGOING', status: 'PENDING', amount: '120.00' }),
    ]);
  });

  it('a move that fails after its writes rolls its events back with it', async () => {
    const partner = await createPartner(t);
    const customerId = await insertCustomer(t, partner, { msisdn: '254712000006' });
    const client = ussdClient(t, partner);
    const confirm = await client.walk(customerId, ['1', '8', FIXTURES.buy.symbol, '1', '1', '1002']);
    expect(confirm.currentState).toBe('BUY_CONFIRM');
    t.ctx.faultInjector = (point) => {
      if (point === 'ussd.process.effects') throw new Error('injected failure after the order was written');
    };
    const failed = await client.press(confirm.sessionId, '1');
    expect(failed.json().data.currentState).toBe('ERROR');
    expect((await eventsOf(t, partner.organizationId)).map((e) => e.event)).toEqual(['AUTH.CREATED']);

    // The same for a service call whose transaction throws after the order and payment are written.
    await insertHolding(t, partner, customerId, stockIds.sell, '5.0000');
    await expect(
      t.ctx.database.db.transaction(async (tx) => {
        await placeSell(
          tx,
          {
            organizationId: partner.organizationId,
            customerId,
            msisdn: '254712000006',
            stockId: stockIds.sell,
            quantity: '1',
          },
          t.ctx,
        );
        throw new Error('rolled back after the writes');
      }),
    ).rejects.toThrow('rolled back');
    expect((await eventsOf(t, partner.organizationId)).map((e) => e.event)).toEqual(['AUTH.CREATED']);
  });
});
