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

type Who = { name: string; role: string; csrfToken: string };

function layout(title: string, main: string, who?: Who): string {
  const header = who
    ? `<header class="bar"><span class="brand">Partner API console</span>
<nav aria-label="Console"><a href="/console" aria-current="page">Overview</a></nav>
<form method="post" action="/console/sign-out" class="who"><span>${esc(who.name)} (${esc(who.role)})</span>
<input type="hidden" name="csrf" value="${esc(who.csrfToken)}"><button type="submit">Sign out</button></form></header>`
    : '<header class="bar"><span class="brand">Partner API console</span></header>';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)} · Partner API console</title><link rel="stylesheet" href="/console/assets/console.css"></head>
<body>${header}<main id="main">${main}</main></body></html>`;
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
<form method="post" action="/console/payments/reconcile"><input type="hidden" name="csrf" value="${esc(who.csrfToken)}">
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
