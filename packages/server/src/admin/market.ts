import { instrumentPricesQuerySchema, marketDateSchema } from '@partner-api/contract';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { AppContext } from '../context.ts';
import { AppError, validationFailed } from '../lib/errors.ts';
import { bookFor, recordPooledPosition } from '../services/market/book.ts';
import { localTime, MARKETS, NSE, nextOpen, rulesOf, sessionAt } from '../services/market/calendar.ts';
import { dailyRange } from '../services/market/daily-range.ts';
import { listHolidays, marketHolidays, removeHoliday, setHoliday } from '../services/market/holidays.ts';
import { checkLedger } from '../services/market/ledger-check.ts';
import {
  dailyBars,
  decideHeldPrice,
  instrumentBySymbol,
  listHeldPrices,
  listPrices,
  recordPrice,
} from '../services/market/prices.ts';
import { price } from './trading.ts';

const marketParams = z.strictObject({
  market: z
    .string()
    .toUpperCase()
    .refine((m) => Object.hasOwn(MARKETS, m), `market must be one of ${Object.keys(MARKETS).join(', ')}`),
});
const isoDate = marketDateSchema;
const holidayParams = marketParams.extend({ date: isoDate });
const holidayBody = z.strictObject({ name: z.string().trim().min(1).max(120) });
const symbolParams = z.strictObject({ symbol: z.string().trim().toUpperCase().min(1).max(12) });
const priceIdParams = z.strictObject({ id: z.string().min(1).max(64) });
const rangeQuery = z.strictObject({
  from: z.iso.datetime({ offset: true }).optional(),
  to: z.iso.datetime({ offset: true }).optional(),
});
/** Daily bars: dates in the instrument's market time zone, both included (the partners' rules too). */
const dailyQuery = instrumentPricesQuerySchema;
const priceBody = z.strictObject({
  symbol: z.string().trim().toUpperCase().min(1).max(12),
  price,
  /** Default now: an operator's edit is a price as of the moment it is made. */
  asOf: z.iso.datetime({ offset: true }).optional(),
});

const UNITS = /^\d{1,16}(\.\d{1,4})?$/;
const positionParams = symbolParams.extend({ date: isoDate });
const positionBody = z.strictObject({
  units: z
    .union([z.string(), z.number().transform(String)])
    .pipe(z.string().regex(UNITS, 'units must be a decimal of at least 0 with up to 4 decimals')),
});
const bookQuery = z.strictObject({ date: isoDate.optional() });
const ledgerQuery = z.strictObject({ organizationId: z.string().min(1).max(64).optional() });

const priceNotFound = () => new AppError(404, 'Not found', 'No held price has this id');
const instrumentNotFound = () => new AppError(404, 'Not found', 'Instrument not found');

