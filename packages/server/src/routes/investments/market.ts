import {
  ErrorLabel,
  type InstrumentListQuery,
  InstrumentMessage,
  type InstrumentPricesQuery,
  instrumentIdParamsSchema,
  instrumentListQuerySchema,
  instrumentPricesQuerySchema,
  investmentTypeListQuerySchema,
} from '@partner-api/contract';
import type { FastifyInstance } from 'fastify';
import { AppError, validationFailed } from '../../lib/errors.ts';
import {
  freshnessNow,
  getInstrument,
  listInstruments,
  listInvestmentTypes,
} from '../../services/investments/market.ts';
import { rulesOf } from '../../services/market/calendar.ts';
import { dailyRange } from '../../services/market/daily-range.ts';
import { dailyBars } from '../../services/market/prices.ts';
import type { RouteDeps } from '../deps.ts';

/** The catalogue is global, but an id it does not hold is answered like any unknown resource. */
const instrumentNotFound = () => new AppError(404, ErrorLabel.notFound, InstrumentMessage.notFound);

type ById = { Params: { instrumentId: string } };

/**
 * The investments API (docs/investments.md): investment types, instruments and their prices
 * (read-only). Instruments are the platform's, the same for every organization; no event is emitted.
 */
export async function marketRoutes(app: FastifyInstance, { ctx }: RouteDeps) {
  const db = ctx.database.db;

  app.get('/investment-types', { schema: { querystring: investmentTypeListQuerySchema } }, async () => ({
    data: await listInvestmentTypes(db),
  }));

  app.get<{ Querystring: InstrumentListQuery }>(
    '/instruments',
    { schema: { querystring: instrumentListQuerySchema } },
    async (request) => listInstruments(db, request.query, await freshnessNow(ctx)),
  );

  app.get<ById>(
    '/instruments/:instrumentId',
    { schema: { params: instrumentIdParamsSchema } },
    async (request) => {
      const data = await getInstrument(db, request.params.instrumentId, await freshnessNow(ctx));
      if (!data) throw instrumentNotFound();
      return { data };
    },
  );

  app.get<ById & { Querystring: InstrumentPricesQuery }>(
    '/instruments/:instrumentId/prices',
    { schema: { params: instrumentIdParamsSchema, querystring: instrumentPricesQuerySchema } },
    async (request) => {
      const instrument = await getInstrument(db, request.params.instrumentId, await freshnessNow(ctx));
      if (!instrument) throw instrumentNotFound();
      const { timeZone } = rulesOf(instrument.market);
      // The dates are checked against the instrument's time zone: known only once it is found.
      const range = dailyRange(request.query, timeZone, ctx.clock());
      if ('invalid' in range) throw validationFailed(range.invalid);
      const daily = await dailyBars(db, instrument.id, range.from, range.to, timeZone);
      return {
        data: {
          instrumentId: instrument.id,
          symbol: instrument.symbol,
          market: instrument.market,
          timeZone,
          currency: instrument.currency,
          latest: instrument.latestPrice,
          from: range.from,
          to: range.to,
          daily,
        },
      };
    },
  );
}
