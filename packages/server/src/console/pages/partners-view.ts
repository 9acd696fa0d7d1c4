import type { presentCredential } from '../../services/credentials/update.ts';
import type { OrganizationRow } from '../../services/organizations/present.ts';
import type { WebhookRow } from '../../services/webhooks/present.ts';
import type { Who } from '../kit.ts';
import { csrfField, esc, layout, notice, table, volatile, when } from '../pages.ts';
import type { AttemptRow, DeliveryRow, PartnerSummary } from './partners-data.ts';

const PATH = '/console/partners';
type Credential = ReturnType<typeof presentCredential>;
/** Longer texts (errors) are cut to this many characters on the page. */
const SHOWN_CHARACTERS = 200;

const cut = (text: string) =>
  text.length > SHOWN_CHARACTERS ? `${text.slice(0, SHOWN_CHARACTERS)}… (${text.length} characters)` : text;
const yesNo = (value: boolean) => (value ? 'On' : 'Off');
const partnerPath = (id: string) => `${PATH}/${encodeURIComponent(id)}`;
/** A viewer sees no change form (the server refuses a viewer's POST all the same). */
const mayChange = (who: Who) => who.role === 'operator';
const VIEWER = '<p class="hint">Changes here need the operator role.</p>';
const badge = (text: string) => `<span class="badge">${esc(text)}</span>`;

/** The webhook's state in words: none, active, failing since, or deactivated. */
function webhookState(status: string | null, failingSince: string | null) {
  if (!status) return 'No webhook';
  if (status === 'DEACTIVED') return 'Deactivated';
  return failingSince ? 'Active, failing' : 'Active';
}

export function partnersPage(input: {
  who: Who;
  environment: string;
  search: string;
  partners: PartnerSummary[];
  shown: number;
}): string {
  const rows = input.partners.map((p) => [
    `<a href="${partnerPath(p.id)}">${esc(p.name)}</a>`,
    esc(p.isActive ? 'Active' : 'Inactive'),
    `${p.activeCredentials} of ${p.credentials}`,
    `${esc(webhookState(p.webhookStatus, p.failingSince))}${p.failingSince ? `<br><small>since ${when(p.failingSince)}</small>` : ''}`,
    esc(yesNo(p.smsEnabled)),
    esc(p.language),
  ]);
  const needsPerson = (p: PartnerSummary) => p.webhookStatus === 'DEACTIVED' || p.failingSince !== null;
  const main = `<h1>Partners</h1>
<p>Environment: <strong>${esc(input.environment)}</strong>. The ${input.shown} newest organizations, or those whose name contains the search.</p>
<form method="get" action="${PATH}" class="inline" role="search">
<label for="partner-search">Name or organization id<input id="partner-search" name="q" value="${esc(input.search)}"></label>
<button type="submit">Search</button>${input.search ? ` <a href="${PATH}">Show all</a>` : ''}</form>
${table({
  caption: 'Organizations',
  columns: ['Organization', 'Status', 'Active credentials', 'Webhook', 'Investor SMS', 'Language'],
  rows,
  empty: input.search ? 'No organization matches the search.' : 'No organization yet.',
  rowClass: (i) => (needsPerson(input.partners[i]!) ? 'attention' : undefined),
})}`;
  return layout('Partners', main, input.who, PATH);
}

function credentialForms(who: Who, organizationId: string, c: Credential): string {
  const base = `${partnerPath(organizationId)}/credentials/${encodeURIComponent(c.id)}`;
  const id = (what: string) => esc(`${what}-${c.id}`);
  return `<details class="changes"><summary>Change “${esc(c.name)}”</summary>
<form method="post" action="${base}/trusted-ips" class="stack">${csrfField(who)}
<label for="${id('ips')}">Trusted IPs, one IP address or CIDR range a line (none: any address)</label>
<textarea id="${id('ips')}" name="trustedIps" rows="3">${esc(c.trustedIps.join('\n'))}</textarea>
<button type="submit">Save trusted IPs</button></form>
<form method="post" action="${base}/signing-key" class="stack">${csrfField(who)}
<label for="${id('key')}">New public key (Ed25519, SPKI PEM or JWK)</label>
<textarea id="${id('key')}" name="publicKey" rows="4" required></textarea>
<label for="${id('kid')}">New key id</label>
<input id="${id('kid')}" name="keyId" required maxlength="200">
<button type="submit">Rotate signing key</button></form>
<form method="post" action="${base}/deactivate" class="stack">${csrfField(who)}
<label class="check"><input type="checkbox" name="confirm" value="yes" required> I understand partners using it are refused at once</label>
<button type="submit" class="danger">Deactivate credential</button></form></details>`;
}

