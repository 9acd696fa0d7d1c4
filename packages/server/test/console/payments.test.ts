import { randomBytes } from 'node:crypto';
import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { createPartner, type Partner } from '@partner-api/testkit/partner.ts';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { actionsFor } from '../../src/console/pages/payments.ts';
import { one, rows, run } from '../../src/db/query.ts';
import { placeBuy } from '../../src/services/orders/life.ts';
import { pipelineDeps } from '../../src/services/payments/pipeline/start.ts';
import { markCallback, recordExchanges } from '../../src/services/payments/pipeline/store.ts';
import { runPipelineOnce } from '../../src/services/payments/pipeline/worker.ts';
import {
  type CountingProvider,
  countingAdapter,
  startCountingProvider,
} from '../payments/pipeline/counting-provider.ts';
import { ensureCatalog, insertCustomer } from '../ussd/support.ts';
import { type Account, addOperator, consoleClient, csrfOf, PROVIDER_SECRETS } from './client.ts';

const silent = { info: () => {}, warn: () => {}, error: () => {} };
/** A Safaricom number no other run uses (the PostgreSQL store is shared). */
const newPhone = () => `25471${String(Math.floor(Math.random() * 1e7)).padStart(7, '0')}`;

/**
 * The console's Payments page (docs/console.md, "Payments"): search by each key across
 * organizations, a payment's timeline with secrets redacted, the operator queue's "Query the
 * provider now", and "Settle by hand": audited with before/after, operator role only, CSRF-checked.
 */
