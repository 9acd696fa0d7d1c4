/**
 * The investments API's accounts (docs/investments.md, Accounts): POST /v1/accounts, the list, get,
 * and the account opened by a customer's first order, with its ACCOUNT.CREATED. Every response is
 * checked against the OpenAPI document by the test app (testkit, installContractCheck).
 */
import { createHash, randomUUID } from 'node:crypto';
import { createId, ErrorMessage } from '@partner-api/contract';
import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { CUSTOMER_NOT_FOUND_BODY, NOT_FOUND_BODY } from '@partner-api/testkit/helpers.ts';
import { createPartner, type Partner, payloadOf, signedInject } from '@partner-api/testkit/partner.ts';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rows } from '../../src/db/query.ts';
import { startPayments } from '../../src/services/payments/pipeline/start.ts';
import type { PaymentWorker } from '../../src/services/payments/pipeline/worker.ts';
import { insertCustomer, orderRow, refOf, ussdClient, waitFor } from '../ussd/support.ts';
import { accountEvents, ownInstrument } from './accounts-support.ts';

const ACCOUNT_NOT_FOUND = { error: 'Not found', message: 'Account not found' };
const PREVIEW = { INVESTMENTS_PREVIEW: 'true', WEBHOOKS_PREVIEW: 'true', SANDBOX_SETTLE_MS: '200' };

