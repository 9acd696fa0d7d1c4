import {
  INVESTMENT_TYPE_DETAILS,
  INVESTMENT_TYPES,
  type Instrument,
  type InstrumentList,
  type InstrumentListQuery,
  type InvestmentType,
  type InvestmentTypeId,
  type LatestPrice,
} from '@partner-api/contract';
import { type SQL, sql } from 'drizzle-orm';
import type { AppContext } from '../../context.ts';
import type { Queryable } from '../../db/client.ts';
import { dateOf, one, rows } from '../../db/query.ts';
import { likePattern } from '../customers/list.ts';
import { tradesNow, tradingNow } from '../market/trading.ts';
import { DEFAULT_MIN_BUY_AMOUNT } from '../ussd/menus.ts';

/**
 * Instruments are the platform's catalogue, the same for every organization: nothing here reads or
 * returns an organization's data. Only instruments of an admitted type are in it.
 */
const ADMITTED = sql.join(
  INVESTMENT_TYPES.map((type) => sql`${type}`),
  sql`, `,
);

type InstrumentRow = {
  id: string;
  symbol: string;
  name: string;
  investmentType: InvestmentTypeId;
  isin: string | null;
  market: string;
  currency: string;
  isActive: boolean;
  minOrderAmount: string | null;
  fractional: boolean;
  price: string;
  priceAsOf: string | null;
  createdAt: string;
  updatedAt: string;
};

const instrumentColumns = sql`id, symbol, name, investment_type as "investmentType", isin, market, currency,
  is_active as "isActive", min_order_amount::text as "minOrderAmount", fractional, price::text as price,
  price_as_of::text as "priceAsOf", created_at::text as "createdAt", updated_at::text as "updatedAt"`;

/** Whether an order placed now executes at a price of this as-of time. */
export type Freshness = (asOf: Date | null) => boolean;

/**
 * The rule a paid order meets now (services/market/trading.ts, `marketGate`): with market hours
 * enforced, the NSE's continuous session and a price at most PRICE_MAX_AGE_SECONDS old; without
 * them (the sandbox's default) every price trades. Read once per request.
 */
export async function freshnessNow(ctx: AppContext, q?: Queryable): Promise<Freshness> {
  const trading = await tradingNow(ctx, q);
  return (asOf) => tradesNow(trading, asOf);
}

export function latestPriceOf(
  row: { price: string; currency: string; priceAsOf: string | null },
  fresh: Freshness,
): LatestPrice {
  const asOf = dateOf(row.priceAsOf);
  return { value: row.price, currency: row.currency, asOf: asOf?.toISOString() ?? null, fresh: fresh(asOf) };
}

function presentInstrument(row: InstrumentRow, fresh: Freshness): Instrument {
  return {
    id: row.id,
    symbol: row.symbol,
    name: row.name,
    investmentType: row.investmentType,
    isin: row.isin,
    market: row.market,
    currency: row.currency,
    tradingStatus: row.isActive ? 'ACTIVE' : 'INACTIVE',
    minOrderAmount: row.minOrderAmount ?? DEFAULT_MIN_BUY_AMOUNT.toFixed(2),
    fractional: row.fractional,
    latestPrice: latestPriceOf(row, fresh),
    createdAt: dateOf(row.createdAt).toISOString(),
    updatedAt: dateOf(row.updatedAt).toISOString(),
  };
}

/** GET /investment-types: every admitted type, in the list's order, with its active instruments. */
export async function listInvestmentTypes(db: Queryable): Promise<InvestmentType[]> {
  const counts = await rows<{ type: string; active: number }>(
    db,
    sql`select investment_type as type, count(*)::int as active from stocks
  where is_active and investment_type in (${ADMITTED}) group by investment_type`,
  );
  return INVESTMENT_TYPES.map((id) => ({
    id,
    ...INVESTMENT_TYPE_DETAILS[id],
    activeInstruments: counts.find((c) => c.type === id)?.active ?? 0,
  }));
}

/** Symbol or name, case-insensitive substring: the USSD search (`matchStocks`) on the whole catalogue. */
function searchCondition(term: string): SQL {
  const pattern = sql`lower(${likePattern(term)}) escape '\\'`;
  return sql`(lower(symbol) like ${pattern} or lower(name) like ${pattern})`;
}

/**
 * GET /instruments: by symbol (the unique index `stocks_symbol_key` gives the order), with true
 * totals even past the last page.
 */
export async function listInstruments(
  db: Queryable,
  query: InstrumentListQuery,
  fresh: Freshness,
): Promise<InstrumentList> {
  const conditions: SQL[] = [sql`investment_type in (${ADMITTED})`];
  if (query.investmentType) conditions.push(sql`investment_type = ${query.investmentType}`);
  if (query.tradingStatus) conditions.push(sql`is_active = ${query.tradingStatus === 'ACTIVE'}`);
  if (query.search) conditions.push(searchCondition(query.search));
  const where = sql.join(conditions, sql` and `);
  const [page, count] = await Promise.all([
    rows<InstrumentRow>(
      db,
      sql`select ${instrumentColumns} from stocks where ${where}
  order by symbol limit ${query.limit} offset ${(query.page - 1) * query.limit}`,
    ),
    one<{ total: number }>(db, sql`select count(*)::int as total from stocks where ${where}`),
  ]);
  const total = count?.total ?? 0;
  return {
    data: page.map((row) => presentInstrument(row, fresh)),
    pagination: { page: query.page, limit: query.limit, total, totalPages: Math.ceil(total / query.limit) },
  };
}

/** GET /instruments/{instrumentId}; undefined when no admitted instrument has that id. */
export async function getInstrument(
  db: Queryable,
  id: string,
  fresh: Freshness,
): Promise<Instrument | undefined> {
  const row = await one<InstrumentRow>(
    db,
    sql`select ${instrumentColumns} from stocks where id = ${id} and investment_type in (${ADMITTED})`,
  );
  return row && presentInstrument(row, fresh);
}

/**
 * INSTRUMENT.CREATED or INSTRUMENT.UPDATED for each instrument the operator's catalogue upsert wrote
 * (POST /admin/stocks), to every organization, on the upsert's transaction and only with the
 * investments events on (docs/investments.md, Events). `data` is the instrument as
 * GET /v1/instruments/{instrumentId} answers it then. Price moves (feed, edits) are market data,
 * read from the instruments, not events.
 */
export async function announceInstruments(
  q: Queryable,
  ctx: AppContext,
  written: { id: string; created: boolean }[],
): Promise<void> {
  if (!ctx.events.investments || written.length === 0) return;
  const fresh = await freshnessNow(ctx, q);
  for (const { id, created } of written) {
    const instrument = await getInstrument(q, id, fresh);
    if (!instrument) continue;
    const event = created ? 'INSTRUMENT.CREATED' : 'INSTRUMENT.UPDATED';
    await ctx.events.broadcast(q, { event, data: instrument });
  }
}