describeStores('the console Payments page on %s', (store) => {
  let t: TestApp;
  let provider: CountingProvider;
  let stockId: string;
  const suffix = randomBytes(4).toString('hex');
  const accounts: Record<'viewer' | 'operator', Account> = {} as never;
  const partners: Array<Partner & { name: string }> = [];

  beforeAll(async () => {
    t = await buildTestApp(store, PROVIDER_SECRETS);
    stockId = (await ensureCatalog(t)).buy;
    provider = await startCountingProvider();
    const adapter = countingAdapter(provider.url, { name: `count-${suffix}`, reconcileAfterMs: 1000 });
    t.ctx.registry = () => adapter;
    for (const role of ['viewer', 'operator'] as const)
      accounts[role] = await addOperator(t, `pay-${role}-${suffix}`, role);
    for (const name of [`Alpha Savings ${suffix}`, `Beta Invest ${suffix}`])
      partners.push({ ...(await createPartner(t, { name })), name });
  });
  afterAll(async () => {
    await provider?.close();
    await t?.close();
  });

  /**
   * A collection of KES 1000.00 the counting provider accepted (AWAITING its answer, provider id
   * `P-<request id>`), placed as a buy order does.
   */
  async function payment(partner: Partner, msisdn: string) {
    const customerId = await insertCustomer(t, partner, { msisdn });
    const placed = await t.ctx.database.db.transaction((tx) =>
      placeBuy(
        tx,
        { organizationId: partner.organizationId, customerId, msisdn, stockId, amount: '1000' },
        t.ctx,
      ),
    );
    await runPipelineOnce({
      ...pipelineDeps(t.ctx, silent),
      settings: { ...t.ctx.config, PAYMENT_MAX_ATTEMPTS: 3, PAYMENT_BACKOFF_BASE_MS: 100 },
      random: () => 0.99,
    });
    const transactionId = placed.payments[0]!.id;
    const request = (await one<{ id: string; state: string; providerIds: Record<string, string> }>(
      t.ctx.database.db,
      sql`select id, state, provider_ids as "providerIds" from provider_requests where transaction_id = ${transactionId}`,
    ))!;
    expect(request.state).toBe('AWAITING');
    return { orderId: placed.orderId, transactionId, request };
  }

  const { visit, signIn: signInAs } = consoleClient(() => t);
  async function signIn(role: 'viewer' | 'operator') {
    const { browser, res } = await signInAs(accounts[role].name, accounts[role].credential);
    expect(res.statusCode).toBe(303);
    return browser;
  }
  const search = (browser: Parameters<typeof visit>[0], q: string) =>
    visit(browser, 'GET', `/console/payments?q=${encodeURIComponent(q)}`);
  const stateOf = (transactionId: string) =>
    one<{ state: string; status: string; providerReference: string | null }>(
      t.ctx.database.db,
      sql`select r.state, x.status, x.provider_reference as "providerReference"
  from provider_requests r join transactions x on x.id = r.transaction_id where x.id = ${transactionId}`,
    );
  const auditsOf = (route: string, targetId: string) =>
    rows<{ status: number; operatorName: string; before: unknown; after: unknown; body: unknown }>(
      t.ctx.database.db,
      sql`select status, operator_name as "operatorName", before, after, body from audit_log
  where route = ${route} and target_id = ${targetId} order by at`,
    );

  it('finds a payment by transaction id, order id, provider reference and each phone form, across organizations', async () => {
    const phone = newPhone();
    const { orderId, transactionId, request } = await payment(partners[0]!, phone);
    const browser = await signIn('viewer');
    const local = `0${phone.slice(3)}`;
    for (const key of [
      transactionId,
      orderId,
      request.providerIds.ref!,
      phone,
      `+${phone}`,
      local,
      ` ${local.slice(0, 4)} ${local.slice(4)} `,
    ]) {
      const res = await search(browser, key);
      expect(res.statusCode, key).toBe(303);
      expect(res.headers.location, key).toBe(`/console/payments/${transactionId}`);
    }
    // The same number in another organization: a table of both, each with its organization's name.
    const other = await payment(partners[1]!, phone);
    const both = await search(browser, local);
    expect(both.statusCode).toBe(200);
    expect(both.body).toContain('Results for “');
    for (const [id, p] of [
      [transactionId, partners[0]!],
      [other.transactionId, partners[1]!],
    ] as const) {
      expect(both.body).toContain(`href="/console/payments/${id}"`);
      expect(both.body).toContain(p.name);
    }
    expect(both.body).toContain('>collection<');
    expect(both.body).toContain('KES 1000.00');
    // An order id names only its own organization's payment.
    const one = await search(browser, other.orderId);
    expect(one.headers.location).toBe(`/console/payments/${other.transactionId}`);
  });

  it('offers the actions resolvePayment takes for the state', () => {
    const of = (kind: 'collection' | 'payout' | 'refund', status: string, requestState: string | null) =>
      actionsFor({ kind, status, requestState });
    expect(of('collection', 'PENDING', 'AWAITING')).toEqual(['paid', 'not-paid']);
    expect(of('collection', 'PENDING', 'QUEUED')).toEqual([]);
    expect(of('collection', 'CANCELLED', 'OPERATOR')).toEqual(['paid', 'not-paid']);
    expect(of('collection', 'SUCCESS', 'DONE')).toEqual([]);
    expect(of('payout', 'PENDING', 'OPERATOR')).toEqual([
      'paid',
      'not-paid',
      'retry-payout',
      'paid-another-way',
    ]);
    expect(of('refund', 'FAILED', 'OPERATOR')).toEqual(['retry-payout', 'paid-another-way']);
    expect(of('payout', 'FAILED', 'UNCERTAIN')).toEqual([]);
    expect(of('payout', 'PENDING', null)).toEqual([]);
  });

  it('says when nothing matches; the search box is labelled', async () => {
    const browser = await signIn('viewer');
    const res = await search(browser, `nothing-${suffix}`);
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain(
      `No payment has the order id, transaction id, phone number or provider reference “nothing-${suffix}”.`,
    );
    expect(res.body).toContain(
      '<label for="q">Order id, transaction id, phone number or provider reference</label>',
    );
    const unknown = await visit(browser, 'GET', `/console/payments/nothing-${suffix}`);
    expect(unknown.statusCode).toBe(404);
    expect(unknown.body).toContain(`No transaction has the id nothing-${suffix}.`);
  });

  it('shows the timeline oldest first: request, exchanges redacted, callbacks and their standing, decisions', async () => {
    const { transactionId, request } = await payment(partners[0]!, newPhone());
    const secrets = {
      password: `pw-${randomBytes(8).toString('hex')}`,
      token: `tok-${randomBytes(8).toString('hex')}`,
      access: `at-${randomBytes(8).toString('hex')}`,
      credential: `sc-${randomBytes(8).toString('hex')}`,
    };
    const later = new Date(Date.now() + 60_000);
    const [callbackId] = await recordExchanges(
      t.ctx.database.db,
      { id: request.id, transactionId, providerIds: request.providerIds },
      'callback',
      [
        {
          provider: 'count',
          operation: 'stk-callback',
          method: 'POST',
          path: '/callback',
          requestBody: {
            Password: secrets.password,
            token: secrets.token,
            nested: { access_token: secrets.access, SecurityCredential: secrets.credential },
            ResultDesc: 'The service request is processed successfully.',
            CallBackURL: `https://api.example.com/callbacks/mpesa/${PROVIDER_SECRETS.MPESA_CALLBACK_TOKEN}/stk`,
            note: `passkey ${PROVIDER_SECRETS.MPESA_PASSKEY} and key ${PROVIDER_SECRETS.MPESA_CONSUMER_SECRET}`,
          },
          status: 200,
          responseBody: { ResultCode: 0 },
          startedAt: later,
          latencyMs: 3,
          error: null,
          sourceAddress: '196.201.214.200',
        },
      ],
      { status: 'SUCCESS', receipt: 'QK12ABC' },
    );
    await markCallback(t.ctx.database.db, callbackId!, false);
    const browser = await signIn('viewer');
    const res = await visit(browser, 'GET', `/console/payments/${transactionId}`);
    expect(res.statusCode).toBe(200);
    for (const secret of Object.values(secrets)) expect(res.body).not.toContain(secret);
    for (const [name, secret] of Object.entries(PROVIDER_SECRETS))
      if (secret.length >= 16) expect(res.body, name).not.toContain(secret);
    expect(res.body).toContain('https://api.example.com/callbacks/mpesa/[REDACTED]/stk');
    expect(res.body).not.toContain(t.ctx.secrets.adminToken);
    expect(res.body).toContain('&quot;Password&quot;: &quot;[REDACTED]&quot;');
    expect(res.body).toContain('&quot;access_token&quot;: &quot;[REDACTED]&quot;');
    expect(res.body).toContain('The service request is processed successfully.');
    expect(res.body).toContain('Contradicted by the provider’s query');
    expect(res.body).toContain('QK12ABC');
    expect(res.body).toContain(partners[0]!.name);
    const order = ['Payment requested', 'Request sent to the provider', 'Callback received'].map((h) =>
      res.body.indexOf(`<h3>${h}</h3>`),
    );
    expect(order.every((at) => at > 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    // A pending collection with its answer awaited: paid or not paid, never a payout's actions.
    expect(res.body).toContain('<option value="paid">');
    expect(res.body).toContain('<option value="not-paid">');
    expect(res.body).not.toContain('<option value="retry-payout">');
    expect(res.body).not.toMatch(/<script|\sstyle=/i);
  });

  it('the operator queue lists a waiting payment; "Query the provider now" makes it due, audited', async () => {
    const { transactionId } = await payment(partners[0]!, newPhone());
    // The queue shows the oldest 100 first, and on PostgreSQL the suites beside this one leave theirs:
    // a request waiting since 2001 heads it.
    await run(
      t.ctx.database.db,
      sql`update provider_requests set created_at = '2001-01-01T00:00:00Z' where transaction_id = ${transactionId}`,
    );
    const start = new Date();
    t.ctx.clock = () => new Date(start.getTime() + 10 * 60_000);
    try {
      const operator = await signIn('operator');
      const page = await visit(operator, 'GET', '/console/payments');
      expect(page.statusCode).toBe(200);
      expect(page.body).toContain(`action="/console/payments/${transactionId}/query"`);
      const viewer = await signIn('viewer');
      const viewerPage = await visit(viewer, 'GET', '/console/payments');
      const refused = await visit(viewer, 'POST', `/console/payments/${transactionId}/query`, {
        csrf: csrfOf(viewerPage),
      });
      expect(refused.statusCode).toBe(403);
      const res = await visit(operator, 'POST', `/console/payments/${transactionId}/query`, {
        csrf: csrfOf(page),
      });
      expect(res.statusCode).toBe(303);
      expect(res.headers.location).toBe('/console/payments?done=queried');
      expect((await stateOf(transactionId))?.state).toBe('AWAITING');
      const audits = await auditsOf('/console/payments/:id/query', transactionId);
      expect(audits.map((a) => a.status)).toEqual([403, 303]);
      expect(audits[1]).toMatchObject({
        operatorName: accounts.operator.name,
        before: { state: 'AWAITING', attempts: 0 },
        after: {
          state: 'AWAITING',
          attempts: 0,
          nextAttemptAt: new Date(start.getTime() + 10 * 60_000).toISOString(),
        },
      });
      const notice = await visit(operator, 'GET', res.headers.location as string);
      expect(notice.body).toContain('The provider will be queried now');
    } finally {
      t.ctx.clock = () => new Date();
    }
  });

  it('settles by hand: a viewer 403, a bad CSRF 403, a short reason 400 change nothing; then paid, audited', async () => {
    const { transactionId } = await payment(partners[1]!, newPhone());
    const url = `/console/payments/${transactionId}/settle`;
    const route = '/console/payments/:id/settle';
    const before = await stateOf(transactionId);
    expect(before).toMatchObject({ state: 'AWAITING', status: 'PENDING' });

    const viewer = await signIn('viewer');
    const viewerPage = await visit(viewer, 'GET', `/console/payments/${transactionId}`);
    const form = { action: 'paid', reason: 'seen in the M-Pesa statement', receipt: `RCPT${suffix}` };
    const byViewer = await visit(viewer, 'POST', url, { csrf: csrfOf(viewerPage), ...form });
    expect(byViewer.statusCode).toBe(403);
    expect(byViewer.body).toContain('A viewer cannot change anything');
    expect(await stateOf(transactionId)).toEqual(before);

    const operator = await signIn('operator');
    const page = await visit(operator, 'GET', `/console/payments/${transactionId}`);
    expect(page.body).toContain('<label for="reason">');
    const badCsrf = await visit(operator, 'POST', url, { csrf: 'not-the-token', ...form });
    expect(badCsrf.statusCode).toBe(403);
    expect(await stateOf(transactionId)).toEqual(before);
    const short = await visit(operator, 'POST', url, { csrf: csrfOf(page), ...form, reason: ' ok ' });
    expect(short.statusCode).toBe(400);
    expect(short.body).toContain('Say why in the reason: 3 to 500 characters.');
    const badAction = await visit(operator, 'POST', url, { csrf: csrfOf(page), ...form, action: 'refund' });
    expect(badAction.statusCode).toBe(400);
    const noReceipt = await visit(operator, 'POST', url, { csrf: csrfOf(page), ...form, receipt: '' });
    expect(noReceipt.statusCode).toBe(400);
    expect(noReceipt.body).toContain('paid needs the receipt or reference of the payment (receipt)');
    expect(await stateOf(transactionId)).toEqual(before);
    // Each refusal is recorded by its status, with nothing found or left.
    const refusals = await auditsOf(route, transactionId);
    expect(refusals.map((a) => [a.status, a.before, a.after])).toEqual(
      [403, 403, 400, 400, 400].map((status) => [status, null, null]),
    );

    const res = await visit(operator, 'POST', url, { csrf: csrfOf(page), ...form });
    expect(res.statusCode, res.body).toBe(303);
    expect(res.headers.location).toBe(`/console/payments/${transactionId}?done=settled`);
    expect(await stateOf(transactionId)).toMatchObject({
      state: 'DONE',
      status: 'SUCCESS',
      providerReference: `RCPT${suffix}`,
    });
    const [audit, ...more] = (await auditsOf(route, transactionId)).filter((a) => a.status === 303);
    expect(more).toEqual([]);
    expect(audit).toMatchObject({
      status: 303,
      operatorName: accounts.operator.name,
      before: { transactionId, status: 'PENDING', requestState: 'AWAITING' },
      after: { transactionId, status: 'SUCCESS', requestState: 'DONE', newTransactionId: null },
      body: { action: 'paid', reason: 'seen in the M-Pesa statement', receipt: `RCPT${suffix}` },
    });
    // The resolution names the operator; the timeline shows it; the receipt now finds the payment.
    const decision = await one<{ requestBody: { operator: string; reason: string } }>(
      t.ctx.database.db,
      sql`select request_body as "requestBody" from provider_exchanges
  where transaction_id = ${transactionId} and kind = 'decision' and operation = 'resolve'`,
    );
    expect(decision?.requestBody).toMatchObject({
      operator: accounts.operator.name,
      reason: 'seen in the M-Pesa statement',
    });
    const shown = await visit(operator, 'GET', res.headers.location as string);
    expect(shown.body).toContain('Settled by hand: the decision is recorded');
    expect(shown.body).toContain(`operator ${accounts.operator.name} from`);
    expect(shown.body).toContain('Nothing to settle by hand');
    const found = await search(operator, `RCPT${suffix}`);
    expect(found.headers.location).toBe(`/console/payments/${transactionId}`);
    // Settled once: a second try is refused and changes nothing.
    const again = await visit(operator, 'POST', url, { csrf: csrfOf(page), ...form });
    expect(again.statusCode).toBe(409);
    expect((await auditsOf(route, transactionId)).filter((a) => a.status === 303)).toHaveLength(1);
  });
});
