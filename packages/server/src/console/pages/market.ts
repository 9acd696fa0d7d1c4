import { marketDateSchema } from '@partner-api/contract';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.ts';
import { Big } from '../../lib/money.ts';
import { freshnessNow } from '../../services/investments/market.ts';
import { MARKETS, nextOpen, sessionAt } from '../../services/market/calendar.ts';
import { listHolidays, marketHolidays, removeHoliday, setHoliday } from '../../services/market/holidays.ts';
import {
  decideHeldPrice,
  instrumentPrices,
  listHeldPrices,
  type PriceRecord,
  priceById,
} from '../../services/market/prices.ts';
import { marketHoursEnforced } from '../../services/market/trading.ts';
import type { ConsoleKit, Who } from '../kit.ts';
import { csrfField, esc, layout, notice, table, volatile, when } from '../pages.ts';

const PATH = '/console/market';

/** What `?done=` says after a change. */
const DONE: Record<string, string> = {
  confirmed: 'The held price was confirmed: it is applied.',
  rejected: 'The held price was rejected: it is not applied.',
  'holiday-set': 'The holiday was saved.',
  'holiday-removed': 'The holiday was removed.',
};

/** An age in words: "40 seconds", "3 minutes", "2 hours", "5 days". */
export function ageInWords(from: Date, now: Date): string {
  const seconds = Math.max(0, Math.round((now.getTime() - from.getTime()) / 1000));
  const [value, unit] =
    seconds < 60
      ? [seconds, 'second']
      : seconds < 3600
        ? [Math.floor(seconds / 60), 'minute']
        : seconds < 86_400
          ? [Math.floor(seconds / 3600), 'hour']
          : [Math.floor(seconds / 86_400), 'day'];
  return `${value} ${unit}${value === 1 ? '' : 's'}`;
}

/** The move of a held price from its reference (the previous close), as a signed percentage. */
function moveOf(p: PriceRecord): string {
  if (p.reference === null || new Big(p.reference).lte('0')) return '—';
  const pct = new Big(p.price).div(p.reference).minus('1').times('100');
  return `${pct.gte('0') ? '+' : ''}${pct.toFixed(1)}%`;
}

async function readMarket(ctx: AppContext) {
  const db = ctx.database.db;
  const now = ctx.clock();
  const markets = Object.keys(MARKETS);
  const [instruments, held, fresh, sessions, holidays] = await Promise.all([
    instrumentPrices(db),
    listHeldPrices(db),
    freshnessNow(ctx),
    Promise.all(
      markets.map(async (market) => {
        const rules = MARKETS[market]!;
        const days = await marketHolidays(db, market, now);
        return { market, rules, session: sessionAt(rules, now, days), nextOpen: nextOpen(rules, now, days) };
      }),
    ),
    Promise.all(markets.map((market) => listHolidays(db, market))),
  ]);
  return { now, instruments, held, fresh, sessions, holidays: holidays.flat() };
}

const SESSION_WORDS = { OPEN: 'Open', PRE_OPEN: 'Pre-open', CLOSED: 'Closed' } as const;

