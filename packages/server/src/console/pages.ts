import type { OverviewSection } from './overview.ts';

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};
/** Text for HTML content and attribute values. */
export const esc = (value: string) => value.replace(/[&<>"']/g, (c) => ESCAPES[c]!);

import type { Who } from './kit.ts';

/** The console's pages, in the navigation's order. */
export const NAV: ReadonlyArray<readonly [path: string, label: string]> = [
  ['/console', 'Overview'],
  ['/console/payments', 'Payments'],
  ['/console/charts', 'Charts'],
  ['/console/partners', 'Partners'],
  ['/console/market', 'Market'],
  ['/console/book', 'Book'],
  ['/console/messages', 'Investor messages'],
  ['/console/audit', 'Audit log'],
];

/** The page around `main`: the header (navigation, operator, sign-out) once signed in. */
export function layout(title: string, main: string, who?: Who, current = '/console'): string {
  const links = NAV.map(
    ([href, label]) => `<a href="${href}"${href === current ? ' aria-current="page"' : ''}>${esc(label)}</a>`,
  ).join('');
  const header = who
    ? `<header class="bar"><span class="brand">Partner API console</span>
<nav aria-label="Console">${links}</nav>
<form method="post" action="/console/sign-out" class="who"><span>${volatile(who.name)} (${esc(who.role)})</span>
${csrfField(who)}<button type="submit">Sign out</button></form></header>`
    : '<header class="bar"><span class="brand">Partner API console</span></header>';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)} · Partner API console</title><link rel="stylesheet" href="/console/assets/console.css"></head>
<body>${header}<main id="main">${main}</main></body></html>`;
}

/** The hidden CSRF field every console form carries. */
export const csrfField = (who: Who) => `<input type="hidden" name="csrf" value="${esc(who.csrfToken)}">`;

/** A notice at the top of a page: `status` for news, `alert` for a refusal. */
export const notice = (text: string | undefined, role: 'status' | 'alert' = 'status') =>
  text ? `<p class="notice${role === 'alert' ? ' error' : ''}" role="${role}">${esc(text)}</p>` : '';

/**
 * Text that differs from run to run (ids, times, ages): the screenshot tests mask `.volatile`, so
 * wrap such values in it and keep everything else deterministic.
 */
export const volatile = (text: string) => `<span class="volatile">${esc(text)}</span>`;

/** A time as `2026-11-29 13:05:09Z`, volatile. */
export const when = (at: Date | string | null | undefined) =>
  at
    ? volatile(
        new Date(at)
          .toISOString()
          .replace('T', ' ')
          .replace(/\.\d{3}Z$/, 'Z'),
      )
    : '—';

/**
 * A table of already-escaped cells (wrap text with `esc`). `caption` names it for assistive
 * technology; a narrow screen scrolls the table inside its own box, not the page.
 */
export function table(input: {
  caption: string;
  columns: string[];
  rows: string[][];
  empty?: string;
  rowClass?: (index: number) => string | undefined;
}): string {
  if (input.rows.length === 0) return `<p class="empty">${esc(input.empty ?? 'Nothing to show.')}</p>`;
  const head = input.columns.map((c) => `<th scope="col">${esc(c)}</th>`).join('');
  const body = input.rows
    .map((cells, i) => {
      const cls = input.rowClass?.(i);
      const tds = cells.map((c, j) => `<td data-label="${esc(input.columns[j] ?? '')}">${c}</td>`).join('');
      return `<tr${cls ? ` class="${esc(cls)}"` : ''}>${tds}</tr>`;
    })
    .join('\n');
  return `<div class="scroll" role="region" aria-label="${esc(input.caption)}" tabindex="0"><table><caption>${esc(input.caption)}</caption><thead><tr>${head}</tr></thead><tbody>
${body}
</tbody></table></div>`;
}

export function signInPage(input: { csrfToken: string; message?: string; name?: string }): string {
  const message = input.message ? `<p class="notice" role="alert">${esc(input.message)}</p>` : '';
  return layout(
    'Sign in',
    `<h1>Sign in</h1>${message}
<form method="post" action="/console/sign-in" class="sign-in">
<input type="hidden" name="csrf" value="${esc(input.csrfToken)}">
<label for="name">Operator name</label>
<input id="name" name="name" autocomplete="username" required value="${esc(input.name ?? '')}">
<label for="credential">Credential</label>
<input id="credential" name="credential" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button></form>`,
  );
}

export function overviewPage(who: Who, sections: OverviewSection[], notice?: string): string {
  const attention = sections.flatMap((s) => s.items).filter((i) => i.attention).length;
  const summary =
    attention === 0
      ? '<p class="summary ok">Nothing needs a person now.</p>'
      : `<p class="summary attention">${attention} item${attention === 1 ? '' : 's'} need${attention === 1 ? 's' : ''} a person.</p>`;
  const body = sections
    .map(
      (
        section,
      ) => `<section aria-labelledby="s-${esc(slug(section.title))}"><h2 id="s-${esc(slug(section.title))}">${esc(section.title)}</h2>
<table><thead><tr><th scope="col">What</th><th scope="col">Now</th><th scope="col">Status</th></tr></thead><tbody>
${section.items
  .map(
    (item) => `<tr class="${item.attention ? 'attention' : 'ok'}"><th scope="row">${esc(item.label)}</th>
<td>${esc(item.value)}${item.detail ? `<br><small>${esc(item.detail)}</small>` : ''}</td>
<td><span class="badge">${item.attention ? 'Needs attention' : 'OK'}</span></td></tr>`,
  )
  .join('\n')}
</tbody></table></section>`,
    )
    .join('\n');
  const actions = `<section aria-labelledby="s-actions"><h2 id="s-actions">Actions</h2>
<form method="post" action="/console/payments/reconcile">${csrfField(who)}
<button type="submit">Reconcile stuck payments now</button>
<p class="hint">Makes every unfinished provider request due at once, so the payment worker queries it (operator role).</p></form></section>`;
  return layout(
    'Overview',
    `<h1>Overview</h1>${notice ? `<p class="notice" role="status">${esc(notice)}</p>` : ''}${summary}${body}${actions}`,
    who,
  );
}

export function refusedPage(who: Who | undefined, status: number, message: string): string {
  return layout(
    status === 403 ? 'Refused' : 'Error',
    `<h1>${status === 403 ? 'Refused' : 'Something is wrong'}</h1><p class="notice" role="alert">${esc(message)}</p><p><a href="/console">Back to the Overview</a></p>`,
    who,
  );
}

const slug = (text: string) => text.toLowerCase().replace(/[^a-z0-9]+/g, '-');