export function partnerPage(input: {
  who: Who;
  organization: OrganizationRow;
  credentials: Credential[];
  webhook: WebhookRow | undefined;
  deliveries: DeliveryRow[];
  shown: number;
  done?: string;
}): string {
  const o = input.organization;
  const facts = `<dl class="facts">
<dt>Organization id</dt><dd>${volatile(o.id)}</dd>
<dt>Status</dt><dd>${esc(o.isActive ? 'Active' : 'Inactive')}</dd>
<dt>Investor SMS</dt><dd>${esc(yesNo(o.smsEnabled))}</dd>
<dt>Language</dt><dd>${esc(o.language)}</dd></dl>`;

  const credentials = table({
    caption: 'Credentials',
    columns: [
      'Name',
      'Client id',
      'Signing key id',
      'Status',
      'Trusted IPs',
      'Expires',
      'Created',
      'Last used',
    ],
    rows: input.credentials.map((c) => [
      esc(c.name),
      volatile(c.clientId),
      c.keyId ? esc(c.keyId) : c.hasSigningKey ? 'a key without id' : 'none',
      esc(c.isActive ? 'Active' : 'Deactivated'),
      c.trustedIps.length ? c.trustedIps.map(esc).join('<br>') : 'any address',
      when(c.expiresAt),
      when(c.createdAt),
      c.lastUsedAt ? when(c.lastUsedAt) : 'never',
    ]),
    empty: 'No credential yet.',
  });
  const changes = input.credentials
    .filter((c) => c.isActive)
    .map((c) => credentialForms(input.who, o.id, c))
    .join('\n');

  const create = `<details class="changes"><summary>Create a credential</summary>
<form method="post" action="${partnerPath(o.id)}/credentials" class="stack">${csrfField(input.who)}
<label for="new-name">Name</label><input id="new-name" name="name" required maxlength="200">
<label for="new-key">Public key (Ed25519, SPKI PEM or JWK; optional, with its key id)</label>
<textarea id="new-key" name="publicKey" rows="4"></textarea>
<label for="new-kid">Key id</label><input id="new-kid" name="keyId" maxlength="200">
<label for="new-ips">Trusted IPs, one a line (optional)</label><textarea id="new-ips" name="trustedIps" rows="2"></textarea>
<label for="new-expires">Expires (optional)</label><input id="new-expires" name="expiresAt" type="date">
<button type="submit">Create credential</button>
<p class="hint">The client secret is shown once, on the page that answers this form: it is stored only as a hash.</p></form></details>`;

  const w = input.webhook;
  const webhook = w
    ? `<dl class="facts">
<dt>URL</dt><dd>${esc(w.url)}</dd>
<dt>State</dt><dd>${badge(webhookState(w.status, w.failingSince))}</dd>
<dt>Failing since</dt><dd>${w.failingSince ? when(w.failingSince) : '—'}</dd>
${w.disabledReason ? `<dt>Deactivated</dt><dd>${esc(w.disabledReason)} (${when(w.disabledAt)})</dd>` : ''}
<dt>Subscriptions</dt><dd>${esc(w.subscriptions.join(', '))}</dd></dl>`
    : '<p class="empty">This organization has no webhook.</p>';

  const deliveries = table({
    caption: `Recent deliveries (the ${input.shown} newest)`,
    columns: [
      'Event',
      'State',
      'Attempts',
      'Last status',
      'Last error',
      'Next attempt',
      'Created',
      ...(mayChange(input.who) ? [''] : []),
    ],
    rows: input.deliveries.map((d) => [
      `<a href="${partnerPath(o.id)}/deliveries/${encodeURIComponent(d.id)}">${esc(d.event)}</a>`,
      esc(d.state),
      String(d.attempts),
      d.lastStatus === null ? '—' : String(d.lastStatus),
      esc(cut(d.lastAttemptError ?? d.lastError ?? '')) || '—',
      d.state === 'PENDING' ? when(d.nextAttemptAt) : '—',
      when(d.createdAt),
      ...(mayChange(input.who) ? [resendForm(input.who, o.id, d)] : []),
    ]),
    empty: 'No delivery yet.',
    rowClass: (i) => (input.deliveries[i]!.state === 'FAILED' ? 'attention' : undefined),
  });

  const main = `<p><a href="${PATH}">All partners</a></p>
<h1>${esc(o.name)}</h1>${notice(input.done)}${facts}
<section aria-labelledby="s-credentials" class="credentials"><h2 id="s-credentials">Credentials</h2>${credentials}${mayChange(input.who) ? changes + create : VIEWER}</section>
<section aria-labelledby="s-webhook"><h2 id="s-webhook">Webhook</h2>${webhook}${deliveries}</section>`;
  return layout(o.name, main, input.who, PATH);
}

