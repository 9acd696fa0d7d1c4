import {
  ErrorLabel,
  ErrorMessage,
  type InvestmentRequest,
  type RequestCreate,
  type RequestList,
  type RequestListQuery,
  RequestMessage,
} from '@partner-api/contract';
import { type SQL, sql } from 'drizzle-orm';
import type { AppContext } from '../../context.ts';
import type { Queryable, Tx } from '../../db/client.ts';
import { one, rows } from '../../db/query.ts';
import { AppError, validationFailed } from '../../lib/errors.ts';
import { Big, money, plain } from '../../lib/money.ts';
import { tradingNow } from '../market/trading.ts';
import {
  cancelOrder,
  OrderNotCancellableError,
  placeBuy,
  placeSell,
  StaleMoveError,
} from '../orders/life.ts';
import type { TransactionRef } from '../payments/provider.ts';
import { type SnapshotRow, snapshotColumns, snapshotFrom } from '../ussd/load-data.ts';
import { buyRefusal, type OrderRefusal, sellRefusal } from '../ussd/menus.ts';
import { getRequest, presentRequest, REQUEST_COLUMNS, type RequestRow } from './request-resource.ts';

/*
 * Requests (orders) for the investments API (docs/investments.md, "Requests"). Placing and
 * cancelling go through the order's life (services/orders/life.ts) exactly as the USSD moves do,
 * refused beforehand by the same rules as the USSD confirmation screens (ussd/menus.ts buyRefusal,
 * sellRefusal) on the same snapshot (ussd/load-data.ts).
 */

const conflict = (message: string) => new AppError(409, ErrorLabel.conflict, message);
export const requestNotFound = () => new AppError(404, ErrorLabel.notFound, RequestMessage.notFound);
const customerNotFound = () => new AppError(404, ErrorLabel.notFound, ErrorMessage.customerNotFound);
const instrumentNotFound = () => new AppError(404, ErrorLabel.notFound, RequestMessage.instrumentNotFound);

/**
 * The page and count queries of a listing. With `customerId` the index orders_org_customer_idx
 * (organization_id, customer_id, created_at desc) gives the page in order; without it, its
 * organization prefix finds the organization's orders, sorted.
 */
export function buildRequestListQueries(organizationId: string, query: RequestListQuery) {
  const conditions: SQL[] = [sql`o.organization_id = ${organizationId}`];
  if (query.customerId !== undefined) conditions.push(sql`o.customer_id = ${query.customerId}`);
  if (query.instrumentId !== undefined) conditions.push(sql`o.stock_id = ${query.instrumentId}`);
  if (query.status !== undefined) conditions.push(sql`o.status = ${query.status}`);
  if (query.createdFrom !== undefined)
    conditions.push(sql`o.created_at >= ${`${query.createdFrom}T00:00:00Z`}::timestamptz`);
  if (query.createdTo !== undefined)
    conditions.push(sql`o.created_at < (${`${query.createdTo}T00:00:00Z`}::timestamptz + interval '1 day')`);
  const where = sql.join(conditions, sql` and `);
  return {
    page: sql`select ${REQUEST_COLUMNS} from orders o where ${where}
  order by o.created_at desc, o.id desc limit ${query.limit} offset ${(query.page - 1) * query.limit}`,
    count: sql`select count(*)::int as total from orders o where ${where}`,
  };
}

/** GET /requests: newest first (createdAt, then id), with true totals even past the last page. */
export async function listRequests(
  db: Queryable,
  organizationId: string,
  query: RequestListQuery,
): Promise<RequestList> {
  const queries = buildRequestListQueries(organizationId, query);
  const [page, count] = await Promise.all([
    rows<RequestRow>(db, queries.page),
    one<{ total: number }>(db, queries.count),
  ]);
  const total = count?.total ?? 0;
  return {
    data: page.map(presentRequest),
    pagination: { page: query.page, limit: query.limit, total, totalPages: Math.ceil(total / query.limit) },
  };
}

type InstrumentState = { id: string; isActive: boolean } | null;

