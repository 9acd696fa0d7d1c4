import { marketDateSchema } from '@partner-api/contract';
import type { FastifyInstance } from 'fastify';
import { Big } from '../../lib/money.ts';
import { type BookLine, bookFor } from '../../services/market/book.ts';
import { localTime, NSE } from '../../services/market/calendar.ts';
import { checkLedger, type LedgerDifference } from '../../services/market/ledger-check.ts';
import type { ConsoleKit, Who } from '../kit.ts';
import { esc, layout, table, volatile } from '../pages.ts';

const PATH = '/console/book';
/** The ledger check's differences listed at most; the summary counts them all. */
const LISTED = 200;

/** Whole shares to buy (positive) or that could be sold (negative), in words. */
function tradeOf(line: BookLine): string {
  const n = new Big(line.toTrade);
  if (n.eq('0')) return 'Nothing';
  return n.gt('0') ? `Buy ${n.toFixed(0)}` : `Sell ${n.abs().toFixed(0)}`;
}

/** Claims less the pooled position (positive: customers hold more than the broker). */
const differenceOf = (line: BookLine) => new Big(line.claims).minus(line.pooled ?? '0').toFixed(4);

const KIND_WORDS: Record<LedgerDifference['kind'], string> = {
  HOLDING: 'Holding differs from its units entries',
  PENDING: 'Units pending settlement differ from unsettled buys',
  MONEY_ENTRY: 'Successful transaction without its money entry',
  MONEY_HELD: 'Money held for an order differs from its state',
  BUY_WITHOUT_COLLECTION: 'Executed buy without exactly one collection',
  SELL_WITHOUT_PAYOUT: 'Executed sell without exactly one payout',
  EXECUTION_MISSING: 'Executed order without exactly one execution',
};

/** A difference's subject (ids, volatile) and its figures (deterministic words). */
function describe(d: LedgerDifference): [subject: string, figures: string] {
  switch (d.kind) {
    case 'HOLDING':
      return [
        `customer ${volatile(d.customerId)}, ${esc(d.symbol)}`,
        esc(`holding ${d.holding}, entries ${d.ledger}`),
      ];
    case 'PENDING':
      return [
        `customer ${volatile(d.customerId)}, ${esc(d.symbol)}`,
        esc(`pending ${d.pending}, unsettled ${d.unsettled}`),
      ];
    case 'MONEY_ENTRY':
      return [
        `transaction ${volatile(d.transactionId)}, order ${volatile(d.orderId)}`,
        esc(`amount ${d.amount}, entered ${d.entered ?? 'none'}`),
      ];
    case 'MONEY_HELD':
      return [`order ${volatile(d.orderId)}`, esc(`${d.status}: held ${d.held}, expected ${d.expected}`)];
    case 'BUY_WITHOUT_COLLECTION':
      return [`order ${volatile(d.orderId)}`, esc(`${d.collections} collections`)];
    case 'SELL_WITHOUT_PAYOUT':
      return [`order ${volatile(d.orderId)}`, esc(`${d.payouts} payouts`)];
    case 'EXECUTION_MISSING':
      return [`order ${volatile(d.orderId)}`, 'no execution'];
  }
}

function bookPage(who: Who, date: string, today: string, lines: BookLine[], differences: LedgerDifference[]) {
  const shortfalls = lines.filter((l) => l.shortfall).length;
  const book = table({
    caption: `Book of ${date}`,
    columns: [
      'Instrument',
      'Bought',
      'Sold',
      'Claims',
      'Pooled position',
      'Difference',
      'To buy or sell',
      'Status',
    ],
    rows: lines.map((l) => [
      esc(l.symbol),
      esc(l.bought),
      esc(l.sold),
      esc(l.claims),
      l.pooled === null ? 'never recorded' : esc(`${l.pooled} (recorded for ${l.pooledDate})`),
      esc(differenceOf(l)),
      esc(tradeOf(l)),
      `<span class="badge">${l.shortfall ? 'Short: claims exceed the position' : 'Covered'}</span>`,
    ]),
    rowClass: (n) => (lines[n]!.shortfall ? 'attention' : 'ok'),
    empty: 'Nobody holds, traded or has a pooled position in any instrument on this day.',
  });
  const ledger = table({
    caption: 'Ledger check differences',
    columns: ['Difference', 'Of', 'Figures'],
    rows: differences.slice(0, LISTED).map((d) => {
      const [subject, figures] = describe(d);
      return [esc(KIND_WORDS[d.kind]), subject, figures];
    }),
    rowClass: () => 'attention',
    empty: 'No difference: the ledger balances.',
  });
  const summary =
    shortfalls === 0 && differences.length === 0
      ? '<p class="summary ok">The pooled position covers every claim and the ledger balances.</p>'
      : `<p class="summary attention">${shortfalls} instrument${shortfalls === 1 ? '' : 's'} short; ${differences.length} ledger difference${differences.length === 1 ? '' : 's'}.</p>`;
  return layout(
    'Book',
    `<h1>Book</h1>${summary}
<form method="get" action="${PATH}" class="inline"><label for="book-date">Day (NSE, ${esc(NSE.timeZone)})<input id="book-date" name="date" type="date" value="${esc(date)}" required></label>
<button type="submit">Show</button>${date === today ? '' : ` <a href="${PATH}">Today</a>`}</form>
<section aria-labelledby="s-book"><h2 id="s-book">Claims and the pooled position</h2>
<p class="hint">Claims: what customers hold at the end of the day. To buy or sell: whole shares so that the pooled position covers the claims (claims rounded up). The broker's position is recorded with <code>partner-api book position &lt;symbol&gt; &lt;units&gt; --on &lt;date&gt;</code>.</p>${book}</section>
<section aria-labelledby="s-ledger"><h2 id="s-ledger">Ledger check</h2>
<p class="hint">Every organization's units and money ledgers against holdings, orders and transactions, read now (not for the day above).${differences.length > LISTED ? ` The first ${LISTED} of ${differences.length} are listed; <code>partner-api ledger check</code> lists them all.` : ''}</p>${ledger}</section>`,
    who,
    PATH,
  );
}

/** The Book page (docs/console.md): a day's claims against the pooled position, and the ledger check. */
export function registerBookPage(app: FastifyInstance, kit: ConsoleKit): void {
  const db = kit.ctx.database.db;
  app.get(PATH, { config: kit.config }, async (request, reply) => {
    const found = await kit.session(request, reply);
    if (!found) return reply;
    const { date } = request.query as { date?: string };
    const today = localTime(NSE.timeZone, kit.ctx.clock()).date;
    if (date !== undefined && date !== '' && !marketDateSchema.safeParse(date).success)
      return kit.refuse(reply, found, 400, 'The day must be a real date, as YYYY-MM-DD.');
    const day = date || today;
    const [lines, differences] = await Promise.all([bookFor(db, day), checkLedger(db)]);
    return kit.html(reply, 200, bookPage(kit.who(found), day, today, lines, differences));
  });
}