function marketPage(
  who: Who,
  data: Awaited<ReturnType<typeof readMarket>>,
  enforced: boolean,
  done?: string,
): string {
  const session = table({
    caption: 'Market sessions now',
    columns: ['Market', 'Now', 'Trading day', 'Next open', 'Hours (local)'],
    rows: data.sessions.map((s) => [
      `${esc(s.rules.name)} (${esc(s.market)})`,
      `<span class="badge">${esc(SESSION_WORDS[s.session.state])}</span>`,
      s.session.tradingDay ? 'Yes' : 'No',
      when(s.nextOpen),
      esc(`${s.rules.open}–${s.rules.close} ${s.rules.timeZone}`),
    ]),
  });

  const held = table({
    caption: 'Held prices',
    columns: ['Instrument', 'Held price', 'Previous close', 'Move', 'As of', 'Source', 'Decide'],
    rows: data.held.map((p) => [
      esc(p.symbol),
      esc(p.price),
      esc(p.reference ?? '—'),
      esc(moveOf(p)),
      when(p.asOf),
      esc(p.source),
      `<form method="post" action="${PATH}/prices/${esc(encodeURIComponent(p.id))}/confirm" class="inline">${csrfField(who)}
<button type="submit" aria-label="Confirm ${esc(p.symbol)} at ${esc(p.price)}">Confirm</button></form>
<form method="post" action="${PATH}/prices/${esc(encodeURIComponent(p.id))}/reject" class="inline">${csrfField(who)}
<button type="submit" class="danger" aria-label="Reject ${esc(p.symbol)} at ${esc(p.price)}">Reject</button></form>`,
    ]),
    rowClass: () => 'attention',
    empty: 'No price is held: every feed price stayed within its band.',
  });

  const staleness = data.instruments.map((i) => !data.fresh(i.priceAsOf));
  const instruments = table({
    caption: 'Instruments and their prices',
    columns: ['Symbol', 'Name', 'Trading status', 'Price', 'Source', 'As of', 'Age', 'Order gate'],
    rows: data.instruments.map((i, n) => [
      esc(i.symbol),
      esc(i.name),
      i.isActive ? 'Active' : 'Inactive',
      esc(`${i.price} ${i.currency}`),
      esc(i.source ?? '—'),
      when(i.priceAsOf),
      i.priceAsOf ? volatile(ageInWords(i.priceAsOf, data.now)) : 'no price',
      `<span class="badge">${staleness[n] ? 'Stale: orders wait' : 'Trades now'}</span>`,
    ]),
    rowClass: (n) => (staleness[n] ? 'attention' : 'ok'),
    empty: 'No instrument is listed.',
  });

  const holidays = table({
    caption: 'Holidays',
    columns: ['Market', 'Date', 'Name', 'Remove'],
    rows: data.holidays.map((h) => [
      esc(h.market),
      esc(h.date),
      esc(h.name),
      `<form method="post" action="${PATH}/holidays/${esc(encodeURIComponent(h.market))}/${esc(h.date)}/remove">${csrfField(who)}
<button type="submit" class="secondary" aria-label="Remove ${esc(h.date)} ${esc(h.name)}">Remove</button></form>`,
    ]),
    empty: 'No holiday is set: only weekends close the market.',
  });
  const marketOptions = Object.keys(MARKETS)
    .map((m) => `<option value="${esc(m)}">${esc(`${MARKETS[m]!.name} (${m})`)}</option>`)
    .join('');
  const addHoliday = `<form method="post" action="${PATH}/holidays" class="inline">${csrfField(who)}
<label for="holiday-market">Market<select id="holiday-market" name="market">${marketOptions}</select></label>
<label for="holiday-date">Date<input id="holiday-date" name="date" type="date" required></label>
<label for="holiday-name">Name<input id="holiday-name" name="name" maxlength="120" required></label>
<button type="submit">Add holiday</button></form>
<p class="hint">A date already set is renamed. Operator role; audited.</p>`;

  const gate = enforced
    ? 'A price older than PRICE_MAX_AGE_SECONDS, or any price outside the session, makes orders wait (the rule of the instruments’ <code>fresh</code> flag).'
    : 'Market hours are not enforced here (MARKET_HOURS): every price trades, as the instruments’ <code>fresh</code> flag says.';
  const stale = staleness.filter(Boolean).length;
  const parts = [
    ...(data.held.length > 0
      ? [`${data.held.length} held price${data.held.length === 1 ? '' : 's'} to confirm or reject`]
      : []),
    ...(stale > 0
      ? [`${stale} stale price${stale === 1 ? '' : 's'}: orders in ${stale === 1 ? 'it' : 'them'} wait`]
      : []),
  ];
  const summary =
    parts.length === 0
      ? '<p class="summary ok">No held price; every price trades now.</p>'
      : `<p class="summary attention">${esc(parts.join('; '))}.</p>`;

  return layout(
    'Market',
    `<h1>Market</h1>${notice(done ? DONE[done] : undefined)}${summary}
<section aria-labelledby="s-session"><h2 id="s-session">Session</h2>${session}</section>
<section aria-labelledby="s-held"><h2 id="s-held">Held prices</h2>
<p class="hint">A feed price beyond its market's daily band from the previous close waits here. Confirm applies it (unless a newer price is applied); reject drops it. Operator role; audited.</p>${held}</section>
<section aria-labelledby="s-instruments"><h2 id="s-instruments">Instruments</h2><p class="hint">${gate}</p>${instruments}</section>
<section aria-labelledby="s-holidays"><h2 id="s-holidays">Holidays</h2>${holidays}${addHoliday}</section>`,
    who,
    PATH,
  );
}

