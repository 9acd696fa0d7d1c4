import { type SQL, sql } from 'drizzle-orm';
import type { Read } from '../../db/query.ts';
import { investorLanguageSql, languageOf } from '../../i18n/investor-language.ts';
import { amountString, holdingValue, parseDecimal } from '../../lib/money.ts';
import { routeForMsisdn } from '../payments/mobile-network.ts';
import type { AdapterRegistry } from '../payments/pipeline/adapter.ts';
import { NETWORK_NAMES } from '../payments/registry.ts';
import type { UssdData, UssdHolding, UssdOpenOrder, UssdStock } from './types.ts';

/** Orders the customer can still cancel, listed under "Open requests". */
export const OPEN_ORDER_STATUSES = ['PENDING_PAYMENT', 'PAID'] as const;
const OPEN = sql.raw(OPEN_ORDER_STATUSES.map((s) => `'${s}'`).join(', '));

/** The snapshot's columns, as one statement selects them (numbers as text). */
export type SnapshotRow = {
  customer: { msisdn: string | null; isActive: boolean } | null;
  organization_name: string | null;
  /** The customer's language, else the organization's (i18n/investor-language.ts). */
  language: string | null;
  stocks: UssdStock[];
  holdings: (Omit<UssdHolding, 'value'> & { price: string; currency: string })[];
  open_orders: UssdOpenOrder[];
};

/**
 * The snapshot the pure machine reads, as the select list of one statement: the customer, the
 * organization's name, the screens' language, the listed catalog (each instrument with its minimum buy and whether it is
 * held in fractions), the customer's holdings and open orders, each scoped by the organization.
 * `org` and `customer` are the owner's ids, as parameters or as columns of the statement (the locked
 * session's). Numbers travel as text, as the columns read one by one would (`price` '28.5000',
 * `amount` '1000.00'); `customer` is null when the organization has no such customer.
 */
export function snapshotColumns(org: SQL, customer: SQL): SQL {
  return sql`(select json_build_object('msisdn', c.msisdn, 'isActive', c.is_active) from customers c
    where c.id = ${customer} and c.organization_id = ${org}) as customer,
  (select o.name from organizations o where o.id = ${org}) as organization_name,
  ${investorLanguageSql(org, customer)} as language,
  coalesce((select json_agg(json_build_object('id', s.id, 'symbol', s.symbol, 'name', s.name,
      'price', s.price::text, 'currency', s.currency, 'priceAsOf', s.price_as_of,
      'minOrderAmount', s.min_order_amount::text, 'fractional', s.fractional) order by s.symbol)
    from stocks s where s.is_active), '[]') as stocks,
  coalesce((select json_agg(json_build_object('stockId', h.stock_id, 'symbol', s.symbol,
      'units', h.units::text, 'pending', h.pending_units::text, 'price', s.price::text, 'currency', s.currency) order by s.symbol)
    from holdings h join stocks s on s.id = h.stock_id
    where h.organization_id = ${org} and h.customer_id = ${customer} and h.units > 0), '[]') as holdings,
  coalesce((select json_agg(json_build_object('id', o.id, 'side', o.side, 'symbol', s.symbol,
      'amount', o.amount::text, 'currency', o.currency, 'status', o.status) order by o.created_at desc, o.id desc)
    from orders o join stocks s on s.id = o.stock_id
    where o.organization_id = ${org} and o.customer_id = ${customer} and o.status in (${OPEN})), '[]')
    as open_orders`;
}

export type Snapshot = { customer?: { msisdn: string | null; isActive: boolean }; data: UssdData };

/** Loads the snapshot in one statement (one round trip), with `read` (`reader(db)`, or a first read). */
export async function loadUssdData(
  read: Read,
  owner: { organizationId: string; customerId: string },
  adapters: AdapterRegistry,
): Promise<Snapshot> {
  const row = await read<SnapshotRow>(
    sql`select ${snapshotColumns(sql`${owner.organizationId}`, sql`${owner.customerId}`)}`,
  );
  if (!row) throw new Error('USSD data: the snapshot query returned no row');
  return snapshotFrom(row, owner.customerId, adapters);
}

/** The machine's data from the snapshot's row: the customer's payment route, holdings valued. */
export function snapshotFrom(row: SnapshotRow, customer: string, adapters: AdapterRegistry): Snapshot {
  const msisdn = row.customer?.msisdn;
  const route = msisdn ? routeForMsisdn(msisdn) : undefined;
  const adapter = route ? adapters(route.network, route.country) : undefined;
  return {
    ...(row.customer ? { customer: row.customer } : {}),
    data: {
      organizationName: row.organization_name ?? '',
      language: languageOf(row.language),
      customer: {
        id: customer,
        hasMsisdn: Boolean(msisdn),
        paymentsAvailable: adapter !== undefined,
        network: route ? NETWORK_NAMES[route.network] : null,
        paymentCurrency: adapter?.currency ?? null,
      },
      stocks: row.stocks,
      holdings: row.holdings.map(({ price, currency, ...h }) => ({
        ...h,
        currency,
        value: amountString(
          holdingValue(parseDecimal(h.units, 'units'), parseDecimal(price, 'price'), currency),
        ),
      })),
      openOrders: row.open_orders,
    },
  };
}
