import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Tx } from '../../db/client.ts';
import { AppError } from '../../lib/errors.ts';
import { AUDIT_SECRET_KEYS } from '../../services/audit/log.ts';
import type { ConsoleSession } from '../../services/operators/sessions.ts';
import { type FoundPayment, findPayment, findPayments } from '../../services/payments/find.ts';
import { listStuck, reconcileNow, showTransaction } from '../../services/payments/pipeline/operator.ts';
import {
  RESOLVE_ACTIONS,
  type ResolveAction,
  resolvePayment,
} from '../../services/payments/pipeline/resolve.ts';
import type { LoadedRequest } from '../../services/payments/pipeline/store.ts';
import { AIRTEL_SECRET_KEYS } from '../../services/payments/providers/airtel/token.ts';
import { redact } from '../../services/payments/providers/http-exchange.ts';
import { MPESA_SECRET_KEYS } from '../../services/payments/providers/mpesa/token.ts';
import { MTN_SECRET_KEYS } from '../../services/payments/providers/mtn/token.ts';
import type { ConsoleKit, Who } from '../kit.ts';
import { csrfField, esc, layout, notice, table, volatile, when } from '../pages.ts';

const PATH = '/console/payments';
const SEARCH_LABEL = 'Order id, transaction id, phone number or provider reference';

/** Every provider's secret keys and the console's own: redacted from every body the timeline shows. */
const SECRET_KEYS: ReadonlySet<string> = new Set([
  ...MPESA_SECRET_KEYS,
  ...AIRTEL_SECRET_KEYS,
  ...MTN_SECRET_KEYS,
  ...AUDIT_SECRET_KEYS,
  'Password',
  'access_token',
  'refresh_token',
  'client_secret',
]);

/** Configured values that look like secrets: redacted wherever they occur in a body's strings. */
function secretValues(kit: ConsoleKit): string[] {
  const values = Object.entries(kit.ctx.config)
    .filter(
      ([key, value]) =>
        typeof value === 'string' &&
        value.length >= 8 &&
        /SECRET|TOKEN|PASSKEY|PASSWORD|CREDENTIAL|_KEY$|API_KEY/.test(key),
    )
    .map(([, value]) => value as string);
  return [kit.ctx.secrets.adminToken, ...values].filter(Boolean);
}

const KIND_LABEL: Record<string, string> = {
  request: 'Request sent to the provider',
  query: 'Status query to the provider',
  callback: 'Callback received',
  decision: 'Decision',
};

const DONE: Record<string, string> = {
  queried: 'The provider will be queried now: the payment worker takes it first.',
  settled: 'Settled by hand: the decision is recorded in the timeline and the audit log.',
};

const ACTION_LABEL: Record<ResolveAction, string> = {
  paid: 'Paid (the provider has the money: give its receipt)',
  'not-paid': 'Not paid (no payment in the provider’s records)',
  'retry-payout': 'Retry the payout (send it again as a new payout)',
  'paid-another-way': 'Paid another way (give the reference)',
};

/**
 * The actions resolvePayment can take for a transaction in this state (docs/payments.md,
 * Operators): paid / not-paid for a pending one whose request is not being sent, retry-payout /
 * paid-another-way for a payout with the operator that is still owed.
 */
export function actionsFor(p: Pick<FoundPayment, 'kind' | 'status' | 'requestState'>): ResolveAction[] {
  const state = p.requestState;
  if (!state || state === 'DONE') return [];
  const actions: ResolveAction[] = [];
  const waiting = state !== 'QUEUED' && state !== 'SENDING';
  if (waiting && (p.status === 'PENDING' || (p.kind === 'collection' && p.status === 'CANCELLED')))
    actions.push('paid', 'not-paid');
  if (p.kind !== 'collection' && state === 'OPERATOR' && (p.status === 'FAILED' || p.status === 'PENDING'))
    actions.push('retry-payout', 'paid-another-way');
  return actions;
}

const money = (amount: string, currency: string) => esc(`${currency} ${amount}`);
const code = (text: string) => `<code>${volatile(text)}</code>`;
const link = (id: string) => `<a href="${PATH}/${encodeURIComponent(id)}">${volatile(id)}</a>`;
const json = (value: unknown) => `<pre>${esc(JSON.stringify(value, null, 2))}</pre>`;

