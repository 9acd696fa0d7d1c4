import { marketDateSchema } from '@partner-api/contract';
import type { FastifyInstance } from 'fastify';
import { listAudit } from '../../services/audit/log.ts';
import type { ConsoleKit } from '../kit.ts';
import { esc, layout, table, volatile, when } from '../pages.ts';
import {
  OFFSET_REFUSAL,
  offsetOf,
  PAGE_SIZE,
  pagingLinks,
  REPEATED_REFUSAL,
  singleValues,
} from '../paging.ts';

type AuditQuery = {
  actor?: string;
  route?: string;
  from?: string;
  to?: string;
  target?: string;
  offset?: string;
};

/** A `YYYY-MM-DD` day's start (UTC), or undefined when it is not a real day (the contract's rule). */
const dayOf = (text: string): Date | undefined =>
  marketDateSchema.safeParse(text).success ? new Date(`${text}T00:00:00Z`) : undefined;

/** Stored JSON (already redacted when written), pretty and escaped. */
function json(value: unknown): string {
  if (value === null || value === undefined) return '<p class="empty">None.</p>';
  return `<pre>${esc(JSON.stringify(typeof value === 'string' ? safeParse(value) : value, null, 2))}</pre>`;
}
function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * The Audit log page (docs/console.md): every change through the admin API and the console, newest
 * first, searched by actor, route, days and target id; its body, before and after as stored.
 */
export function registerAuditPage(app: FastifyInstance, kit: ConsoleKit): void {
  const db = kit.ctx.database.db;
  app.get('/console/audit', { config: kit.config }, async (request, reply) => {
    const found = await kit.session(request, reply);
    if (!found) return reply;
    const query: AuditQuery | undefined = singleValues(request.query);
    if (!query) return kit.refuse(reply, found, 400, REPEATED_REFUSAL);
    const filter = {
      actor: query.actor?.trim() || undefined,
      route: query.route?.trim() || undefined,
      from: query.from || undefined,
      to: query.to || undefined,
      target: query.target?.trim() || undefined,
    };
    const offset = offsetOf(query.offset);
    if (offset === undefined) return kit.refuse(reply, found, 400, OFFSET_REFUSAL);
    for (const [key, value] of Object.entries(filter))
      if (value && value.length > 200) return kit.refuse(reply, found, 400, `The ${key} filter is too long.`);
    const from = filter.from ? dayOf(filter.from) : undefined;
    const to = filter.to ? dayOf(filter.to) : undefined;
    if ((filter.from && !from) || (filter.to && !to))
      return kit.refuse(reply, found, 400, 'From and to must be days as YYYY-MM-DD.');
    if (from && to && to < from) return kit.refuse(reply, found, 400, 'To must not be before from.');

    const entries = await listAudit(db, {
      actor: filter.actor,
      route: filter.route,
      from,
      // The "to" day is included: the log's bound is exclusive.
      to: to ? new Date(to.getTime() + 86_400_000) : undefined,
      target: filter.target,
      limit: PAGE_SIZE + 1,
      offset,
    });
    const shown = entries.slice(0, PAGE_SIZE);

    const field = (id: string, name: keyof typeof filter, text: string, extra = '') =>
      `<label for="${id}">${esc(text)}<input id="${id}" name="${name}" value="${esc(filter[name] ?? '')}"${extra}></label>`;
    const form = `<form method="get" action="/console/audit" class="inline" role="search" aria-label="Search the audit log">
${field('a-actor', 'actor', 'Actor (name, id or admin-token)')}
${field('a-route', 'route', 'Route pattern', ' placeholder="/admin/operators/:id/deactivate"')}
${field('a-from', 'from', 'From day', ' type="date"')}
${field('a-to', 'to', 'To day (included)', ' type="date"')}
${field('a-target', 'target', 'Target id contains')}
<button type="submit">Search</button>${Object.values(filter).some(Boolean) ? ' <a href="/console/audit">Clear</a>' : ''}</form>`;

    const list = table({
      caption: `Audit entries, newest first${offset > 0 ? `, from number ${offset + 1}` : ''}`,
      columns: ['When', 'Who', 'What', 'Target', 'Status', 'From', 'Body, before, after'],
      rows: shown.map((e) => [
        when(e.at),
        e.actor.type === 'operator' ? volatile(e.actor.name ?? e.actor.id ?? '') : esc('admin token'),
        `${esc(e.method)} <code>${esc(e.route)}</code>`,
        e.targetId ? volatile(e.targetId) : '—',
        esc(String(e.status)),
        esc(e.ip),
        `<details><summary>Show</summary><h3>Body</h3>${json(e.body)}<h3>Before</h3>${json(e.before)}<h3>After</h3>${json(e.after)}</details>`,
      ]),
      empty: 'No audit entry matches this search.',
      rowClass: (i) => (shown[i]!.status >= 400 ? 'refused' : undefined),
    });

    return kit.html(
      reply,
      200,
      layout(
        'Audit log',
        `<h1>Audit log</h1>
<p class="hint">Every change made through the admin API or this console: who, what, the target, the answer's status, the address it came from and when. Append-only; secrets were redacted when it was written.</p>
${form}
<section aria-labelledby="a-list"><h2 id="a-list">Entries</h2>${list}${pagingLinks('/console/audit', filter, offset, entries.length)}</section>`,
        kit.who(found),
        '/console/audit',
      ),
    );
  });
}
