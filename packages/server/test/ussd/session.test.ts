import { randomUUID } from 'node:crypto';
import { createId } from '@partner-api/contract';
import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { createPartner, signedInject } from '@partner-api/testkit/partner.ts';
import { eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { ussdSessions } from '../../src/db/schema.ts';
import { ensureCatalog, insertCustomer, type UssdData, ussdClient } from './support.ts';

describeStores('POST /v1/ussd/session on %s', (store) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp(store);
    await ensureCatalog(t);
  });
  afterAll(() => t.close());
  afterEach(() => {
    t.ctx.faultInjector = undefined;
  });

  it('opens a session on HOME: 201, Success, the spec shapes', async () => {
    const partner = await createPartner(t, { name: `Acme Invest ${randomUUID().slice(0, 4)}` });
    const customerId = await insertCustomer(t, partner);
    const before = Date.now();
    const res = await ussdClient(t, partner).open(customerId);
    expect(res.statusCode, res.body).toBe(201);
    const { message, data } = res.json() as { message: string; data: UssdData };
    expect(message).toBe('Success');
    expect(data.sessionId).toMatch(/^ussd_[a-f0-9]{32}$/);
    expect(data.currentState).toBe('HOME');
    expect(data.menu).toEqual({
      state: 'HOME',
      text: expect.stringContaining('Acme Invest'),
      options: [
        { key: '1', label: 'Stocks', nextState: 'STOCKS' },
        { key: '2', label: 'My Portfolio', nextState: 'PORTFOLIO' },
      ],
      isEndState: false,
    });
    expect(data.ussdText).toBe(`${data.menu.text}\n\n1. Stocks\n2. My Portfolio`);
    const ttl = new Date(data.expiresAt).getTime() - before;
    expect(ttl).toBeGreaterThanOrEqual(179_000);
    expect(ttl).toBeLessThanOrEqual(181_000);

    const [row] = await t.ctx.database.db
      .select()
      .from(ussdSessions)
      .where(eq(ussdSessions.id, data.sessionId));
    expect(row).toMatchObject({
      organizationId: partner.organizationId,
      customerId,
      state: 'HOME',
      isActive: true,
    });
  });

  it('404 CUSTOMER_NOT_FOUND for an unknown, a foreign or a deactivated customer', async () => {
    const partner = await createPartner(t);
    const other = await createPartner(t);
    const foreign = await insertCustomer(t, other);
    const inactive = await insertCustomer(t, partner, { isActive: false });
    for (const customerId of [createId(), foreign, inactive]) {
      const res = await ussdClient(t, partner).open(customerId);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({
        error: 'CUSTOMER_NOT_FOUND',
        message: 'Customer not found or does not belong to this organization',
      });
    }
  });

  it('400 validation: customerId must be a CUID; unknown fields are named', async () => {
    const partner = await createPartner(t);
    const client = ussdClient(t, partner);
    const bad = await client.open('not-a-cuid');
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toEqual({
      error: 'Validation failed',
      details: [{ field: 'customerId', message: 'Invalid customer ID format' }],
    });
    const missing = await signedInject(t.app, partner, { method: 'POST', url: '/v1/ussd/session', body: {} });
    expect(missing.json()).toEqual({
      error: 'Validation failed',
      details: [{ field: 'customerId', message: 'Invalid customer ID format' }],
    });
    const extra = await signedInject(t.app, partner, {
      method: 'POST',
      url: '/v1/ussd/session',
      body: { customerId: createId(), phone: '254700000000' },
    });
    expect(extra.statusCode).toBe(400);
    expect(extra.json().details).toEqual([{ field: 'phone', message: 'Unknown field' }]);
  });

  it('400 without X-Idempotency-Key; 401 without a token', async () => {
    const partner = await createPartner(t);
    const customerId = await insertCustomer(t, partner);
    const noKey = await signedInject(t.app, partner, {
      method: 'POST',
      url: '/v1/ussd/session',
      body: { customerId },
      idempotencyKey: false,
    });
    expect(noKey.statusCode).toBe(400);
    expect(noKey.json()).toEqual({
      error: 'Bad Request',
      message: 'X-Idempotency-Key header is required for this request',
    });
    const anonymous = await t.app.inject({
      method: 'POST',
      url: '/v1/ussd/session',
      headers: { 'content-type': 'application/json', 'x-idempotency-key': randomUUID() },
      payload: { customerId },
    });
    expect(anonymous.statusCode).toBe(401);
  });

  it('replays the stored response for a repeated idempotency key (201 and 404 alike)', async () => {
    const partner = await createPartner(t);
    const customerId = await insertCustomer(t, partner);
    const client = ussdClient(t, partner);
    const key = randomUUID();
    const first = await client.open(customerId, key);
    const again = await client.open(customerId, key);
    expect(again.statusCode).toBe(201);
    expect(again.body).toBe(first.body);
    expect(again.headers['idempotent-replayed']).toBe('true');
    const sessions = await t.ctx.database.db
      .select()
      .from(ussdSessions)
      .where(eq(ussdSessions.customerId, customerId));
    expect(sessions).toHaveLength(1);

    const unknownKey = randomUUID();
    const missing = createId();
    expect((await client.open(missing, unknownKey)).statusCode).toBe(404);
    const replayed = await client.open(missing, unknownKey);
    expect(replayed.statusCode).toBe(404);
    expect(replayed.headers['idempotent-replayed']).toBe('true');
  });

  it('an internal failure while building the menu opens the session in ERROR (200); 0 goes HOME', async () => {
    const partner = await createPartner(t);
    const customerId = await insertCustomer(t, partner);
    t.ctx.faultInjector = (point) => {
      if (point === 'ussd.session.menu') throw new Error('injected menu failure');
    };
    const client = ussdClient(t, partner);
    const key = randomUUID();
    const res = await client.open(customerId, key);
    t.ctx.faultInjector = undefined;
    expect(res.statusCode).toBe(200);
    // The ERROR answer is stored with the session: the same key replays it and opens nothing more.
    const replay = await client.open(customerId, key);
    expect([replay.statusCode, replay.body, replay.headers['idempotent-replayed']]).toEqual([
      200,
      res.body,
      'true',
    ]);
    const { message, data } = res.json() as { message: string; data: UssdData };
    expect(message).toBe('USSD session created with error state');
    expect(data.currentState).toBe('ERROR');
    expect(data.menu).toEqual({
      state: 'ERROR',
      text: 'Something went wrong.',
      options: [{ key: '0', label: 'Home', nextState: 'HOME' }],
      isEndState: false,
    });
    expect(data.ussdText).toBe('Something went wrong.\n\n0. Home');

    const home = await client.press(data.sessionId, '0');
    expect(home.statusCode).toBe(200);
    expect(home.json()).toMatchObject({
      message: 'USSD request processed successfully',
      data: { sessionId: data.sessionId, currentState: 'HOME' },
    });
  });

  it('counts moves by resulting state in /metrics', async () => {
    const partner = await createPartner(t);
    const customerId = await insertCustomer(t, partner);
    const homeMoves = async () =>
      (await t.ctx.metrics.ussdMoves.get()).values.find((v) => v.labels.state === 'HOME')?.value ?? 0;
    const before = await homeMoves();
    const res = await ussdClient(t, partner).open(customerId);
    expect(res.statusCode, res.body).toBe(201);
    expect((await homeMoves()) - before).toBe(1);
  });
});