/** What the audit row keeps of a provider request and its transaction. */
const auditView = (r: LoadedRequest) => ({
  transactionId: r.transactionId,
  status: r.transactionStatus,
  requestState: r.state,
  attempts: r.attempts,
  providerIds: r.providerIds,
});

/** The Payments page (docs/console.md, "Payments"): search, the operator queue, a timeline, two changes. */
export function registerPaymentsPage(app: FastifyInstance, kit: ConsoleKit): void {
  const db = kit.ctx.database.db;

  app.get(PATH, { config: kit.config }, async (request, reply) => {
    const found = await kit.session(request, reply);
    if (!found) return reply;
    const query = request.query as { q?: string; done?: string };
    const q = typeof query.q === 'string' ? query.q.trim().slice(0, 100) : '';
    let results = '';
    if (q) {
      const matches = await findPayments(db, q);
      if (matches.length === 1) return kit.seeOther(reply, `${PATH}/${encodeURIComponent(matches[0]!.id)}`);
      results = `<section aria-labelledby="s-results"><h2 id="s-results">Results for “${esc(q)}”</h2>${
        matches.length === 0
          ? `<p class="notice" role="status">No payment has the order id, transaction id, phone number or provider reference “${esc(q)}”.</p>`
          : resultsTable(matches)
      }</section>`;
    }
    const stuck = await listStuck(db, { olderThanSeconds: 300, limit: 100, now: kit.ctx.clock() });
    const queue = table({
      caption: 'Operator queue: payments with the operator, uncertain, or not done after 5 minutes',
      columns: ['Transaction', 'Payment', 'Provider request', 'Created', 'Action'],
      empty: 'No payment is waiting for a person.',
      rowClass: (i) => (stuck[i]!.state === 'OPERATOR' ? 'attention' : undefined),
      rows: stuck.map((s) => [
        link(s.transactionId),
        `${esc(s.operation === 'COLLECT' ? 'collection' : 'payout')} of ${money(s.transaction.amount, s.transaction.currency)}<br><small>${esc(s.transaction.status)}</small>`,
        `<span class="badge">${esc(s.state)}</span> ${esc(`${s.attempts} attempt${s.attempts === 1 ? '' : 's'}`)} · ${volatile(s.adapter)}${
          s.lastError ? `<br><small>${esc(s.lastError)}</small>` : ''
        }`,
        when(s.createdAt),
        s.state === 'SENDING'
          ? '<span class="hint">Being sent now</span>'
          : `<form method="post" action="${PATH}/${encodeURIComponent(s.transactionId)}/query">${csrfField(kit.who(found))}
<button type="submit" class="secondary" aria-label="Query the provider now about ${esc(s.transactionId)}">Query the provider now</button></form>`,
      ]),
    });
    const main = `<h1>Payments</h1>${notice(query.done ? DONE[query.done] : undefined)}
<form method="get" action="${PATH}" class="inline search" role="search">
<label for="q">${esc(SEARCH_LABEL)}</label>
<input id="q" name="q" type="search" value="${esc(q)}" maxlength="100" autocomplete="off">
<button type="submit">Search</button></form>
${results}
<section aria-labelledby="s-queue"><h2 id="s-queue">Operator queue</h2>
<p class="hint">“Query the provider now” makes the request due at once (one with the operator becomes UNCERTAIN with fresh attempts) so the payment worker asks the provider before anything else; it never sends the payment again. Settle by hand from a payment’s timeline.</p>
${queue}</section>`;
    return kit.html(reply, 200, layout('Payments', main, kit.who(found), PATH));
  });

  app.get(`${PATH}/:id`, { config: kit.config }, async (request, reply) => {
    const found = await kit.session(request, reply);
    if (!found) return reply;
    const { id } = request.params as { id: string };
    const { done } = request.query as { done?: string };
    const [payment, shown] = await Promise.all([findPayment(db, id), showTransaction(db, id)]);
    if (!payment || !shown) return kit.refuse(reply, found, 404, `No transaction has the id ${id}.`);
    return kit.html(
      reply,
      200,
      layout(
        `Payment ${payment.kind}`,
        timelinePage(kit, kit.who(found), payment, shown, done ? DONE[done] : undefined),
        kit.who(found),
        PATH,
      ),
    );
  });

  app.post(`${PATH}/:id/query`, { config: kit.config }, async (request, reply) => {
    const found = await kit.change(request, reply);
    if (!found) return reply;
    const { id } = request.params as { id: string };
    const outcome = await db.transaction(async (tx) => {
      const before = (await showTransaction(tx, id))?.request;
      if (!before) return undefined;
      const { reconciling } = await reconcileNow(tx, { transactionId: id, now: kit.ctx.clock() });
      if (reconciling === 0) return { reconciling };
      const after = (await showTransaction(tx, id))?.request;
      const view = (r: typeof before | null | undefined) =>
        r && { state: r.state, attempts: r.attempts, nextAttemptAt: r.nextAttemptAt };
      await kit.audit(tx, request, { targetId: id, before: view(before), after: view(after) });
      return { reconciling };
    });
    if (!outcome) return kit.refuse(reply, found, 404, `No provider request for the transaction ${id}.`);
    if (outcome.reconciling === 0)
      return kit.refuse(
        reply,
        found,
        409,
        'Nothing to query: the request is being sent now or is closed. Reload the page to see it.',
      );
    kit.ctx.paymentWorker?.nudge();
    return kit.seeOther(reply, `${PATH}?done=queried`);
  });

  app.post(`${PATH}/:id/settle`, { config: kit.config }, async (request, reply) =>
    settle(kit, request, reply),
  );
}