const form = (request: FastifyRequest) => request.body as Record<string, string>;

/** The Market page (docs/console.md): sessions, held prices (confirm, reject), instruments, holidays. */
export function registerMarketPage(app: FastifyInstance, kit: ConsoleKit): void {
  const { ctx } = kit;
  const db = ctx.database.db;

  app.get(PATH, { config: kit.config }, async (request, reply) => {
    const found = await kit.session(request, reply);
    if (!found) return reply;
    const { done } = request.query as { done?: string };
    const data = await readMarket(ctx);
    return kit.html(
      reply,
      200,
      marketPage(
        kit.who(found),
        data,
        marketHoursEnforced(ctx.config),
        done && Object.hasOwn(DONE, done) ? done : undefined,
      ),
    );
  });

  for (const [action, decision, done] of [
    ['confirm', 'APPLIED', 'confirmed'],
    ['reject', 'REJECTED', 'rejected'],
  ] as const) {
    app.post(`${PATH}/prices/:id/${action}`, { config: kit.config }, async (request, reply) => {
      const found = await kit.change(request, reply);
      if (!found) return reply;
      const { id } = request.params as { id: string };
      if (id.length > 64) return kit.refuse(reply, found, 400, 'That is not a price id.');
      const decided = await db.transaction(async (tx) => {
        const before = await priceById(tx, id);
        if (before?.status !== 'HELD') return undefined;
        const [instrumentBefore] = await instrumentPrices(tx, before.symbol);
        const after = await decideHeldPrice(tx, id, decision);
        if (!after) return undefined;
        const [instrumentAfter] = await instrumentPrices(tx, before.symbol);
        await kit.audit(tx, request, {
          targetId: id,
          before: { price: before, instrument: instrumentBefore },
          after: { price: after, instrument: instrumentAfter },
        });
        return after;
      });
      if (!decided)
        return kit.refuse(reply, found, 404, 'No held price has this id: it may have been decided already.');
      request.log.info({ priceId: id, decision }, 'held price decided by the operator');
      return kit.seeOther(reply, `${PATH}?done=${done}`);
    });
  }

  app.post(`${PATH}/holidays`, { config: kit.config }, async (request, reply) => {
    const found = await kit.change(request, reply);
    if (!found) return reply;
    const { market = '', date = '', name = '' } = form(request);
    if (!Object.hasOwn(MARKETS, market))
      return kit.refuse(reply, found, 400, `The market must be one of ${Object.keys(MARKETS).join(', ')}.`);
    if (!marketDateSchema.safeParse(date).success)
      return kit.refuse(reply, found, 400, 'The date must be a real date, as YYYY-MM-DD.');
    const trimmed = name.trim();
    if (trimmed.length < 1 || trimmed.length > 120)
      return kit.refuse(reply, found, 400, 'The holiday needs a name of 1 to 120 characters.');
    await db.transaction(async (tx) => {
      const before = (await listHolidays(tx, market)).find((h) => h.date === date) ?? null;
      const after = await setHoliday(tx, { market, date, name: trimmed });
      await kit.audit(tx, request, { targetId: `${market}/${date}`, before, after });
    });
    return kit.seeOther(reply, `${PATH}?done=holiday-set`);
  });

  app.post(`${PATH}/holidays/:market/:date/remove`, { config: kit.config }, async (request, reply) => {
    const found = await kit.change(request, reply);
    if (!found) return reply;
    const { market, date } = request.params as { market: string; date: string };
    if (!Object.hasOwn(MARKETS, market) || !marketDateSchema.safeParse(date).success)
      return kit.refuse(reply, found, 400, 'That is not a market and a date (YYYY-MM-DD).');
    const removed = await db.transaction(async (tx) => {
      const before = (await listHolidays(tx, market)).find((h) => h.date === date);
      if (!before || !(await removeHoliday(tx, market, date))) return false;
      await kit.audit(tx, request, { targetId: `${market}/${date}`, before, after: null });
      return true;
    });
    if (!removed) return kit.refuse(reply, found, 404, 'No holiday is set on this date.');
    return kit.seeOther(reply, `${PATH}?done=holiday-removed`);
  });
}
