import { randomUUID } from 'node:crypto';
import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { CUSTOMER_NOT_FOUND_BODY } from '@partner-api/testkit/helpers.ts';
import { createPartner, type Partner, signedInject } from '@partner-api/testkit/partner.ts';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { rows, run } from '../../src/db/query.ts';
import { createCustomerViaApi, invalid, NONEXISTENT_ID } from './helpers.ts';

const FULL = {
  msisdn: '254700000001',
  identificationNumber: 'P1234',
  identificationType: 'PASSPORT',
  referenceId: 'crm-1',
};

describeStores('PATCH /v1/customers/{id} on %s', (store) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp(store);
  });
  afterAll(() => t.close());

  const patch = (p: Partner, id: string, body: unknown, idempotencyKey?: string | false) =>
    signedInject(t.app, p, { method: 'PATCH', url: `/v1/customers/${id}`, body, idempotencyKey });
  const fetchCustomer = async (p: Partner, id: string) =>
    (await signedInject(t.app, p, { method: 'GET', url: `/v1/customers/${id}` })).json().data;

  it('changes only the fields sent and moves updatedAt', async () => {
    const p = await createPartner(t);
    const before = await createCustomerViaApi(t, p, FULL);
    const res = await patch(p, before.id, { lastName: '  Wanjiru ', isActive: false });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toEqual({
      message: 'Customer updated successfully',
      data: { ...before, lastName: 'Wanjiru', isActive: false, updatedAt: expect.any(String) },
    });
    expect(Date.parse(body.data.updatedAt)).toBeGreaterThan(Date.parse(before.updatedAt));
    expect(await fetchCustomer(p, before.id)).toEqual(body.data);
  });

  it('moves updatedAt forward even when the last write came from an instance whose clock runs ahead', async () => {
    const p = await createPartner(t);
    const before = await createCustomerViaApi(t, p);
    // What a write from a host an hour ahead leaves behind.
    await run(
      t.ctx.database.db,
      sql`update customers set updated_at = now() + interval '1 hour' where id = ${before.id}`,
    );
    const ahead = (await fetchCustomer(p, before.id)).updatedAt as string;
    const res = await patch(p, before.id, { lastName: 'Later' });
    expect(res.statusCode).toBe(200);
    expect(Date.parse(res.json().data.updatedAt)).toBeGreaterThan(Date.parse(ahead));
    expect(await fetchCustomer(p, before.id)).toEqual(res.json().data);
  });

  it('refuses a lone surrogate as a validation error naming the field, and changes nothing', async () => {
    const p = await createPartner(t);
    const before = await createCustomerViaApi(t, p, FULL);
    for (const [field, value] of [
      ['lastName', 'W\ud800'],
      ['referenceId', '\udc00ref'],
    ] as const) {
      const res = await patch(p, before.id, { [field]: value });
      expect(res.statusCode, field).toBe(400);
      expect(res.json()).toEqual(
        invalid(field, 'must be valid Unicode text (an unpaired surrogate was sent)'),
      );
    }
    expect(await fetchCustomer(p, before.id)).toEqual(before);
  });

  it('clears the nullable fields with null', async () => {
    const p = await createPartner(t);
    const before = await createCustomerViaApi(t, p, FULL);
    const cleared = { msisdn: null, identificationNumber: null, identificationType: null, referenceId: null };
    const res = await patch(p, before.id, cleared);
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ ...cleared, firstName: before.firstName });
  });

  it('an empty body is a no-op: 200 with the customer unchanged, updatedAt included', async () => {
    const p = await createPartner(t);
    const before = await createCustomerViaApi(t, p);
    const res = await patch(p, before.id, {});
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ message: 'Customer updated successfully', data: before });
  });

  it.each([
    ['firstName null', { firstName: null }, 'firstName', 'firstName cannot be null'],
    ['lastName null', { lastName: null }, 'lastName', 'lastName cannot be null'],
    ['lastName blank', { lastName: ' ' }, 'lastName', 'lastName must not be empty'],
    ['msisdn letters', { msisdn: 'phone' }, 'msisdn', 'msisdn must be 7 to 15 digits'],
    ['isActive null', { isActive: null }, 'isActive', 'isActive cannot be null'],
    [
      'identificationType unknown',
      { identificationType: 'VISA' },
      'identificationType',
      expect.stringContaining('one of'),
    ],
    ['an unknown field', { id: 'c123' }, 'id', 'Unknown field'],
  ])('refuses %s and changes nothing', async (_name, body, field, message) => {
    const p = await createPartner(t);
    const before = await createCustomerViaApi(t, p, FULL);
    const res = await patch(p, before.id, body);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual(invalid(field, message as string));
    expect(await fetchCustomer(p, before.id)).toEqual(before);
  });

  // The patch reads the row unlocked and writes it only if no other write committed since; here the
  // test's own transaction changes the row while the patch's write waits for it: the patch must run
  // again on the row as it is then, keep that change, and store the answer it sent.
  it.skipIf(store !== 'postgres')(
    'a patch that meets a concurrent write applies on top of it; its answer is the one stored',
    async () => {
      const p = await createPartner(t);
      const before = await createCustomerViaApi(t, p, FULL);
      const db = t.ctx.database.db;
      const waiting = async () =>
        (
          await rows(
            db,
            sql`select 1 from pg_stat_activity where wait_event_type = 'Lock' and query like '%with patched as%'`,
          )
        ).length > 0;
      const key = randomUUID();
      let patched: ReturnType<typeof patch> | undefined;
      await db.transaction(async (tx) => {
        await run(tx, sql`select 1 from customers where id = ${before.id} for update`);
        patched = patch(p, before.id, { lastName: 'Achieng' }, key);
        for (let i = 0; !(await waiting()); i++) {
          if (i > 200) throw new Error("the patch's write never waited for the row");
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        await run(tx, sql`update customers set first_name = 'Akinyi' where id = ${before.id}`);
      });
      const res = await patched!;
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data).toMatchObject({ firstName: 'Akinyi', lastName: 'Achieng' });
      expect(await fetchCustomer(p, before.id)).toEqual(res.json().data);
      const replay = await patch(p, before.id, { lastName: 'Achieng' }, key);
      expect([replay.statusCode, replay.body, replay.headers['idempotent-replayed']]).toEqual([
        200,
        res.body,
        'true',
      ]);
    },
  );

  it('404 for an unknown customer, stored with the key and replayed as 404', async () => {
    const p = await createPartner(t);
    const key = randomUUID();
    const first = await patch(p, NONEXISTENT_ID, { firstName: 'X' }, key);
    expect(first.statusCode).toBe(404);
    expect(first.json()).toEqual(CUSTOMER_NOT_FOUND_BODY);
    const again = await patch(p, NONEXISTENT_ID, { firstName: 'X' }, key);
    expect(again.statusCode).toBe(404);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toBe(first.body);
  });

  it('refuses a path id that is not a CUID with 400', async () => {
    const p = await createPartner(t);
    const res = await patch(p, 'abc', { firstName: 'X' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual(invalid('id', 'Invalid customer ID format'));
  });

  it('idempotency: replay, 422 for another body, 400 without a key; applied once', async () => {
    const p = await createPartner(t);
    const customer = await createCustomerViaApi(t, p);
    const key = randomUUID();
    const first = await patch(p, customer.id, { firstName: 'Zawadi' }, key);
    const replay = await patch(p, customer.id, { firstName: 'Zawadi' }, key);
    expect(replay.statusCode).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toBe(first.body);
    const reused = await patch(p, customer.id, { firstName: 'Other' }, key);
    expect(reused.statusCode).toBe(422);
    expect(reused.json()).toEqual({
      error: 'Unprocessable Entity',
      message: 'X-Idempotency-Key was already used with a different request payload',
    });
    const missing = await patch(p, customer.id, { firstName: 'Other' }, false);
    expect(missing.statusCode).toBe(400);
    expect(missing.json()).toEqual({
      error: 'Bad Request',
      message: 'X-Idempotency-Key header is required for this request',
    });
    // The replay did not run the update again: updatedAt is still the first one's.
    expect(await fetchCustomer(p, customer.id)).toEqual(first.json().data);
  });

  it("security: another organization cannot patch a customer; the 404 is the nonexistent one's", async () => {
    const a = await createPartner(t);
    const b = await createPartner(t);
    const customer = await createCustomerViaApi(t, a);
    const foreign = await patch(b, customer.id, { firstName: 'Mallory' });
    const missing = await patch(b, NONEXISTENT_ID, { firstName: 'Mallory' });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.body).toBe(missing.body);
    expect(await fetchCustomer(a, customer.id)).toEqual(customer);
  });

  it('security: a patch with a forged token is 401 and changes nothing', async () => {
    const p = await createPartner(t);
    const customer = await createCustomerViaApi(t, p);
    const res = await signedInject(t.app, p, {
      method: 'PATCH',
      url: `/v1/customers/${customer.id}`,
      body: { firstName: 'Mallory' },
      tamper: (h) => {
        h.authorization = 'Bearer not-a-token';
      },
    });
    expect(res.statusCode).toBe(401);
    expect(await fetchCustomer(p, customer.id)).toEqual(customer);
  });
});