describeStores('accounts of the investments API on %s', (store) => {
  let t: TestApp;
  let partner: Partner;
  beforeAll(async () => {
    t = await buildTestApp(store, PREVIEW);
    partner = await createPartner(t);
  });
  afterAll(() => t.close());

  const open = (customerId: unknown, key: string = randomUUID(), as: Partner = partner) =>
    signedInject(t.app, as, {
      method: 'POST',
      url: '/v1/accounts',
      body: { customerId },
      idempotencyKey: key,
    });
  const get = (url: string, as: Partner = partner) => signedInject(t.app, as, { method: 'GET', url });

  describe('POST /v1/accounts', () => {
    it('opens the account (201) with ACCOUNT.CREATED; the replay answers the same bytes; a new key gets it with 200', async () => {
      const customerId = await insertCustomer(t, partner);
      const key = randomUUID();
      const first = await open(customerId, key);
      expect(first.statusCode, first.body).toBe(201);
      const body = first.json();
      expect(body).toEqual({
        message: 'Account created successfully',
        data: {
          id: expect.stringMatching(/^c[a-z0-9]{24}$/),
          organizationId: partner.organizationId,
          customerId,
          status: 'ACTIVE',
          investmentType: null,
          currency: 'KES',
          language: null,
          createdAt: expect.any(String),
          updatedAt: expect.any(String),
        },
      });
      const replay = await open(customerId, key);
      expect([replay.statusCode, replay.body, replay.headers['idempotent-replayed']]).toEqual([
        201,
        first.body,
        'true',
      ]);
      const again = await open(customerId);
      expect(again.statusCode).toBe(200);
      expect(again.json()).toEqual({ message: 'Account already exists', data: body.data });
      const events = (await accountEvents(t, partner.organizationId)).filter(
        (e) => e.accountId === body.data.id,
      );
      expect(events.map((e) => e.data)).toEqual([{ accountId: body.data.id, ...body.data }]);
    });

    it('an unknown customer and another organization’s customer: the same 404', async () => {
      const other = await createPartner(t);
      const theirs = await insertCustomer(t, other);
      const unknown = await open(createId());
      const foreign = await open(theirs);
      expect([unknown.statusCode, unknown.json()]).toEqual([404, CUSTOMER_NOT_FOUND_BODY]);
      expect([foreign.statusCode, foreign.body]).toEqual([404, unknown.body]);
      expect(
        await rows(t.ctx.database.db, sql`select id from accounts where customer_id = ${theirs}`),
      ).toEqual([]);
    });

    it('an inactive customer is refused with 409 and nothing is opened', async () => {
      const customerId = await insertCustomer(t, partner, { isActive: false });
      const res = await open(customerId);
      expect([res.statusCode, res.json()]).toEqual([
        409,
        { error: 'Conflict', message: 'Customer is not active' },
      ]);
      expect(
        await rows(t.ctx.database.db, sql`select id from accounts where customer_id = ${customerId}`),
      ).toEqual([]);
    });

    it('validation: a malformed customerId, an unknown field, a missing key', async () => {
      const bad = await open('nope');
      expect([bad.statusCode, bad.json()]).toEqual([
        400,
        {
          error: 'Validation failed',
          details: [{ field: 'customerId', message: 'Invalid customer ID format' }],
        },
      ]);
      const extra = await signedInject(t.app, partner, {
        method: 'POST',
        url: '/v1/accounts',
        body: { customerId: createId(), status: 'ACTIVE' },
        idempotencyKey: randomUUID(),
      });
      expect(extra.json()).toEqual({
        error: 'Validation failed',
        details: [{ field: 'status', message: 'Unknown field' }],
      });
      const keyless = await signedInject(t.app, partner, {
        method: 'POST',
        url: '/v1/accounts',
        body: { customerId: createId() },
        idempotencyKey: false,
      });
      expect([keyless.statusCode, keyless.json()]).toEqual([
        400,
        { error: 'Bad Request', message: ErrorMessage.idempotencyKeyRequired },
      ]);
    });

    it('a key in flight is a 409; a key reused with another body a 422', async () => {
      const customerId = await insertCustomer(t, partner);
      const key = randomUUID();
      // Another request with the same body holds the key (its lock not yet expired).
      const fingerprint = `POST /v1/accounts ${createHash('sha256')
        .update(payloadOf({ customerId }) ?? '')
        .digest('hex')}`;
      await t.ctx.database.db.execute(sql`insert into idempotency_keys
        (credential_id, key, fingerprint, locked_until, expires_at)
        values (${partner.credentialId}, ${key}, ${fingerprint},
          now() + interval '60 seconds', now() + interval '1 hour')`);
      const held = await open(customerId, key);
      expect([held.statusCode, held.json()]).toEqual([
        409,
        { error: 'Conflict', message: ErrorMessage.idempotencyInProgress },
      ]);
      const used = randomUUID();
      expect((await open(customerId, used)).statusCode).toBe(201);
      const mismatch = await open(await insertCustomer(t, partner), used);
      expect([mismatch.statusCode, mismatch.json()]).toEqual([
        422,
        { error: 'Unprocessable Entity', message: ErrorMessage.idempotencyPayloadMismatch },
      ]);
    });
  });

  describe('GET /v1/accounts and /v1/accounts/{accountId}', () => {
    it('lists newest first with the pagination object, filtered by customerId and status', async () => {
      const mine = await createPartner(t);
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        const res = await open(await insertCustomer(t, mine), randomUUID(), mine);
        ids.push(res.json().data.id);
      }
      const page = await get('/v1/accounts?limit=2', mine);
      expect(page.statusCode, page.body).toBe(200);
      expect(page.json().data.map((a: { id: string }) => a.id)).toEqual([ids[2], ids[1]]);
      expect(page.json().pagination).toEqual({ page: 1, limit: 2, total: 3, totalPages: 2 });
      const second = await get('/v1/accounts?limit=2&page=2', mine);
      expect(second.json().data.map((a: { id: string }) => a.id)).toEqual([ids[0]]);
      const past = await get('/v1/accounts?page=9', mine);
      expect(past.json()).toEqual({ data: [], pagination: { page: 9, limit: 10, total: 3, totalPages: 1 } });
      const one = (await get(`/v1/accounts/${ids[1]}`, mine)).json().data;
      const byCustomer = await get(`/v1/accounts?customerId=${one.customerId}&status=ACTIVE`, mine);
      expect(byCustomer.json()).toEqual({
        data: [one],
        pagination: { page: 1, limit: 10, total: 1, totalPages: 1 },
      });
      const closed = await get('/v1/accounts?status=CLOSED', mine);
      expect(closed.json().pagination.total).toBe(0);
      // Another organization lists none of them, even by their customer.
      const foreign = await get(`/v1/accounts?customerId=${one.customerId}`);
      expect(foreign.json().data).toEqual([]);
    });

    it('list validation: an unknown status, a limit above 100, an unknown parameter', async () => {
      const status = await get('/v1/accounts?status=OPEN');
      expect([status.statusCode, status.json()]).toEqual([
        400,
        {
          error: 'Validation failed',
          details: [{ field: 'status', message: 'status must be one of ACTIVE, CLOSED' }],
        },
      ]);
      expect((await get('/v1/accounts?limit=101')).json().details).toEqual([
        { field: 'limit', message: 'limit must be at most 100' },
      ]);
      expect((await get('/v1/accounts?customer=x')).json().details).toEqual([
        { field: 'customer', message: 'Unknown field' },
      ]);
      expect((await get('/v1/accounts?customerId=x')).json().details).toEqual([
        { field: 'customerId', message: 'Invalid customer ID format' },
      ]);
    });

    it('get: the account; unknown and another organization’s: the same 404; malformed: 400', async () => {
      const created = (await open(await insertCustomer(t, partner))).json().data;
      const res = await get(`/v1/accounts/${created.id}`);
      expect([res.statusCode, res.json()]).toEqual([200, { data: created }]);
      const other = await createPartner(t);
      const foreign = await get(`/v1/accounts/${created.id}`, other);
      const unknown = await get(`/v1/accounts/${createId()}`);
      expect([foreign.statusCode, foreign.json()]).toEqual([404, ACCOUNT_NOT_FOUND]);
      expect(unknown.body).toBe(foreign.body);
      const bad = await get('/v1/accounts/nope');
      expect([bad.statusCode, bad.json()]).toEqual([
        400,
        {
          error: 'Validation failed',
          details: [{ field: 'accountId', message: 'Invalid account ID format' }],
        },
      ]);
    });
  });
});