/** The answer to a refusal of the confirmation rules: a 400 for the amount, a 409 for the state. */
function refused(refusal: OrderRefusal & { available?: Big; pending?: Big }, input: RequestCreate): AppError {
  switch (refusal.kind) {
    case 'BELOW_MINIMUM':
    case 'WHOLE_UNITS_ONLY':
      return validationFailed([{ field: 'amount', message: refusal.message }]);
    case 'UNITS_NOT_AVAILABLE': {
      const available = plain(refusal.available ?? new Big('0'));
      const pending = refusal.pending?.gt('0') ? ` ${refusal.message}` : '';
      return conflict(
        `Not enough units available: ${input.units} requested, ${available} available to sell.${pending}`,
      );
    }
    default:
      return conflict(refusal.message);
  }
}

/**
 * POST /requests, in the caller's transaction: the customer's snapshot as a USSD move reads it (and
 * the instrument), the confirmation screens' refusals, then placeBuy or placeSell. Every refusal is
 * thrown before anything is written. Returns the request and the payments queued with it (the
 * caller nudges the payment worker after commit).
 */
export async function createRequest(
  tx: Tx,
  ctx: AppContext,
  organizationId: string,
  input: RequestCreate,
): Promise<{ request: InvestmentRequest; payments: TransactionRef[] }> {
  const [row, trading] = await Promise.all([
    one<SnapshotRow & { instrument: InstrumentState }>(
      tx,
      sql`select ${snapshotColumns(sql`${organizationId}`, sql`${input.customerId}`)},
  (select json_build_object('id', s.id, 'isActive', s.is_active) from stocks s where s.id = ${input.instrumentId})
    as instrument`,
    ),
    tradingNow(ctx, tx),
  ]);
  if (!row) throw new Error('request: the snapshot query returned no row');
  const { customer, data: loaded } = snapshotFrom(row, input.customerId, ctx.registry);
  if (!customer) throw customerNotFound();
  if (!row.instrument) throw instrumentNotFound();
  if (!customer.isActive) throw conflict(RequestMessage.customerInactive);
  const stock = loaded.stocks.find((s) => s.id === input.instrumentId);
  if (!row.instrument.isActive || !stock) throw conflict(RequestMessage.instrumentNotListed);
  const data = trading ? { ...loaded, trading } : loaded;
  const owner = { organizationId, customerId: input.customerId, msisdn: customer.msisdn, stockId: stock.id };

  let placed: { orderId: string; payments: TransactionRef[] };
  if (input.side === 'BUY') {
    const amount = input.amount!;
    const refusal = buyRefusal(data, stock, money(amount, stock.currency));
    if (refusal) throw refused(refusal, input);
    placed = await placeBuy(tx, { ...owner, amount }, ctx);
  } else {
    const units = input.units!;
    const refusal = sellRefusal(data, stock, new Big(units));
    if (refusal) throw refused(refusal, input);
    try {
      placed = await placeSell(tx, { ...owner, quantity: units }, ctx);
    } catch (error) {
      // The holding or the market gate changed between the snapshot and the guarded update
      // (another sell of the customer at the same moment): nothing is written.
      if (error instanceof StaleMoveError) throw conflict(RequestMessage.outrun);
      throw error;
    }
  }
  const request = await getRequest(tx, organizationId, placed.orderId);
  if (!request) throw new Error(`request ${placed.orderId}: not found after insert`);
  return { request, payments: placed.payments };
}

/**
 * POST /requests/{id}/cancel, in the caller's transaction: cancelOrder (PENDING_PAYMENT → CANCELLED
 * with its collection; PAID → CANCELLED with a refund). A request past that is a 409.
 */
export async function cancelRequest(
  tx: Tx,
  ctx: AppContext,
  organizationId: string,
  id: string,
): Promise<{ request: InvestmentRequest; payments: TransactionRef[] }> {
  const order = await one<{ customerId: string; status: string }>(
    tx,
    sql`select customer_id as "customerId", status from orders
  where id = ${id} and organization_id = ${organizationId} for update`,
  );
  if (!order) throw requestNotFound();
  if (order.status !== 'PENDING_PAYMENT' && order.status !== 'PAID')
    throw conflict(RequestMessage.notCancellable(order.status));
  let payments: TransactionRef[];
  try {
    ({ payments } = await cancelOrder(
      tx,
      { organizationId, customerId: order.customerId, orderId: id },
      ctx,
    ));
  } catch (error) {
    if (error instanceof OrderNotCancellableError)
      throw conflict(RequestMessage.notCancellable(order.status));
    throw error;
  }
  const request = await getRequest(tx, organizationId, id);
  if (!request) throw new Error(`request ${id}: not found after cancel`);
  return { request, payments };
}
