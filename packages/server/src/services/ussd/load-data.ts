import { sql } from 'drizzle-orm';
import type { Tx } from '../../db/client.ts';
import { one } from '../../db/query.ts';
import { amountString, holdingValue, parseDecimal } from '../../lib/money.ts';
import { routeForMsisdn } from '../payments/mobile-network.ts';
import type { AdapterRegistry } from '../payments/pipeline/adapter.ts';
import { NETWORK_NAMES } from '../payments/registry.ts';
import type { UssdData, UssdHolding, UssdOpenOrder, UssdStock } from './types.ts';

/** Orders the customer can still cancel, listed under "Open requests". */
export const OPEN_ORDER_STATUSES = ['PENDING_PAYMENT', 'PAID'] as const;
const OPEN = sql.raw(OPEN_ORDER_STATUSES.map((s) => `'${s}'`).join(', '));

type Row = {
  customer: { msisdn: string | null } | null;
  organization_name: string | null;
  stocks: UssdStock[];
  holdings: (Omit<UssdHolding, 'value'> & { price: string; currency: string })[];
  open_orders: UssdOpenOrder[];
};

/**
 * The snapshot the pure machine reads, loaded inside the move's transaction after the session lock,
 * in one statement (one round trip): the customer, the organization's name, the listed catalog, the
 * customer's holdings and open orders, each scoped by the organization. Numbers travel as text, as
 * the columns read one by one would (`price` '28.5000', `amount` '1000.00'). `customer` is
 * undefined when the organization has no such customer.
 */
export async function loadUssdData(
  tx: Tx,
  owner: { organizationId: string; customerId: string },
  adapters: AdapterRegistry,
): Promise<{ customer?: { msisdn: string | null }; data: UssdData }> {
  const { organizationId: org, customerId: customer } = owner;
  const row = await one<Row>(
    tx,
    sql`select
  (select json_build_object('msisdn', c.msisdn) from customers c
    where c.id = ${customer} and c.organization_id = ${org}) as customer,
  (select o.name from organizations o where o.id = ${org}) as organization_name,
  coalesce((select json_agg(json_build_object('id', s.id, 'symbol', s.symbol, 'name', s.name,
      'price', s.price::text, 'currency', s.currency) order by s.symbol)
    from stocks s where s.is_active), '[]') as stocks,
  coalesce((select json_agg(json_build_object('stockId', h.stock_id, 'symbol', s.symbol,
      'units', h.units::text, 'price', s.price::text, 'currency', s.currency) order by s.symbol)
    from holdings h join stocks s on s.id = h.stock_id
    where h.organization_id = ${org} and h.customer_id = ${customer} and h.units > 0), '[]') as holdings,
  coalesce((select json_agg(json_build_object('id', o.id, 'side', o.side, 'symbol', s.symbol,
      'amount', o.amount::text, 'status', o.status) order by o.created_at desc, o.id desc)
    from orders o join stocks s on s.id = o.stock_id
    where o.organization_id = ${org} and o.customer_id = ${customer} and o.status in (${OPEN})), '[]')
    as open_orders`,
  );
  if (!row) throw new Error('USSD data: the snapshot query returned no row');
  const msisdn = row.customer?.msisdn;
  const route = msisdn ? routeForMsisdn(msisdn) : undefined;
  const adapter = route ? adapters(route.network, route.country) : undefined;
  return {
    ...(row.customer ? { customer: row.customer } : {}),
    data: {
      organizationName: row.organization_name ?? '',
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
        value: amountString(
          holdingValue(parseDecimal(h.units, 'units'), parseDecimal(price, 'price'), currency),
        ),
      })),
      openOrders: row.open_orders,
    },
  };
}
