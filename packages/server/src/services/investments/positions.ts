import type { Asset, Portfolio, PortfolioPosition } from '@partner-api/contract';
import { ACCOUNT_CURRENCY } from '@partner-api/contract';
import { sql } from 'drizzle-orm';
import type { Queryable } from '../../db/client.ts';
import { dateOf, rows } from '../../db/query.ts';
import {
  AMOUNT_DECIMALS,
  Big,
  type Decimal,
  holdingValue,
  PRICE_DECIMALS,
  UNITS_DECIMALS,
} from '../../lib/money.ts';

/*
 * An account's positions and valuation (docs/investments.md, Assets and Portfolio), each read in one
 * statement: the account (organization-scoped), its holdings or units, the instruments, their prices
 * and the cost of what was bought.
 *
 * Average cost: Σ(units × price) ÷ Σ units over the instrument's BUY executions of the customer
 * (sells do not change it), half up to 4 decimals. Cost: units × average cost, half up to the cent.
 * Value: units × price, half up to the cent (lib/money.ts, holdingValue). Gain: value − cost.
 */

/** Cost of the customer's BUY executions per instrument, executed before `before` when given. */
const bought = (before?: string) => sql`bought as (
  select e.stock_id, sum(e.units * e.price)::text as cost, sum(e.units)::text as units
  from a join orders o on o.organization_id = a.organization_id and o.customer_id = a.customer_id
    and o.side = 'BUY'
  join executions e on e.order_id = o.id and e.side = 'BUY'
  ${before === undefined ? sql`` : sql`where e.executed_at < ${before}::timestamptz`}
  group by e.stock_id
)`;

const fixed = (value: Decimal, decimals: number) => value.round(decimals, Big.roundHalfUp).toFixed(decimals);

/** Average cost (4 decimals) and cost (to the cent) of `units`, from the instrument's buys. */
function costOf(units: Decimal, cost: string | null, boughtUnits: string | null) {
  if (cost === null || boughtUnits === null || new Big(boughtUnits).eq('0')) return null;
  const average = new Big(cost).div(new Big(boughtUnits)).round(PRICE_DECIMALS, Big.roundHalfUp);
  return { average, cost: units.times(average).round(AMOUNT_DECIMALS, Big.roundHalfUp) };
}

const iso = (text: string | null) => (text === null ? null : dateOf(text).toISOString());

type AssetRow = {
  accountId: string;
  instrumentId: string | null;
  symbol: string;
  name: string;
  investmentType: string;
  currency: string;
  units: string;
  pending: string;
  price: string;
  priceAsOf: string | null;
  cost: string | null;
  bought: string | null;
};

/** An account of an organization, by its id or by its customer's. */
export type AccountKey = { organizationId: string } & ({ accountId: string } | { customerId: string });

/** The CTE `a`: the account of `key`, organization-scoped. */
const accountCte = (key: AccountKey) => sql`a as (
  select id, organization_id, customer_id from accounts
  where ${'accountId' in key ? sql`id = ${key.accountId}` : sql`customer_id = ${key.customerId}`}
    and organization_id = ${key.organizationId}
)`;

/**
 * The account's holdings with units (`instrumentId` absent), or its holding of one instrument even
 * at 0 units; [] for an account without them, null when the organization has no such account.
 */
async function assetsOf(q: Queryable, key: AccountKey, instrumentId?: string): Promise<Asset[] | null> {
  const held = instrumentId === undefined ? sql`h.units > 0` : sql`h.stock_id = ${instrumentId}`;
  const found = await rows<AssetRow>(
    q,
    sql`with ${accountCte(key)}, ${bought()}
select a.id as "accountId", s.id as "instrumentId", s.symbol, s.name, s.investment_type as "investmentType",
  s.currency, h.units::text as units, h.pending_units::text as pending, s.price::text as price,
  s.price_as_of::text as "priceAsOf", b.cost, b.units as bought
from a left join (holdings h join stocks s on s.id = h.stock_id left join bought b on b.stock_id = h.stock_id)
  on h.customer_id = a.customer_id and ${held}
order by s.symbol`,
  );
  if (found.length === 0) return null;
  return found.flatMap((row) => (row.instrumentId === null ? [] : [presentAsset(row, row.instrumentId)]));
}

/** GET /v1/accounts/{accountId}/assets: null when the organization has no such account. */
export const accountAssets = (q: Queryable, organizationId: string, accountId: string) =>
  assetsOf(q, { organizationId, accountId });

/** A customer's position in one instrument (ASSET.* events): null without an account or a holding. */
export async function customerAsset(
  q: Queryable,
  key: { organizationId: string; customerId: string },
  instrumentId: string,
): Promise<Asset | null> {
  return (await assetsOf(q, key, instrumentId))?.[0] ?? null;
}