function resendForm(who: Who, organizationId: string, d: Pick<DeliveryRow, 'id' | 'event'>) {
  return `<form method="post" action="${partnerPath(organizationId)}/deliveries/${encodeURIComponent(d.id)}/resend">${csrfField(who)}
<button type="submit" class="secondary" aria-label="Resend ${esc(d.event)} of ${esc(d.id)}">Resend</button></form>`;
}

export function deliveryPage(input: {
  who: Who;
  organization: Pick<OrganizationRow, 'id' | 'name'>;
  delivery: DeliveryRow;
  attempts: AttemptRow[];
  done?: string;
}): string {
  const { delivery: d, organization: o } = input;
  const attempts = table({
    caption: 'Attempts, oldest first',
    columns: ['Time', 'Status', 'Latency', 'Error'],
    rows: input.attempts.map((a) => [
      when(a.at),
      a.httpStatus === null ? 'no answer' : String(a.httpStatus),
      `${a.latencyMs} ms`,
      esc(cut(a.error ?? '')) || '—',
    ]),
    empty: 'No attempt yet.',
    rowClass: (i) => (input.attempts[i]!.error ? 'attention' : undefined),
  });
  const main = `<p><a href="${partnerPath(o.id)}">Back to ${esc(o.name)}</a></p>
<h1>Delivery of ${esc(d.event)}</h1>${notice(input.done)}
<dl class="facts">
<dt>Delivery id</dt><dd>${volatile(d.id)}</dd>
<dt>Event id</dt><dd>${volatile(d.eventId)}</dd>
<dt>State</dt><dd>${badge(d.state)}</dd>
<dt>Attempts</dt><dd>${d.attempts}</dd>
<dt>Next attempt</dt><dd>${d.state === 'PENDING' ? when(d.nextAttemptAt) : '—'}</dd>
<dt>Delivered</dt><dd>${when(d.deliveredAt)}</dd>
<dt>Last error</dt><dd>${esc(cut(d.lastError ?? '')) || '—'}</dd></dl>
${attempts}
<p class="hint">Response bodies are not stored: each attempt keeps its status, latency and error only.</p>
${mayChange(input.who) ? resendForm(input.who, o.id, d) : VIEWER}`;
  return layout(`Delivery of ${d.event}`, main, input.who, PATH);
}

export function credentialCreatedPage(input: {
  who: Who;
  organization: Pick<OrganizationRow, 'id' | 'name'>;
  created: { name: string; clientId: string; clientSecret: string };
}): string {
  const { created: c, organization: o } = input;
  const main = `<h1>Credential created</h1>
<p class="notice" role="status">Credential “${esc(c.name)}” of ${esc(o.name)} is created. Copy the client secret now: it is shown only on this page, once, and cannot be shown again (only its hash is stored). A lost secret means a new credential.</p>
<dl class="facts">
<dt>Client id</dt><dd><code>${volatile(c.clientId)}</code></dd>
<dt>Client secret</dt><dd><code class="secret">${volatile(c.clientSecret)}</code></dd></dl>
<p><a href="${partnerPath(o.id)}">Back to ${esc(o.name)}</a></p>`;
  return layout('Credential created', main, input.who, PATH);
}
