import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { adminInject } from '@partner-api/testkit/helpers.ts';
import { createPartner, type Partner } from '@partner-api/testkit/partner.ts';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Queryable } from '../../src/db/client.ts';
import { one } from '../../src/db/query.ts';
import { customers } from '../../src/db/schema.ts';
import { investorLanguageSql, languageOf } from '../../src/i18n/investor-language.ts';
import { ensureCatalog, FIXTURES, insertCustomer, ussdClient } from './support.ts';

describeStores('the language of the screens (organization default, customer preference) on %s', (store) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp(store);
    await ensureCatalog(t);
  });
  afterAll(() => t.close());

  const setOrgLanguage = async (partner: Partner, language: string) => {
    const res = await adminInject(t, 'PATCH', `/admin/organizations/${partner.organizationId}`, { language });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().language).toBe(language);
  };
  const setCustomerLanguage = (customerId: string, language: string | null) =>
    t.ctx.database.db.update(customers).set({ language }).where(eq(customers.id, customerId));

  it('an organization is English unless the operator says otherwise; sw and en only', async () => {
    const created = await adminInject(t, 'POST', '/admin/organizations', { name: 'Lugha Default' });
    expect(created.json()).toMatchObject({ language: 'en' });
    const sw = await adminInject(t, 'POST', '/admin/organizations', { name: 'Lugha Sw', language: 'sw' });
    expect([sw.statusCode, sw.json().language]).toEqual([201, 'sw']);
    const bad = await adminInject(t, 'PATCH', `/admin/organizations/${created.json().id}`, {
      language: 'fr',
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().details.map((d: { field: string }) => d.field)).toEqual(['language']);
    const list = await adminInject(t, 'GET', '/admin/organizations');
    const listed = list.json().find((o: { id: string }) => o.id === created.json().id);
    expect(listed.language).toBe('en');
  });

  it('screens follow the organization default, and a customer preference overrides it', async () => {
    const partner = await createPartner(t, { name: 'Duka la Hisa' });
    const customerId = await insertCustomer(t, partner);
    const client = ussdClient(t, partner);
    const english = await client.walk(customerId, []);
    expect(english.ussdText).toBe('Welcome to Duka la Hisa\n\n1. Stocks\n2. My Portfolio');

    await setOrgLanguage(partner, 'sw');
    const home = await client.walk(customerId, []);
    expect(home.ussdText).toBe('Karibu Duka la Hisa\n\n1. Hisa\n2. Hisa Zangu');
    const search = await client.walk(customerId, ['1', '8', FIXTURES.buy.symbol]);
    expect(search.menu.text).toBe(`Chagua hisa yenye ${FIXTURES.buy.symbol} (ukurasa 1/1)`);
    const invalid = await client.walk(customerId, ['9']);
    expect(invalid.menu.text).toBe('Chaguo si sahihi.\nKaribu Duka la Hisa');

    // The customer's own language wins over the organization's, both ways.
    await setCustomerLanguage(customerId, 'en');
    expect((await client.walk(customerId, [])).menu.text).toBe('Welcome to Duka la Hisa');
    await setOrgLanguage(partner, 'en');
    await setCustomerLanguage(customerId, 'sw');
    expect((await client.walk(customerId, [])).menu.text).toBe('Karibu Duka la Hisa');
  });

  it('the submitted screen, written after the order exists, is in the customer’s language', async () => {
    const partner = await createPartner(t);
    const customerId = await insertCustomer(t, partner);
    await setCustomerLanguage(customerId, 'sw');
    const client = ussdClient(t, partner);
    const found = await client.walk(customerId, ['1', '8', FIXTURES.buy.symbol]);
    const key = found.menu.options.find((o) => o.data?.symbol === FIXTURES.buy.symbol)!.key;
    const sessionId = found.sessionId;
    let data = found;
    for (const choice of [key, '1', '1000']) data = (await client.press(sessionId, choice)).json().data;
    expect(data.menu.text).toBe(
      `Nunua ${FIXTURES.buy.symbol} kwa KES 1,000.00\nBei: KES 25.00\nHisa takriban: 40.00`,
    );
    expect(data.menu.options.map((o: { label: string }) => o.label)).toEqual(['Thibitisha', 'Ghairi']);
    const submitted = (await client.press(sessionId, '1')).json().data;
    expect(submitted.currentState).toBe('BUY_SUBMITTED');
    expect(submitted.ussdText).toMatch(
      /^Ombi limepokelewa\. Kubali ombi la malipo kwenye simu yako\. Kumb\. c[a-z0-9]{24}$/,
    );
  });

  it('the ERROR screen after an unexpected failure is in the customer’s language', async () => {
    const partner = await createPartner(t);
    const customerId = await insertCustomer(t, partner);
    await setCustomerLanguage(customerId, 'sw');
    const client = ussdClient(t, partner);
    const opened = await client.walk(customerId, []);
    t.ctx.faultInjector = async (point) => {
      if (point === 'ussd.process.effects') throw new Error('injected');
    };
    try {
      const res = await client.press(opened.sessionId, '1');
      expect([res.statusCode, res.json().data.currentState]).toEqual([200, 'ERROR']);
      expect(res.json().data.ussdText).toBe('Hitilafu imetokea.\n\n0. Mwanzo');
    } finally {
      t.ctx.faultInjector = undefined;
    }
  });

  it('investorLanguageSql: the customer’s language, else the organization’s, never another’s', async () => {
    const investorLanguage = async (db: Queryable, organizationId: string, customerId: string) =>
      languageOf(
        (
          await one<{ language: string | null }>(
            db,
            sql`select ${investorLanguageSql(sql`${organizationId}`, sql`${customerId}`)} as language`,
          )
        )?.language,
      );
    const partner = await createPartner(t);
    const customerId = await insertCustomer(t, partner);
    const db = t.ctx.database.db;
    expect(await investorLanguage(db, partner.organizationId, customerId)).toBe('en');
    await setOrgLanguage(partner, 'sw');
    expect(await investorLanguage(db, partner.organizationId, customerId)).toBe('sw');
    await setCustomerLanguage(customerId, 'en');
    expect(await investorLanguage(db, partner.organizationId, customerId)).toBe('en');
    // Another organization's customer id does not lend its preference.
    const other = await createPartner(t);
    expect(await investorLanguage(db, other.organizationId, customerId)).toBe('en');
    await setOrgLanguage(other, 'sw');
    expect(await investorLanguage(db, other.organizationId, customerId)).toBe('sw');
    expect(await investorLanguage(db, 'no-such-org', customerId)).toBe('en');
  });
});
