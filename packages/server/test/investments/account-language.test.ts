/**
 * The customer's language through the investments preview (docs/languages.md): `language` on the
 * account, set by POST /v1/accounts and PATCH /v1/accounts/{accountId}, read by the USSD screens.
 * Every response is checked against the OpenAPI document by the test app (testkit contract check).
 */
import { randomUUID } from 'node:crypto';
import { createId, ErrorMessage } from '@partner-api/contract';
import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { adminInject } from '@partner-api/testkit/helpers.ts';
import { createPartner, type Partner, signedInject } from '@partner-api/testkit/partner.ts';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { insertCustomer, ussdClient } from '../ussd/support.ts';

const ACCOUNT_NOT_FOUND = { error: 'Not found', message: 'Account not found' };

describeStores('the customer’s language on the account (investments preview) on %s', (store) => {
  let t: TestApp;
  let partner: Partner;
  beforeAll(async () => {
    t = await buildTestApp(store, { INVESTMENTS_PREVIEW: 'true' });
    partner = await createPartner(t, { name: 'Soko Hisa' });
  });
  afterAll(() => t.close());

  const open = (body: Record<string, unknown>, as: Partner = partner) =>
    signedInject(t.app, as, { method: 'POST', url: '/v1/accounts', body, idempotencyKey: randomUUID() });
  const patch = (accountId: string, body: unknown, key: string | false = randomUUID(), as = partner) =>
    signedInject(t.app, as, { method: 'PATCH', url: `/v1/accounts/${accountId}`, body, idempotencyKey: key });
  const home = async (customerId: string) => (await ussdClient(t, partner).walk(customerId, [])).menu.text;

  it('POST sets it with a new account; an existing account is answered unchanged', async () => {
    const customerId = await insertCustomer(t, partner);
    const first = await open({ customerId, language: 'sw' });
    expect([first.statusCode, first.json().data.language]).toEqual([201, 'sw']);
    expect(await home(customerId)).toBe('Karibu Soko Hisa');
    const again = await open({ customerId, language: 'en' });
    expect([again.statusCode, again.json().data]).toEqual([200, first.json().data]);
    const plain = await open({ customerId: await insertCustomer(t, partner) });
    expect([plain.statusCode, plain.json().data.language]).toEqual([201, null]);
  });

  it('PATCH sets it, null gives the organization’s default back; the screens follow; a replay is the same bytes', async () => {
    const customerId = await insertCustomer(t, partner);
    const account = (await open({ customerId })).json().data;
    expect(await home(customerId)).toBe('Welcome to Soko Hisa');

    const key = randomUUID();
    const sw = await patch(account.id, { language: 'sw' }, key);
    expect(sw.statusCode, sw.body).toBe(200);
    expect(sw.json()).toEqual({
      message: 'Account updated successfully',
      data: { ...account, language: 'sw', updatedAt: expect.any(String) },
    });
    expect(Date.parse(sw.json().data.updatedAt)).toBeGreaterThanOrEqual(Date.parse(account.updatedAt));
    expect(await home(customerId)).toBe('Karibu Soko Hisa');
    const replay = await patch(account.id, { language: 'sw' }, key);
    expect([replay.statusCode, replay.body, replay.headers['idempotent-replayed']]).toEqual([
      200,
      sw.body,
      'true',
    ]);
    const got = await signedInject(t.app, partner, { method: 'GET', url: `/v1/accounts/${account.id}` });
    expect(got.json().data.language).toBe('sw');

    // null: the organization's default, which the operator sets.
    const reset = await patch(account.id, { language: null });
    expect([reset.statusCode, reset.json().data.language]).toEqual([200, null]);
    expect(await home(customerId)).toBe('Welcome to Soko Hisa');
    const org = await adminInject(t, 'PATCH', `/admin/organizations/${partner.organizationId}`, {
      language: 'sw',
    });
    expect(org.statusCode).toBe(200);
    expect(await home(customerId)).toBe('Karibu Soko Hisa');
    await adminInject(t, 'PATCH', `/admin/organizations/${partner.organizationId}`, { language: 'en' });

    // An empty patch changes nothing and answers the account.
    const none = await patch(account.id, {});
    expect([none.statusCode, none.json().data.language]).toEqual([200, null]);
  });

  it('errors: an unknown language or field, a malformed id, another organization’s or no account', async () => {
    const account = (await open({ customerId: await insertCustomer(t, partner) })).json().data;
    const fr = await patch(account.id, { language: 'fr' });
    expect([fr.statusCode, fr.json()]).toEqual([
      400,
      {
        error: 'Validation failed',
        details: [{ field: 'language', message: 'language must be one of en, sw, or null' }],
      },
    ]);
    const extra = await patch(account.id, { language: 'sw', name: 'x' });
    expect([extra.statusCode, extra.json().details.map((d: { field: string }) => d.field)]).toEqual([
      400,
      ['name'],
    ]);
    const malformed = await patch('not-an-id', { language: 'sw' });
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json().details).toEqual([{ field: 'accountId', message: 'Invalid account ID format' }]);
    const other = await createPartner(t);
    const foreign = await patch(account.id, { language: 'sw' }, randomUUID(), other);
    expect([foreign.statusCode, foreign.json()]).toEqual([404, ACCOUNT_NOT_FOUND]);
    const unknown = await patch(createId(), { language: 'sw' });
    expect([unknown.statusCode, unknown.json()]).toEqual([404, ACCOUNT_NOT_FOUND]);
    const got = await signedInject(t.app, partner, { method: 'GET', url: `/v1/accounts/${account.id}` });
    expect(got.json().data.language).toBe(null);
    const badCreate = await open({ customerId: await insertCustomer(t, partner), language: 'SW' });
    expect(badCreate.json().details).toEqual([
      { field: 'language', message: 'language must be one of en, sw, or null' },
    ]);
  });

  it('security: unsigned 401, no idempotency key 400', async () => {
    const account = (await open({ customerId: await insertCustomer(t, partner) })).json().data;
    const bare = await t.app.inject({
      method: 'PATCH',
      url: `/v1/accounts/${account.id}`,
      payload: { language: 'sw' },
    });
    expect([bare.statusCode, bare.json().message]).toEqual([401, ErrorMessage.tokenRequired]);
    const noKey = await patch(account.id, { language: 'sw' }, false);
    expect([noKey.statusCode, noKey.json()]).toEqual([
      400,
      { error: 'Bad Request', message: ErrorMessage.idempotencyKeyRequired },
    ]);
  });
});