function presentAsset(row: AssetRow, instrumentId: string): Asset {
  const units = new Big(row.units);
  const pending = new Big(row.pending);
  const locked = new Big('0');
  const value = holdingValue(units, new Big(row.price), row.currency).amount;
  const cost = costOf(units, row.cost, row.bought);
  return {
    instrumentId,
    symbol: row.symbol,
    name: row.name,
    investmentType: row.investmentType,
    currency: row.currency,
    units: fixed(units, UNITS_DECIMALS),
    available: fixed(units.minus(pending).minus(locked), UNITS_DECIMALS),
    locked: fixed(locked, UNITS_DECIMALS),
    pendingSettlement: fixed(pending, UNITS_DECIMALS),
    averageCost: cost ? fixed(cost.average, PRICE_DECIMALS) : null,
    cost: cost ? fixed(cost.cost, AMOUNT_DECIMALS) : null,
    price: fixed(new Big(row.price), PRICE_DECIMALS),
    priceAsOf: iso(row.priceAsOf),
    value: fixed(value, AMOUNT_DECIMALS),
    unrealisedGain: cost ? fixed(value.minus(cost.cost), AMOUNT_DECIMALS) : null,
  };
}

type PositionRow = {
  accountId: string;
  customerId: string;
  instrumentId: string | null;
  symbol: string;
  investmentType: string;
  currency: string;
  units: string;
  price: string | null;
  priceAsOf: string | null;
  cost: string | null;
  bought: string | null;
};

/**
 * GET /v1/accounts/{accountId}/portfolio, in one statement. Now (`at` absent): the holdings at the
 * instruments' latest applied prices. At `at` (the end of a past day): the units of the ledger's
 * entries before it, each valued at its instrument's last APPLIED price whose as-of time is before
 * it (prices_stock_as_of_idx), at the cost of the buys executed before it. Null when the
 * organization has no such account.
 */
export async function accountPortfolio(
  q: Queryable,
  input: AccountKey & { now: Date; at?: { date: string; end: Date } },
): Promise<Portfolio | null> {
  const { at } = input;
  const before = at?.end.toISOString();
  const units =
    before === undefined
      ? sql`held as (
  select h.stock_id, h.units from a join holdings h on h.customer_id = a.customer_id
)`
      : sql`held as (
  select l.stock_id, sum(l.units) as units from a join ledger_entries l on l.customer_id = a.customer_id
  where l.created_at < ${before}::timestamptz group by l.stock_id
)`;
  const price =
    before === undefined
      ? sql`select s.price, s.price_as_of as as_of`
      : sql`select p.price, p.as_of from prices p
    where p.stock_id = s.id and p.status = 'APPLIED' and p.as_of < ${before}::timestamptz
    order by p.as_of desc limit 1`;
  const found = await rows<PositionRow>(
    q,
    sql`with ${accountCte(input)}, ${units}, ${bought(before)}
select a.id as "accountId", a.customer_id as "customerId", s.id as "instrumentId", s.symbol,
  s.investment_type as "investmentType", s.currency, held.units::text as units, p.price::text as price,
  p.as_of::text as "priceAsOf", b.cost, b.units as bought
from a left join (held join stocks s on s.id = held.stock_id left join bought b on b.stock_id = held.stock_id
  left join lateral (${price}) p on true)
  on held.units > 0
order by s.investment_type, s.symbol`,
  );
  const first = found[0];
  if (!first) return null;
  const positions: PortfolioPosition[] = [];
  const totals = new Map<string, { value: Decimal; cost: Decimal }>();
  const zero = () => ({ value: new Big('0'), cost: new Big('0') });
  const all = zero();
  for (const row of found) {
    if (row.instrumentId === null) continue;
    const held = new Big(row.units);
    const value = row.price === null ? null : holdingValue(held, new Big(row.price), row.currency).amount;
    const cost = costOf(held, row.cost, row.bought)?.cost ?? null;
    positions.push({
      instrumentId: row.instrumentId,
      symbol: row.symbol,
      investmentType: row.investmentType,
      units: fixed(held, UNITS_DECIMALS),
      price: row.price === null ? null : fixed(new Big(row.price), PRICE_DECIMALS),
      priceAsOf: iso(row.priceAsOf),
      value: value === null ? null : fixed(value, AMOUNT_DECIMALS),
      cost: cost === null ? null : fixed(cost, AMOUNT_DECIMALS),
    });
    // A position without a price or a cost adds nothing to that total.
    const byType = totals.get(row.investmentType) ?? zero();
    totals.set(row.investmentType, byType);
    for (const sum of [byType, all]) {
      if (value) sum.value = sum.value.plus(value);
      if (cost) sum.cost = sum.cost.plus(cost);
    }
  }
  const valuation = (sum: { value: Decimal; cost: Decimal }) => ({
    value: fixed(sum.value, AMOUNT_DECIMALS),
    cost: fixed(sum.cost, AMOUNT_DECIMALS),
    unrealisedGain: fixed(sum.value.minus(sum.cost), AMOUNT_DECIMALS),
  });
  return {
    accountId: first.accountId,
    customerId: first.customerId,
    currency: ACCOUNT_CURRENCY,
    date: at?.date ?? null,
    // The last instant counted: just before the end of the day.
    valuedAt: at ? new Date(at.end.getTime() - 1).toISOString() : input.now.toISOString(),
    ...valuation(all),
    byInvestmentType: [...totals].map(([investmentType, sum]) => ({ investmentType, ...valuation(sum) })),
    positions,
  };
}
