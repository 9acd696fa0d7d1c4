import { randomBytes } from 'node:crypto';
import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { PAGE_SIZE } from '../../src/console/paging.ts';
import { type Browser, csrfOf, seedSms, signedIn, visit } from './session-kit.ts';

/**
 * The Investor messages page (docs/console.md): the SMS outbox with only a number's last 4
 * digits, filtered by state, organization and phone ending, counted per state, paged; a viewer
 * reads it and nothing on it changes anything.
 */
describeStores('the console: investor messages on %s', (store) => {
  let t: TestApp;
  const suffix = randomBytes(4).toString('hex');
  // Unique per run: the PostgreSQL store is shared.
  const digits = () => String(1000 + Math.floor(Math.random() * 9000));
  const numbers = {
    a: `2547${digits()}${digits()}`,
    b: `2557${digits()}${digits()}`,
    other: `2567${digits()}${digits()}`,
  };
  let mine: string;
  let theirs: string;
  let viewer: Browser;
  const at = (minutes: number) => new Date(Date.UTC(2026, 10, 20, 9, minutes));

  beforeAll(async () => {
    t = await buildTestApp(store);
    ({ organizationId: mine } = await seedSms(t, `Messages ${suffix}`, [
      {
        msisdn: numbers.a,
        state: 'DELIVERED',
        statusCode: 101,
        gatewayStatus: 'Success',
        createdAt: at(1),
        deliveredAt: at(2),
      },
      { msisdn: numbers.a, state: 'SENT', statusCode: 101, gatewayStatus: 'Success', createdAt: at(3) },
      {
        msisdn: numbers.b,
        kind: 'PAYOUT',
        language: 'sw',
        state: 'REFUSED',
        statusCode: 403,
        gatewayStatus: 'InvalidPhoneNumber',
        createdAt: at(4),
      },
      { msisdn: numbers.b, state: 'FAILED', attempts: 5, failureReason: 'DeliveryFailure', createdAt: at(5) },
      { msisdn: numbers.a, state: 'QUEUED', attempts: 0, createdAt: at(6) },
    ]));
    ({ organizationId: theirs } = await seedSms(t, `Others ${suffix}`, [
      {
        msisdn: numbers.other,
        state: 'REFUSED',
        statusCode: 406,
        gatewayStatus: 'UserInBlacklist',
        createdAt: at(7),
      },
    ]));
    ({ browser: viewer } = await signedIn(t, 'viewer'));
  });
  afterAll(() => t?.close());

  const rowsOf = (body: string) =>
    body.split('<tbody>')[2]?.split('</tbody>')[0]?.split('<tr').slice(1) ?? [];

  it("shows an organization's SMS newest first with only the last 4 digits of each number", async () => {
    const res = await visit(t, viewer, 'GET', `/console/messages?organizationId=${mine}`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-security-policy']).toMatch(/default-src 'self'/);
    for (const msisdn of Object.values(numbers)) {
      expect(res.body).not.toContain(msisdn);
      expect(res.body).not.toContain(msisdn.slice(0, 8));
    }
    expect(res.body).toContain(`…${numbers.a.slice(-4)}`);
    expect(res.body).toContain(`…${numbers.b.slice(-4)}`);
    const rows = rowsOf(res.body);
    expect(rows).toHaveLength(5);
    expect(rows.map((r) => />(Queued|Sent|Delivered|Refused|Failed)</.exec(r)?.[1])).toEqual([
      'Queued',
      'Failed',
      'Refused',
      'Sent',
      'Delivered',
    ]);
    // Refused and failed are red; the gateway's words and the columns are there.
    expect(rows[1]).toMatch(/^ class="attention"/);
    expect(rows[2]).toMatch(/^ class="attention"/);
    expect(rows[3]).not.toMatch(/attention/);
    expect(rows[2]).toContain('403 · InvalidPhoneNumber');
    expect(rows[2]).toContain('PAYOUT');
    expect(rows[2]).toContain('>sw<');
    expect(rows[1]).toContain('DeliveryFailure');
    expect(rows[1]).toContain('>5<');
    expect(rows[4]).toContain('2026-11-20 09:02:00Z');
    expect(res.body).toContain(`Messages ${suffix}`);
    expect(res.body).not.toContain('UserInBlacklist');
    // Counts per state for this organization; refused and failed counted in red.
    const counts = res.body.split('<tbody>')[1]!.split('</tbody>')[0]!;
    for (const [state, n] of [
      ['Queued', 1],
      ['Sending', 0],
      ['Sent', 1],
      ['Delivered', 1],
      ['Undelivered', 0],
      ['Refused', 1],
      ['Failed', 1],
    ] as const)
      expect(counts, state).toMatch(new RegExp(`>${state}</a></td><td data-label="Messages">${n}</td>`));
    expect(counts).toMatch(/<tr class="attention"><td data-label="State"><a [^>]*>Refused/);
    // Nothing here changes anything: no form posts but sign-out's.
    expect(res.body.match(/method="post"/g)).toHaveLength(1);
  });

  it('filters by state, by organization and by the last 4 digits', async () => {
    const refused = await visit(t, viewer, 'GET', `/console/messages?state=REFUSED&organizationId=${mine}`);
    expect(refused.statusCode).toBe(200);
    const rows = rowsOf(refused.body);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toContain('InvalidPhoneNumber');
    expect(refused.body).toMatch(/<option value="REFUSED" selected>Refused<\/option>/);

    const other = await visit(t, viewer, 'GET', `/console/messages?organizationId=${theirs}`);
    expect(rowsOf(other.body)).toHaveLength(1);
    expect(other.body).toContain('UserInBlacklist');
    expect(other.body).not.toContain('InvalidPhoneNumber');
    expect(other.body).not.toContain(`…${numbers.a.slice(-4)}`);

    const byPhone = await visit(
      t,
      viewer,
      'GET',
      `/console/messages?organizationId=${mine}&phone=${numbers.b.slice(-4)}`,
    );
    expect(rowsOf(byPhone.body)).toHaveLength(2);
    expect(byPhone.body).not.toContain(`…${numbers.a.slice(-4)}<`);
    // Across organizations, the phone ending alone finds the other organization's SMS too.
    const anywhere = await visit(t, viewer, 'GET', `/console/messages?phone=${numbers.other.slice(-4)}`);
    expect(anywhere.body).toContain('UserInBlacklist');
    expect(anywhere.body).toContain(`Others ${suffix}`);
  });

  it('refuses a bad filter with 400 and a clear message', async () => {
    for (const [query, message] of [
      ['state=LOST', 'The state must be one of'],
      [`phone=${numbers.a}`, 'last 4 digits'],
      ['phone=12a4', 'last 4 digits'],
      ['offset=-1', 'The offset must be'],
      ['offset=999999', 'The offset must be'],
      ['organizationId=nope', 'No such organization'],
      ['state=SENT&state=FAILED', 'Give each filter once'],
    ] as const) {
      const res = await visit(t, viewer, 'GET', `/console/messages?${query}`);
      expect(res.statusCode, query).toBe(400);
      expect(res.body).toContain(message);
      expect(res.body).not.toContain(numbers.a);
    }
  });

  it(`pages by ${PAGE_SIZE} with a Next link`, async () => {
    const many = Array.from({ length: PAGE_SIZE + 3 }, (_, i) => ({
      msisdn: `2547${digits()}${String(i).padStart(4, '0')}`,
      state: 'SENT',
      createdAt: new Date(Date.UTC(2026, 10, 21, 8, 0, i)),
    }));
    const { organizationId } = await seedSms(t, `Paged ${suffix}`, many);
    const first = await visit(t, viewer, 'GET', `/console/messages?organizationId=${organizationId}`);
    expect(rowsOf(first.body)).toHaveLength(PAGE_SIZE);
    const next = /<a href="([^"]+)" rel="next">/.exec(first.body)?.[1]?.replace(/&amp;/g, '&');
    expect(next).toBe(`/console/messages?organizationId=${organizationId}&offset=${PAGE_SIZE}`);
    const second = await visit(t, viewer, 'GET', next!);
    expect(rowsOf(second.body)).toHaveLength(3);
    expect(second.body).not.toContain('rel="next"');
    expect(second.body).toContain('Previous 100');
    // The oldest three are on the second page.
    expect(second.body).toContain('…0000');
    expect(first.body).not.toContain('…0000<');
  });

  it('sends an unsigned browser to sign in; has no POST route', async () => {
    const anonymous = await t.admin.inject({ method: 'GET', url: '/console/messages' });
    expect(anonymous.statusCode).toBe(303);
    expect(anonymous.headers.location).toBe('/console/sign-in');
    const page = await visit(t, viewer, 'GET', '/console/messages');
    const post = await visit(t, viewer, 'POST', '/console/messages', { csrf: csrfOf(page) });
    // No console route takes it: the admin app's token check answers first.
    expect(post.statusCode).toBe(401);
  });
});
