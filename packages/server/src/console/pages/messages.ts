import type { FastifyInstance } from 'fastify';
import { listOrganizations } from '../../services/organizations/list.ts';
import { countSmsByState, listSms, needsAttention, SMS_STATES } from '../../services/sms/list.ts';
import { lastFour } from '../../services/sms/messages.ts';
import type { SmsState } from '../../services/sms/store.ts';
import type { ConsoleKit } from '../kit.ts';
import { esc, layout, table, when } from '../pages.ts';
import {
  OFFSET_REFUSAL,
  offsetOf,
  PAGE_SIZE,
  pageAddress,
  pagingLinks,
  REPEATED_REFUSAL,
  singleValues,
} from '../paging.ts';

type MessagesQuery = { state?: string; organizationId?: string; phone?: string; offset?: string };

const label = (state: string) => state.charAt(0) + state.slice(1).toLowerCase();

/**
 * The Investor messages page (docs/console.md): the SMS outbox newest first, filtered by state,
 * organization and the number's last 4 digits, with counts per state. It only reads: no resend.
 */
export function registerMessagesPage(app: FastifyInstance, kit: ConsoleKit): void {
  const db = kit.ctx.database.db;
  app.get('/console/messages', { config: kit.config }, async (request, reply) => {
    const found = await kit.session(request, reply);
    if (!found) return reply;
    const query: MessagesQuery | undefined = singleValues(request.query);
    if (!query) return kit.refuse(reply, found, 400, REPEATED_REFUSAL);
    const state = query.state || undefined;
    const organizationId = query.organizationId || undefined;
    const phone = query.phone?.trim() || undefined;
    const offset = offsetOf(query.offset);
    if (state !== undefined && !(SMS_STATES as readonly string[]).includes(state))
      return kit.refuse(reply, found, 400, `The state must be one of ${SMS_STATES.join(', ')}.`);
    if (phone !== undefined && !/^\d{4}$/.test(phone))
      return kit.refuse(reply, found, 400, 'The phone filter takes the last 4 digits of the number.');
    if (offset === undefined) return kit.refuse(reply, found, 400, OFFSET_REFUSAL);
    const organizations = await listOrganizations({ db });
    if (organizationId !== undefined && !organizations.some((o) => o.id === organizationId))
      return kit.refuse(reply, found, 400, 'No such organization.');
    const names = new Map(organizations.map((o) => [o.id, o.name]));

    const scope = { organizationId, msisdnEnding: phone };
    const [counts, messages] = await Promise.all([
      countSmsByState(db, scope),
      listSms(db, {
        ...scope,
        state: state as SmsState | undefined,
        limit: PAGE_SIZE + 1,
        offset,
      }),
    ]);
    const shown = messages.slice(0, PAGE_SIZE);
    const filter = { state, organizationId, phone };

    const option = (value: string, text: string, selected: boolean) =>
      `<option value="${esc(value)}"${selected ? ' selected' : ''}>${esc(text)}</option>`;
    const form = `<form method="get" action="/console/messages" class="inline" role="search" aria-label="Filter messages">
<label for="m-state">State<select id="m-state" name="state">${option('', 'All', !state)}${SMS_STATES.map(
      (s) => option(s, label(s), s === state),
    ).join('')}</select></label>
<label for="m-org">Organization<select id="m-org" name="organizationId">${option('', 'All', !organizationId)}${organizations
      .map((o) => option(o.id, o.name, o.id === organizationId))
      .join('')}</select></label>
<label for="m-phone">Phone, last 4 digits<input id="m-phone" name="phone" inputmode="numeric" pattern="[0-9]{4}" maxlength="4" size="6" value="${esc(phone ?? '')}"></label>
<button type="submit">Filter</button>${state || organizationId || phone ? ' <a href="/console/messages">Clear</a>' : ''}</form>`;

    const countTable = table({
      caption: 'Messages per state (organization and phone filters applied)',
      columns: ['State', 'Messages'],
      rows: SMS_STATES.map((s) => [
        `<a href="${esc(pageAddress('/console/messages', { ...filter, state: s }))}">${esc(label(s))}</a>`,
        esc(String(counts[s])),
      ]),
      rowClass: (i) =>
        needsAttention(SMS_STATES[i]!) && counts[SMS_STATES[i]!] > 0 ? 'attention' : undefined,
    });

    const gateway = (m: (typeof shown)[number]) =>
      [
        m.statusCode === null ? '' : String(m.statusCode),
        m.gatewayStatus ?? '',
        m.deliveryStatus ?? '',
        m.failureReason ?? '',
        m.lastError ?? '',
      ]
        .filter((part) => part !== '')
        .join(' · ')
        // A gateway's words could quote a number: no more than its last 4 digits.
        .replace(/\d{3,}(\d{4})/g, '…$1') || '—';
    const list = table({
      caption: `Investor SMS, newest first${offset > 0 ? `, from number ${offset + 1}` : ''}`,
      columns: [
        'Organization',
        'Phone',
        'Kind',
        'Language',
        'State',
        'Attempts',
        'Gateway status / reason',
        'Created',
        'Delivered',
      ],
      rows: shown.map((m) => [
        esc(names.get(m.organizationId) ?? m.organizationId),
        esc(`…${lastFour(m.msisdn)}`),
        esc(m.kind),
        esc(m.language),
        `<span class="badge">${esc(label(m.state))}</span>`,
        esc(String(m.attempts)),
        esc(gateway(m)),
        when(m.createdAt),
        when(m.deliveredAt),
      ]),
      empty: 'No investor SMS match this filter.',
      rowClass: (i) => (shown[i]!.attention ? 'attention' : undefined),
    });

    const paging = pagingLinks('/console/messages', filter, offset, messages.length);

    return kit.html(
      reply,
      200,
      layout(
        'Investor messages',
        `<h1>Investor messages</h1>
<p class="hint">The investor SMS outbox: what was queued, handed to the gateway, delivered or refused. Only the last 4 digits of a number are shown. This page changes nothing.</p>
${form}
<section aria-labelledby="m-counts"><h2 id="m-counts">By state</h2>${countTable}</section>
<section aria-labelledby="m-list"><h2 id="m-list">Messages</h2>${list}${paging}</section>`,
        kit.who(found),
        '/console/messages',
      ),
    );
  });
}
