import { randomUUID } from 'node:crypto';
import { WEBHOOK_EVENTS, type WebhookEnvelope } from '@partner-api/contract';
import { describeStores } from '@partner-api/testkit/app.ts';
import { adminInject } from '@partner-api/testkit/helpers.ts';
import { createPartner, newSigningKey, signedInject } from '@partner-api/testkit/partner.ts';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { PartnerClient } from '../../../sdk/src/index.ts';
import { settleDueExecutions } from '../../src/services/orders/life.ts';
import { ensureCatalog, FIXTURES, refOf, ussdClient, waitFor } from '../ussd/support.ts';
import { type DeliveryApp, type PublishedKey, startDeliveryApp, verifyBoth } from './delivery-support.ts';

/**
 * The webhooks' acceptance, end to end: every event type, caused by the API call a partner makes (not
 * emitted by hand), reaches a real HTTPS receiver through the delivery worker, and each delivery
 * verifies three ways: the SDK's `webhooks.verify` (fetching the published key), the contract's
 * recipe, and the independent `http-message-signatures` library.
 */
describeStores('every event type, caused through the API, delivered and verified on %s', (store) => {
  let d: DeliveryApp;
  beforeAll(async () => {
    d = await startDeliveryApp(store, 'webhook_acceptance', {
      WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true',
      // ACCOUNT.CREATED: the customer's first order (the USSD buy below) opens their account.
      INVESTMENTS_PREVIEW: 'true',
      WEBHOOK_WORKER_INTERVAL_MS: '100',
    });
    await ensureCatalog(d.t);
  }, 60_000);
  afterAll(() => d?.close());

  it('every event type arrives, each signed and verified, with the investments resources', async () => {
    const { t } = d;
    const r = await d.receiver();
    const partner = await createPartner(t);
    const ok = async (status: number, promise: ReturnType<typeof signedInject>) => {
      const res = await promise;
      expect(res.statusCode, res.body).toBe(status);
      return res.json();
    };

    // WEBHOOK.CREATED: the connection test every webhook gets.
    await ok(
      201,
      signedInject(t.app, partner, {
        method: 'POST',
        url: '/v1/webhooks',
        body: { url: r.url, subscriptions: ['ALL'] },
      }),
    );
    // INSTRUMENT.CREATED, then INSTRUMENT.UPDATED: the operator lists an instrument, then edits it.
    const symbol = `ZA${randomUUID().slice(0, 6).toUpperCase()}`;
    for (const price of ['12.5000', '13.0000']) {
      const listed = await adminInject(t, 'POST', '/admin/stocks', [
        { symbol, name: 'Acceptance Holdings', price, currency: 'KES' },
      ]);
      expect(listed.statusCode, listed.body).toBe(200);
    }
    // AUTH.CREATED, then AUTH.DELETED for the same token.
    const issued = await t.app.inject({
      method: 'POST',
      url: '/v1/oauth/token',
      payload: { clientId: partner.clientId, clientSecret: partner.clientSecret },
    });
    expect(issued.statusCode).toBe(200);
    await ok(
      200,
      signedInject(
        t.app,
        { ...partner, token: issued.json().token },
        { method: 'POST', url: '/v1/oauth/revoke' },
      ),
    );
    // CUSTOMER.CREATED and CUSTOMER.UPDATED.
    const customer = await ok(
      201,
      signedInject(t.app, partner, {
        method: 'POST',
        url: '/v1/customers',
        body: { firstName: 'Wanjiru', lastName: 'Mutua', msisdn: '254712009001' },
      }),
    );
    const customerId = customer.data.id as string;
    await ok(
      200,
      signedInject(t.app, partner, {
        method: 'PATCH',
        url: `/v1/customers/${customerId}`,
        body: { lastName: 'Njoroge' },
      }),
    );
    // REQUEST.CREATED and TRANSACTION.CREATED: a buy through USSD (1002: the simulator never settles it).
    const submitted = await ussdClient(t, partner).walk(customerId, [
      '1',
      '8',
      FIXTURES.buy.symbol,
      '1',
      '1',
      '1002',
      '1',
    ]);
    expect(submitted.currentState, submitted.ussdText).toBe('BUY_SUBMITTED');
    const orderId = refOf(submitted);
    // TRANSACTION.UPDATED, REQUEST.UPDATED and REPORT.CREATED: the payment settled by the operator.
    const transactionId = await waitFor(async () => {
      const found = r.envelopes().find((e: WebhookEnvelope) => e.event === 'TRANSACTION.CREATED');
      return found ? (found.data.transactionId as string) : undefined;
    }, 30_000);
    const settled = await adminInject(t, 'POST', `/admin/transactions/${transactionId}/settle`, {
      status: 'SUCCESS',
    });
    expect(settled.statusCode, settled.body).toBe(200);
    // ASSET.CREATED and PORTFOLIO.UPDATED came with the execution; ASSET.UPDATED when its units settle.
    await waitFor(
      async () => (r.envelopes().some((e) => e.event === 'ASSET.CREATED') ? true : undefined),
      30_000,
    );
    expect(
      await settleDueExecutions(t.ctx.database.db, new Date(Date.now() + 8 * 86_400_000), t.ctx.events),
    ).toBeGreaterThan(0);
    // ACCOUNT.UPDATED: the customer's language, set through their account.
    const [opened] = (
      await ok(
        200,
        signedInject(t.app, partner, { method: 'GET', url: `/v1/accounts?customerId=${customerId}` }),
      )
    ).data;
    await ok(
      200,
      signedInject(t.app, partner, {
        method: 'PATCH',
        url: `/v1/accounts/${opened.id}`,
        body: { language: 'sw' },
      }),
    );
    // WEBHOOK.UPDATED.
    await ok(
      200,
      signedInject(t.app, partner, { method: 'PUT', url: '/v1/webhooks', body: { subscriptions: ['ALL'] } }),
    );

    const types = () => new Set(r.envelopes().map((e: WebhookEnvelope) => e.event));
    await waitFor(
      async () => (types().size === WEBHOOK_EVENTS.length ? true : undefined),
      60_000,
      'every event type',
    );
    expect([...types()].sort()).toEqual([...WEBHOOK_EVENTS].sort());
    const byEvent = (name: string) => r.envelopes().filter((e: WebhookEnvelope) => e.event === name);
    expect(byEvent('CUSTOMER.CREATED').map((e) => e.data.id)).toEqual([customerId]);
    expect(byEvent('REQUEST.UPDATED').map((e) => [e.data.orderId, e.data.status])).toEqual(
      expect.arrayContaining([
        [orderId, 'PAID'],
        [orderId, 'EXECUTED'],
      ]),
    );
    expect(byEvent('AUTH.DELETED').map((e) => e.data.tokenId)).toEqual([issued.json().tokenId]);
    // The investments events carry their resource as the API answers it (docs/investments.md, Events).
    const executed = byEvent('REQUEST.UPDATED').find((e) => e.data.status === 'EXECUTED')!;
    const request = await ok(
      200,
      signedInject(t.app, partner, { method: 'GET', url: `/v1/requests/${orderId}` }),
    );
    // As the request was then: executed, its units not yet settled (they settled since).
    expect(executed.data).toMatchObject({
      ...request.data,
      execution: { ...request.data.execution, status: 'FILLED' },
      transactions: expect.any(Array),
    });
    expect(
      byEvent('INSTRUMENT.CREATED').map((e) => [
        e.data.symbol,
        (e.data.latestPrice as { value: string }).value,
      ]),
    ).toEqual([[symbol, '12.5000']]);
    expect(
      byEvent('INSTRUMENT.UPDATED').map((e) => [
        e.data.symbol,
        (e.data.latestPrice as { value: string }).value,
      ]),
    ).toEqual([[symbol, '13.0000']]);
    const [account] = (
      await ok(
        200,
        signedInject(t.app, partner, { method: 'GET', url: `/v1/accounts?customerId=${customerId}` }),
      )
    ).data;
    const assets = await ok(
      200,
      signedInject(t.app, partner, { method: 'GET', url: `/v1/accounts/${account.id}/assets` }),
    );
    const created = byEvent('ASSET.CREATED')[0]!;
    expect(created.data).toMatchObject({
      accountId: account.id,
      customerId,
      instrumentId: assets.data[0].instrumentId,
    });
    expect(created.data.pendingSettlement).toBe(assets.data[0].units);
    expect(byEvent('ASSET.UPDATED').at(-1)!.data).toEqual({
      accountId: account.id,
      customerId,
      ...assets.data[0],
    });
    expect(byEvent('ACCOUNT.UPDATED').map((e) => [e.data.accountId, e.data.language])).toEqual([
      [account.id, 'sw'],
    ]);
    expect(byEvent('PORTFOLIO.CREATED').map((e) => [e.data.accountId, e.data.value])).toEqual([
      [account.id, '0.00'],
    ]);
    expect(byEvent('PORTFOLIO.UPDATED').at(-1)!.data.positions).toEqual([
      expect.objectContaining({ instrumentId: assets.data[0].instrumentId, units: assets.data[0].units }),
    ]);
    // REPORT.CREATED: the executed buy's trade confirmation.
    expect(
      byEvent('REPORT.CREATED').map((e) => [e.data.type, (e.data.data as { orderId: string }).orderId]),
    ).toEqual([['TRADE_CONFIRMATION', orderId]]);

    // Each delivery verifies: the SDK (key fetched by id from the server), and two implementations.
    const key = (await t.app.inject({ method: 'GET', url: '/v1/webhooks/key' })).json() as PublishedKey;
    let keyFetches = 0;
    const sdk = new PartnerClient({
      baseUrl: 'http://localhost:8080',
      clientId: 'receiver',
      clientSecret: 'unused',
      ...(({ keyId, privateKey }) => ({ keyId, privateKey }))(newSigningKey()),
      maxRetries: 0,
      // The SDK's key lookup, answered by this app (inject), counted.
      fetch: async (input) => {
        keyFetches++;
        const res = await t.app.inject({ method: 'GET', url: new URL(String(input)).pathname });
        return new Response(res.body, {
          status: res.statusCode,
          headers: { 'content-type': 'application/json' },
        });
      },
    });
    for (const delivery of r.received) {
      const envelope = await sdk.webhooks.verify({
        method: 'POST',
        url: r.url,
        headers: delivery.headers,
        body: delivery.body,
      });
      expect(envelope).toEqual(JSON.parse(delivery.body));
      expect(await verifyBoth(delivery, r.url, key)).toEqual({ ours: true, independent: true });
    }
    expect(keyFetches).toBe(1);
  }, 120_000);
});