/** Operator calls for market calendars (sessions, holidays) and prices (edits, held prices, series). */
export function registerMarketRoutes(app: FastifyInstance, ctx: AppContext): void {
  const db = ctx.database.db;

  app.get('/admin/markets/:market/session', { schema: { params: marketParams } }, async (request) => {
    const { market } = request.params as z.output<typeof marketParams>;
    const rules = MARKETS[market]!;
    const now = ctx.clock();
    const holidays = await marketHolidays(db, market, now);
    const session = sessionAt(rules, now, holidays);
    return { data: { market, ...session, at: now, nextOpen: nextOpen(rules, now, holidays) } };
  });
  app.get('/admin/markets/:market/holidays', { schema: { params: marketParams } }, async (request) => {
    const { market } = request.params as z.output<typeof marketParams>;
    return { data: await listHolidays(db, market) };
  });
  app.put(
    '/admin/markets/:market/holidays/:date',
    { schema: { params: holidayParams, body: holidayBody } },
    async (request) => {
      const { market, date } = request.params as z.output<typeof holidayParams>;
      const { name } = request.body as z.output<typeof holidayBody>;
      return { data: await setHoliday(db, { market, date, name }) };
    },
  );
  app.delete(
    '/admin/markets/:market/holidays/:date',
    { schema: { params: holidayParams } },
    async (request, reply) => {
      const { market, date } = request.params as z.output<typeof holidayParams>;
      if (!(await removeHoliday(db, market, date)))
        throw new AppError(404, 'Not found', 'No holiday on this date');
      return reply.code(204).send();
    },
  );

  app.post('/admin/prices', { schema: { body: priceBody } }, async (request, reply) => {
    const body = request.body as z.output<typeof priceBody>;
    const asOf = body.asOf ? new Date(body.asOf) : ctx.clock();
    const recorded = await db.transaction((tx) =>
      recordPrice(tx, { symbol: body.symbol, price: body.price, asOf, source: 'EDIT' }),
    );
    if (!recorded) throw instrumentNotFound();
    return reply.code(201).send({ data: recorded });
  });
  app.get('/admin/prices/held', async () => ({ data: await listHeldPrices(db) }));
  for (const [action, decision] of [
    ['confirm', 'APPLIED'],
    ['reject', 'REJECTED'],
  ] as const) {
    app.post(`/admin/prices/:id/${action}`, { schema: { params: priceIdParams } }, async (request) => {
      const { id } = request.params as z.output<typeof priceIdParams>;
      const decided = await db.transaction((tx) => decideHeldPrice(tx, id, decision));
      if (!decided) throw priceNotFound();
      request.log.info({ priceId: id, decision }, 'held price decided by the operator');
      return { data: decided };
    });
  }
  // The operator's book: the broker's pooled position per instrument, and the day's book against it.
  app.put(
    '/admin/book/positions/:symbol/:date',
    { schema: { params: positionParams, body: positionBody } },
    async (request) => {
      const { symbol, date } = request.params as z.output<typeof positionParams>;
      const { units } = request.body as z.output<typeof positionBody>;
      const recorded = await recordPooledPosition(db, { symbol, date, units });
      if (!recorded) throw instrumentNotFound();
      request.log.info({ symbol, date, units }, 'pooled position recorded by the operator');
      return { data: recorded };
    },
  );
  app.get('/admin/ledger/check', { schema: { querystring: ledgerQuery } }, async (request) => {
    const { organizationId } = request.query as z.output<typeof ledgerQuery>;
    const differences = await checkLedger(db, organizationId);
    return { data: { balanced: differences.length === 0, differences } };
  });
  app.get('/admin/book', { schema: { querystring: bookQuery } }, async (request) => {
    const { date } = request.query as z.output<typeof bookQuery>;
    const day = date ?? localTime(NSE.timeZone, ctx.clock()).date;
    return { data: { date: day, lines: await bookFor(db, day) } };
  });
  app.get(
    '/admin/instruments/:symbol/prices',
    { schema: { params: symbolParams, querystring: rangeQuery } },
    async (request) => {
      const { symbol } = request.params as z.output<typeof symbolParams>;
      const { from, to } = request.query as z.output<typeof rangeQuery>;
      const found = await listPrices(db, symbol, {
        ...(from ? { from: new Date(from) } : {}),
        ...(to ? { to: new Date(to) } : {}),
      });
      return { data: found };
    },
  );
  app.get(
    '/admin/instruments/:symbol/prices/daily',
    { schema: { params: symbolParams, querystring: dailyQuery } },
    async (request) => {
      const { symbol } = request.params as z.output<typeof symbolParams>;
      const query = request.query as z.output<typeof dailyQuery>;
      const stock = await instrumentBySymbol(db, symbol);
      if (!stock) throw instrumentNotFound();
      const { timeZone } = rulesOf(stock.market);
      const range = dailyRange(query, timeZone, ctx.clock());
      if ('invalid' in range) throw validationFailed(range.invalid);
      const { from, to } = range;
      const bars = await dailyBars(db, stock.id, from, to, timeZone);
      return { data: { symbol, market: stock.market, timeZone, from, to, bars } };
    },
  );
}