/** "Settle by hand": resolvePayment with the operator's name, audited inside its transaction. */
async function settle(kit: ConsoleKit, request: FastifyRequest, reply: FastifyReply) {
  const found: ConsoleSession | undefined = await kit.change(request, reply);
  if (!found) return reply;
  const { id } = request.params as { id: string };
  const form = request.body as Record<string, string>;
  const action = RESOLVE_ACTIONS.find((a) => a === form.action);
  const reason = (form.reason ?? '').trim();
  const receipt = (form.receipt ?? '').trim();
  if (!action)
    return kit.refuse(
      reply,
      found,
      400,
      'Choose what happened: paid, not paid, retry the payout, or paid another way.',
    );
  if (reason.length < 3 || reason.length > 500)
    return kit.refuse(reply, found, 400, 'Say why in the reason: 3 to 500 characters.');
  if (receipt.length > 100)
    return kit.refuse(reply, found, 400, 'The receipt or reference is at most 100 characters.');
  const ctx = kit.ctx;
  try {
    const resolved = await resolvePayment(
      {
        db: ctx.database.db,
        events: ctx.events,
        registry: ctx.registry,
        market: ctx.market,
        log: request.log,
        config: ctx.config,
      },
      {
        action,
        reason,
        ...(receipt ? { receipt } : {}),
        operator: found.operator.name,
        transactionId: id,
        sourceAddress: request.ip,
        now: ctx.clock(),
      },
      async (tx: Tx, change) =>
        kit.audit(tx, request, {
          targetId: id,
          before: auditView(change.before),
          after: { ...auditView(change.after), newTransactionId: change.resolved.newTransactionId ?? null },
        }),
    );
    if (resolved.queued) ctx.paymentWorker?.nudge();
  } catch (error) {
    if (error instanceof AppError && error.statusCode < 500)
      return kit.refuse(reply, found, error.statusCode, error.detail ?? error.message);
    throw error;
  }
  return kit.seeOther(reply, `${PATH}/${encodeURIComponent(id)}?done=settled`);
}

function resultsTable(matches: FoundPayment[]): string {
  return table({
    caption: `${matches.length} payments found, newest first`,
    columns: ['Transaction', 'Organization', 'Kind', 'Provider', 'Amount', 'State', 'Created'],
    rows: matches.map((p) => [
      link(p.id),
      esc(p.organizationName),
      esc(p.kind),
      esc(p.provider),
      money(p.amount, p.currency),
      `${esc(p.status)}${p.requestState ? ` <small>(request ${esc(p.requestState)})</small>` : ''}`,
      when(p.createdAt),
    ]),
  });
}

type Shown = NonNullable<Awaited<ReturnType<typeof showTransaction>>>;

function standing(confirmed: boolean | null): string {
  if (confirmed === true) return '<span class="badge ok">Confirmed by the provider’s query</span>';
  if (confirmed === false) return '<span class="badge bad">Contradicted by the provider’s query</span>';
  return '<span class="badge">Not checked yet</span>';
}