/** A buy through USSD, paid by the simulator: the customer's first order opens the account. */
describeStores('an account opened by a first order on %s', (store) => {
  for (const investments of [true, false]) {
    describe(`INVESTMENTS_PREVIEW ${investments ? 'on' : 'off'}`, () => {
      let t: TestApp;
      let simulator: PaymentWorker;
      beforeAll(async () => {
        t = await buildTestApp(store, { ...PREVIEW, INVESTMENTS_PREVIEW: String(investments) });
        simulator = startPayments(t.ctx, t.app.log);
      });
      afterAll(async () => {
        await simulator.stop();
        await t.close();
      });

      it(`a USSD buy opens the account once${investments ? ', with ACCOUNT.CREATED, and its asset is pending settlement' : ', and no ACCOUNT.CREATED is written'}`, async () => {
        const partner = await createPartner(t);
        const customerId = await insertCustomer(t, partner);
        const instrument = await ownInstrument(t);
        const client = ussdClient(t, partner);
        const buy = async () => {
          const bought = await client.walk(customerId, ['1', '8', instrument.symbol, '1', '1', '100', '1']);
          const orderId = refOf(bought);
          await waitFor(async () => ((await orderRow(t, orderId))?.status === 'EXECUTED' ? true : undefined));
        };
        await buy();
        await buy();
        const accounts = await rows<{ id: string; status: string }>(
          t.ctx.database.db,
          sql`select id, status from accounts where customer_id = ${customerId}`,
        );
        expect(accounts).toEqual([{ id: expect.any(String), status: 'ACTIVE' }]);
        const events = await accountEvents(t, partner.organizationId);
        if (!investments) {
          expect(events).toEqual([]);
          return;
        }
        expect(events.map((e) => e.accountId)).toEqual([accounts[0]!.id]);
        expect(events[0]!.data).toMatchObject({ accountId: accounts[0]!.id, customerId, status: 'ACTIVE' });
        // The API finds it, and POST answers it as existing.
        const opened = await signedInject(t.app, partner, {
          method: 'POST',
          url: '/v1/accounts',
          body: { customerId },
          idempotencyKey: randomUUID(),
        });
        expect([opened.statusCode, opened.json().data.id]).toEqual([200, accounts[0]!.id]);
        const assets = await signedInject(t.app, partner, {
          method: 'GET',
          url: `/v1/accounts/${accounts[0]!.id}/assets`,
        });
        expect(assets.statusCode, assets.body).toBe(200);
        // 2 × KES 100 at 20.0000: 10 units, all pending settlement (T+3).
        expect(assets.json().data).toEqual([
          expect.objectContaining({
            instrumentId: instrument.id,
            symbol: instrument.symbol,
            units: '10.0000',
            available: '0.0000',
            locked: '0.0000',
            pendingSettlement: '10.0000',
            averageCost: '20.0000',
            cost: '200.00',
            price: '20.0000',
            value: '200.00',
            unrealisedGain: '0.00',
          }),
        ]);
      });
    });
  }

  it('with the preview off, the accounts paths are unknown routes', async () => {
    const t = await buildTestApp(store, {});
    try {
      const partner = await createPartner(t);
      const res = await signedInject(t.app, partner, { method: 'GET', url: '/v1/accounts' });
      expect([res.statusCode, res.body]).toEqual([404, NOT_FOUND_BODY]);
    } finally {
      await t.close();
    }
  });
});