function timelinePage(
  kit: ConsoleKit,
  who: Who,
  p: FoundPayment,
  shown: Shown,
  done: string | undefined,
): string {
  const secrets = secretValues(kit);
  const clean = (body: unknown) => redact(body, SECRET_KEYS, secrets);
  const r = shown.request;
  const facts: Array<[string, string]> = [
    ['Transaction', code(p.id)],
    ['Organization', esc(p.organizationName)],
    ['Order', code(p.orderId)],
    ['Kind', esc(p.kind)],
    ['Provider', esc(p.provider)],
    ['Amount', money(p.amount, p.currency)],
    ['Phone number', esc(p.msisdn)],
    ['Status', `<span class="badge">${esc(p.status)}</span>`],
    ['Provider reference', p.providerReference ? volatile(p.providerReference) : '—'],
    ['Provider request', r ? `${esc(r.state)} (${esc(`${r.attempts} attempts`)})` : 'none'],
    ['Last error', r?.lastError ? esc(r.lastError) : '—'],
  ];
  const entries: string[] = [
    `<li><h3>Payment requested</h3><p>${when(shown.transaction.createdAt)} · ${esc(
      `${p.kind} of ${p.currency} ${p.amount} to ${p.provider}`,
    )}${r ? ` through ${volatile(r.adapter)} ${esc(`(${r.operation})`)}` : ''}</p></li>`,
    ...shown.exchanges.map((e) => {
      const label = KIND_LABEL[e.kind] ?? e.kind;
      const meta = [
        when(e.at),
        esc(e.operation),
        e.httpStatus === null ? '' : esc(`HTTP ${e.httpStatus}`),
        e.latencyMs === null ? '' : volatile(`${e.latencyMs} ms`),
        e.sourceAddress ? `from ${volatile(e.sourceAddress)}` : '',
      ]
        .filter(Boolean)
        .join(' · ');
      const parts = [
        `<h3>${esc(label)}</h3><p>${meta}</p>`,
        e.kind === 'callback' ? `<p>${standing(e.confirmed)}</p>` : '',
        e.note ? `<p class="note">${esc(String(clean(e.note)))}</p>` : '',
        e.claim ? `<p>Claimed:</p>${json(clean(e.claim))}` : '',
        e.requestBody == null
          ? ''
          : `<p>${e.kind === 'callback' ? 'Body' : 'Sent'}:</p>${json(clean(e.requestBody))}`,
        e.responseBody == null ? '' : `<p>Answer:</p>${json(clean(e.responseBody))}`,
      ];
      return `<li class="kind-${esc(e.kind)}">${parts.join('')}</li>`;
    }),
  ];
  const actions = actionsFor(p);
  const settleForm =
    actions.length === 0
      ? `<p class="hint">Nothing to settle by hand: ${r ? `the request is ${esc(r.state)} and the payment ${esc(p.status)}` : 'it has no provider request'}.</p>`
      : `<form method="post" action="${PATH}/${encodeURIComponent(p.id)}/settle" class="settle">${csrfField(who)}
<label for="action">What happened</label>
<select id="action" name="action" required>${actions
          .map((a) => `<option value="${esc(a)}">${esc(ACTION_LABEL[a])}</option>`)
          .join('')}</select>
<label for="reason">Reason (at least 3 characters; kept in the audit log)</label>
<textarea id="reason" name="reason" required minlength="3" maxlength="500" rows="3"></textarea>
<label for="receipt">Receipt or reference (needed for paid and paid another way)</label>
<input id="receipt" name="receipt" maxlength="100" autocomplete="off">
<button type="submit">Settle by hand</button></form>`;
  return `<p><a href="${PATH}">Back to Payments</a></p>
<h1>Payment ${esc(p.kind)}: ${money(p.amount, p.currency)}</h1>${notice(done)}
<dl class="facts">${facts.map(([k, v]) => `<dt>${esc(k)}</dt><dd>${v}</dd>`).join('')}</dl>
<section aria-labelledby="s-timeline"><h2 id="s-timeline">Timeline, oldest first</h2>
<p class="hint">Bodies as recorded, with tokens, credentials and passwords shown as [REDACTED].</p>
<ol class="timeline">${entries.join('\n')}</ol></section>
<section aria-labelledby="s-settle"><h2 id="s-settle">Settle by hand</h2>
<p class="hint">After checking the provider’s own records: the decision is applied once, recorded in the timeline with your name and reason, and audited (operator role).</p>
${settleForm}</section>`;
}
