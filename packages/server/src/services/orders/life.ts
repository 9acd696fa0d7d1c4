import { createId } from '@partner-api/contract';
import { sql } from 'drizzle-orm';
import type { Db, Queryable, Tx } from '../../db/client.ts';
import { dateOf, one, rows, run } from '../../db/query.ts';
import {
  amountString,
  type Money,
  money,
  parseDecimal,
  plain,
  proceeds,
  unitsToBuy,
  unspent,
} from '../../lib/money.ts';
import { type AccountRow, accountOpened, openAccount, openAccountCte } from '../investments/accounts.ts';
import { emitPositionChanged } from '../investments/position-events.ts';
import { localTime, NSE, rulesOf, settlementDate } from '../market/calendar.ts';
import { holidaySet } from '../market/holidays.ts';
import {
  createTransaction,
  paymentInserts,
  paymentRouteFor,
  refuseOtherCurrency,
  transactionRef,
} from '../payments/create-transaction.ts';
import type { TransactionRef } from '../payments/provider.ts';
import { emitTransactionEvent } from '../payments/transaction-events.ts';
import {
  type SelectedTransaction,
  TRANSACTION_COLUMNS,
  type TransactionRow,
} from '../payments/transaction-row.ts';
import { writeTradeConfirmation } from '../reports/confirmation.ts';
import { executionSms, paymentSms } from '../sms/messages.ts';
import { type EventOutbox, NO_EVENTS } from '../webhooks/outbox.ts';
import type { OrderDeps } from './deps.ts';
import { lockOrder, ORDER_COLUMNS, type OrderRow, type SelectedOrder, setOrderStatus } from './lock-order.ts';
import { emitOrderEvent } from './order-events.ts';

/*
 * An order's life, in one file (docs/market.md, "An order's life"):
 *
 *   BUY   placeBuy ─► PENDING_PAYMENT ─ collection paid ─► PAID ─ in session, fresh price ─► EXECUTED
 *                          │                 │                └─ otherwise waits: executeWaitingBuys
 *                          │                 └─ collection failed ─► FAILED
 *                          └─ cancel ─► CANCELLED (a PAID one is refunded; a late payment too)
 *   SELL  placeSell ─► EXECUTED at once, its proceeds paid out
 *   Both  execution FILLED ─ settlement date ─► SETTLED (settleDueExecutions)
 *
 * This module is the only writer of orders, holdings, executions and the two ledgers (units:
 * ledger_entries; money: money_entries), the only caller of the payment pipeline for an order
 * (createTransaction, queued in the move's own transaction), and the only emitter of its REQUEST
 * events. USSD moves call placeBuy, placeSell and cancelOrder; the payment pipeline hands every
 * settled transaction to paymentSettled (payments/apply-callback.ts). Lock order everywhere:
 * session, then order, then its transactions, then holdings.
 */

export type PlacedOrder = { orderId: string; payments: TransactionRef[] };

/**
 * A move whose snapshot another move outran (on PostgreSQL, two sessions of one customer at once):
 * the order or the holding it acted on changed after it was read. Not a failure: the USSD move is
 * planned again from what is there now, and shows the same refusal the customer would have seen a
 * moment later (services/ussd/process-choice.ts).
 */
export class StaleMoveError extends Error {}

export class OrderNotCancellableError extends StaleMoveError {}

// ---- placing ----

/** Whose order, of which stock; `msisdn` is the customer's number as the move read it. */
type Placing = { organizationId: string; customerId: string; msisdn: string | null; stockId: string };

type Placed = {
  order: SelectedOrder | null;
  /** The customer's account when this order opened it. */
  account: AccountRow | null;
  transaction: SelectedTransaction | null;
  /** The stock's currency when it is listed, whether or not the order was placed. */
  listedCurrency: string | null;
};

/**
 * A buy order (BUY, PENDING_PAYMENT) for a whole amount at the current price, and its collection
 * (INCOMING, PENDING, with its provider request QUEUED) from the customer's number (`msisdn`, read
 * by the caller in the same transaction), in one statement. The collection is requested after
 * commit. The order is inserted from the listed stock's row, and only in a currency the number's
 * adapter moves: otherwise nothing is inserted, and the statement's reading of the stock says why.
 */
export async function placeBuy(
  tx: Tx,
  input: Placing & {
    /** Whole amount in the stock's currency, e.g. '1000'. */
    amount: string;
  },
  deps: OrderDeps,
): Promise<PlacedOrder> {
  const { msisdn } = input;
  if (!msisdn) throw new Error('buy order: the customer has no number to collect from');
  const whole = parseDecimal(input.amount, 'buy amount', 0);
  const route = paymentRouteFor(deps, msisdn);
  const only = route.adapter.currency ?? null;
  const placed = await one<Placed>(
    tx,
    sql`with s as (
  select id, currency, price from stocks where id = ${input.stockId} and is_active
), o as (
  insert into orders (id, organization_id, customer_id, stock_id, side, status, amount, currency, price)
  select ${createId()}, ${input.organizationId}, ${input.customerId}, s.id, 'BUY', 'PENDING_PAYMENT',
  ${plain(whole)}::numeric, s.currency, s.price
  from s where ${only}::text is null or s.currency = ${only}::text
  returning *
), ${paymentInserts(route, 'INCOMING', msisdn, sql`select organization_id, id, amount, currency from o`)},
${openAccountCte(input, sql`from o`)}
select (select row_to_json(x) from (select ${ORDER_COLUMNS} from o) x) as "order",
  (select row_to_json(a) from opened a) as account,
  (select row_to_json(y) from (select ${TRANSACTION_COLUMNS} from t) y) as "transaction",
  (select currency from s) as "listedCurrency"`,
  );
  const { order, transaction, listedCurrency, account } = placed!;
  if (!order || !transaction) {
    if (listedCurrency === null) throw new Error(`buy order: stock ${input.stockId} is not listed`);
    refuseOtherCurrency(route, listedCurrency);
    throw new Error('buy order: the order or its collection was not inserted');
  }
  await accountOpened(tx, account, deps.events);
  await emitOrderEvent(tx, deps.events, 'REQUEST.CREATED', order);
  await emitTransactionEvent(tx, deps.events, 'TRANSACTION.CREATED', transaction);
  return { orderId: order.id, payments: [transactionRef(transaction)] };
}

/**
 * A sell order of whole units, EXECUTED at once at the current price: the holding gives up the
 * units only if that many are available (units − pending settlement: the guarded update is the
 * check, so two sessions never oversell), and the proceeds are paid out by a disbursement
 * (OUTGOING, PENDING) requested after commit, to the customer's number (`msisdn`, read by the
 * caller in the same transaction).
 */
export async function placeSell(
  tx: Tx,
  input: Placing & {
    /** Whole units, e.g. '3'. */
    quantity: string;
  },
  deps: OrderDeps,
): Promise<PlacedOrder> {
  const { msisdn } = input;
  if (!msisdn) throw new Error('sell order: the customer has no number to pay out to');
  const stock = await one<{
    id: string;
    price: string;
    currency: string;
    priceAsOf: string | null;
    market: string;
  }>(
    tx,
    sql`select id, price::text as price, currency, price_as_of::text as "priceAsOf", market from stocks
  where id = ${input.stockId} and is_active`,
  );
  if (!stock) throw new Error(`sell order: stock ${input.stockId} is not listed`);
  // The screen refused it outside the session or at a stale price; a confirm that came late is too.
  const at = deps.market ? await deps.market(tx, stock.priceAsOf) : new Date();
  if (!at) throw new StaleMoveError('sell order: the market does not allow it now');
  const quantity = input.quantity;
  const sold = await one<{ units: string }>(
    tx,
    sql`update holdings set units = units - ${quantity}::numeric, updated_at = ${at.toISOString()}::timestamptz
  where customer_id = ${input.customerId} and stock_id = ${stock.id}
    and units - pending_units >= ${quantity}::numeric
  returning units::text as units`,
  );
  if (!sold) throw new StaleMoveError('sell order: the holding no longer has these units available');
  const orderId = createId();
  const payout = proceeds(
    parseDecimal(quantity, 'quantity', 0),
    parseDecimal(stock.price, 'price'),
    stock.currency,
  );
  const order = await one<SelectedOrder>(
    tx,
    sql`insert into orders as o (id, organization_id, customer_id, stock_id, side, status, amount, currency, quantity,
    price, created_at, updated_at)
  values (${orderId}, ${input.organizationId}, ${input.customerId}, ${stock.id}, 'SELL', 'EXECUTED',
  ${amountString(payout)}::numeric, ${payout.currency}, ${quantity}::numeric, ${stock.price}::numeric,
  ${at.toISOString()}::timestamptz, ${at.toISOString()}::timestamptz)
  returning ${ORDER_COLUMNS}`,
  );
  if (!order) throw new Error('sell order: the insert returned no row');
  await recordExecution(tx, {
    order,
    side: 'SELL',
    units: quantity,
    price: stock.price,
    priceAsOf: stock.priceAsOf,
    market: stock.market,
    deps,
  });
  await deps.sms?.queue(tx, executionSms(order, msisdn));
  await openCustomerAccount(tx, input, deps);
  await emitOrderEvent(tx, deps.events, 'REQUEST.CREATED', order);
  const { organizationId, customerId } = input;
  await emitPositionChanged(tx, deps.events, {
    organizationId,
    customerId,
    instrumentId: stock.id,
    created: false,
    at,
  });
  const disbursement = await createTransaction({
    tx,
    deps,
    input: { organizationId: input.organizationId, orderId, type: 'OUTGOING', amount: payout, msisdn },
  });
  return { orderId, payments: [disbursement] };
}

/**
 * A customer's first order opens their investment account (docs/investments.md, Accounts): an
 * insert that does nothing once it exists (a CTE of a buy's statement; a sell's own statement). Its
 * events only with INVESTMENTS_PREVIEW (EventOutbox.investments).
 */
function openCustomerAccount(tx: Tx, owner: Placing, deps: OrderDeps) {
  return openAccount(tx, { organizationId: owner.organizationId, customerId: owner.customerId }, deps.events);
}

// ---- paying ----

/**
 * What an order does with one of its transactions that the payment pipeline has just settled (the
 * order row and the transaction locked by the caller, in the settlement's transaction). Money that
 * moved is written to the money ledger. A collection paid for a PENDING_PAYMENT buy makes it PAID
 * and executes it if the market allows (otherwise it waits: executeWaitingBuys); a failed one
 * makes it FAILED; money collected for an order that can no longer use it (cancelled, failed) is
 * refunded. A payout's failure is the pipeline's to hand to the operator (pipeline/decide.ts).
 * Disbursements to request after commit are returned.
 */
export async function paymentSettled(
  tx: Tx,
  order: OrderRow,
  settled: TransactionRow,
  deps: OrderDeps,
): Promise<TransactionRef[]> {
  if (settled.status === 'SUCCESS') await recordMoney(tx, order, settled);
  await deps.sms?.queue(tx, paymentSms(order, settled));
  if (settled.type !== 'INCOMING') return [];
  if (settled.status !== 'SUCCESS') {
    if (order.status === 'PENDING_PAYMENT') await setOrderStatus(tx, deps.events, order.id, 'FAILED');
    return [];
  }
  if (order.status === 'PENDING_PAYMENT') {
    await setOrderStatus(tx, deps.events, order.id, 'PAID');
    return (await executeBuy(tx, deps, { ...order, status: 'PAID' })).payments;
  }
  // Paid for an order that can no longer use the money (cancelled, failed): give it back.
  return [await refund(tx, order, money(settled.amount, settled.currency), deps)];
}

/**
 * A collection that had already ended (we cancelled it, or it failed for want of an answer) and
 * that the provider now confirms paid: the money came in, so it is entered, and given back once.
 */
export async function lateCollectionReceived(
  tx: Tx,
  order: OrderRow,
  received: TransactionRow,
  deps: OrderDeps,
): Promise<TransactionRef[]> {
  await recordMoney(tx, order, received);
  return [await refund(tx, order, money(received.amount, received.currency), deps)];
}

// ---- executing ----

/**
 * Executes a PAID buy order (locked by the caller) at the stock's current price, when the market
 * allows it now (`deps.market`: in session and the price fresh; always, when market hours are not
 * enforced), timed by the market's clock: the units go into the customer's holding, pending settlement, and the order becomes
 * EXECUTED. Otherwise the order stays PAID, still cancellable by the customer (with a refund), and
 * executeWaitingBuys tries again; a stock delisted meanwhile likewise waits.
 *
 * The price is read under a share lock (a concurrent price import waits for this commit), the units
 * come from the money module (`unitsFor`: rounded down, never more than was paid for), and one
 * statement upserts the holding and updates the order.
 */
async function executeBuy(
  tx: Tx,
  deps: OrderDeps,
  order: OrderRow,
): Promise<{ executed: boolean; payments: TransactionRef[] }> {
  const waits = { executed: false, payments: [] };
  const stock = await one<{ price: string; priceAsOf: string | null; market: string; fractional: boolean }>(
    tx,
    sql`select price::text as price, price_as_of::text as "priceAsOf", market, fractional from stocks
  where id = ${order.stockId} and is_active for share`,
  );
  if (!stock) return waits;
  const at = deps.market ? await deps.market(tx, stock.priceAsOf) : new Date();
  if (!at) return waits;
  const paid = money(order.amount, order.currency);
  const price = parseDecimal(stock.price, 'price');
  const bought = unitsToBuy(paid, price, stock.fractional);
  if (bought.eq('0')) {
    // A whole-units instrument whose price rose past the amount since the confirmation: nothing
    // can be bought, so the order fails and the whole amount goes back.
    await setOrderStatus(tx, deps.events, order.id, 'FAILED');
    return { executed: false, payments: [await refund(tx, order, paid, deps)] };
  }
  const units = plain(bought);
  const now = at.toISOString();
  const executed = await one<SelectedOrder & { holdingCreated: boolean }>(
    tx,
    sql`with held as (
  insert into holdings (organization_id, customer_id, stock_id, units, pending_units)
  values (${order.organizationId}, ${order.customerId}, ${order.stockId}, ${units}::numeric, ${units}::numeric)
  on conflict (customer_id, stock_id)
  do update set units = holdings.units + excluded.units,
    pending_units = holdings.pending_units + excluded.pending_units, updated_at = ${now}::timestamptz
  returning xmax = 0 as created
)
update orders o set status = 'EXECUTED', quantity = ${units}::numeric, price = ${stock.price}::numeric,
  updated_at = ${now}::timestamptz
where o.id = ${order.id}
returning ${ORDER_COLUMNS}, (select created from held) as "holdingCreated"`,
  );
  if (!executed) return waits;
  await recordExecution(tx, {
    order: executed,
    side: 'BUY',
    units,
    price: stock.price,
    priceAsOf: stock.priceAsOf,
    market: stock.market,
    deps,
  });
  await deps.sms?.queue(tx, executionSms(executed));
  await emitOrderEvent(tx, deps.events, 'REQUEST.UPDATED', executed);
  await emitPositionChanged(tx, deps.events, {
    organizationId: order.organizationId,
    customerId: order.customerId,
    instrumentId: order.stockId,
    created: executed.holdingCreated,
    at,
  });
  // Whole units leave part of the amount unspent: it goes back (a fractional buy spends it all,
  // less what rounding the units down to 4 decimals leaves, under a hundredth of a cent a unit).
  const left = stock.fractional ? undefined : unspent(paid, bought, price);
  const payments = left?.amount.gt('0') ? [await refund(tx, order, left, deps)] : [];
  return { executed: true, payments };
}

/**
 * Executes the PAID buys that waited (paid outside the session, at a stale price, or while the
 * stock was not listed) now that the market allows them, each in its own transaction, oldest
 * first. Run every 30 s by each instance (server.ts); two instances at once each lock an order
 * before executing it, so none executes twice. Returns how many executed.
 */
export async function executeWaitingBuys(db: Db, deps: OrderDeps, limit = 100): Promise<number> {
  const waiting = await rows<{ id: string }>(
    db,
    sql`select o.id from orders o join stocks s on s.id = o.stock_id
  where o.status = 'PAID' and o.side = 'BUY' and s.is_active order by o.updated_at, o.id limit ${limit}`,
  );
  let executed = 0;
  for (const { id } of waiting) {
    const done = await db.transaction(async (tx) => {
      const order = await lockOrder(tx, id);
      return order?.status === 'PAID' && (await executeBuy(tx, deps, order)).executed;
    });
    if (done) executed++;
  }
  return executed;
}

/**
 * Records what an order executed (in the transaction that executed it): units, the price and its
 * as-of time, the execution time and the settlement date, T+N trading days of the instrument's
 * market counted from the execution's local date; and the same movement, signed, in the units
 * ledger (docs/market.md, "Executions" and "The ledger"); and its trade confirmation (a report).
 */
async function recordExecution(
  tx: Tx,
  input: {
    order: SelectedOrder;
    side: 'BUY' | 'SELL';
    units: string;
    price: string;
    priceAsOf: string | null;
    /** The instrument's market (its MIC). */
    market: string;
    /** The confirmation's issuer and outbox. */
    deps: OrderDeps;
  },
): Promise<void> {
  const { order } = input;
  const rules = rulesOf(input.market);
  const executedAt = dateOf(order.updatedAt);
  const settles = settlementDate(rules, executedAt, await holidaySet(tx, rules.mic));
  const signed = input.side === 'BUY' ? input.units : `-${input.units}`;
  await run(
    tx,
    sql`with e as (
  insert into executions (id, organization_id, order_id, stock_id, side, units, price, price_as_of,
    executed_at, settlement_date, status)
  values (${createId()}, ${order.organizationId}, ${order.id}, ${order.stockId}, ${input.side},
    ${input.units}::numeric, ${input.price}::numeric, ${input.priceAsOf}::timestamptz,
    ${executedAt.toISOString()}::timestamptz, ${settles}, 'FILLED')
  on conflict (order_id) do nothing
  returning order_id
)
insert into ledger_entries (id, organization_id, customer_id, stock_id, order_id, kind, units)
select ${createId()}, ${order.organizationId}, ${order.customerId}, ${order.stockId}, e.order_id,
  ${input.side}, ${signed}::numeric
from e`,
  );
  await writeTradeConfirmation(tx, order.id, input.deps);
}

// ---- settling ----

/**
 * Marks SETTLED every FILLED execution whose settlement date has come (in the NSE's time zone), and
 * in the same statement makes a settled buy's units available to sell (the holding's pending units
 * go down by them); each holding changed gets its ASSET.UPDATED and PORTFOLIO.UPDATED in the same
 * transaction (with the investments events on). Housekeeping runs it (services/housekeeping/purge.ts).
 */
export async function settleDueExecutions(
  db: Queryable,
  now: Date,
  events: EventOutbox = NO_EVENTS,
): Promise<number> {
  const today = localTime(NSE.timeZone, now).date;
  return db.transaction(async (tx) => {
    const settled = await one<{
      count: number;
      freed: { organizationId: string; customerId: string; instrumentId: string }[];
    }>(
      tx,
      sql`with due as (
  update executions set status = 'SETTLED', settled_at = ${now.toISOString()}::timestamptz
  where status = 'FILLED' and settlement_date <= ${today}
  returning order_id, stock_id, side, units
), bought as (
  select o.customer_id, due.stock_id, sum(due.units) as units
  from due join orders o on o.id = due.order_id where due.side = 'BUY'
  group by o.customer_id, due.stock_id
), freed as (
  update holdings h set pending_units = greatest(h.pending_units - bought.units, 0),
    updated_at = ${now.toISOString()}::timestamptz
  from bought where h.customer_id = bought.customer_id and h.stock_id = bought.stock_id
  returning h.organization_id, h.customer_id, h.stock_id
)
select (select count(*)::int from due) as count,
  coalesce((select json_agg(json_build_object('organizationId', organization_id, 'customerId', customer_id,
    'instrumentId', stock_id)) from freed), '[]') as freed`,
    );
    for (const holding of settled?.freed ?? [])
      await emitPositionChanged(tx, events, { ...holding, created: false, at: now });
    return settled?.count ?? 0;
  });
}

// ---- cancelling and refunding ----

/**
 * Cancels a customer's order that is not yet executed: PENDING_PAYMENT → CANCELLED with its pending
 * collection CANCELLED; PAID → CANCELLED with a refund disbursement (requested after commit).
 * The order row is locked, so a provider callback settling it at the same time waits for us and
 * then finds the collection CANCELLED (a late payment is refunded: lateCollectionReceived).
 */
export async function cancelOrder(
  tx: Tx,
  input: { organizationId: string; customerId: string; orderId: string },
  deps: OrderDeps,
): Promise<{ payments: TransactionRef[] }> {
  const order = await lockOrder(tx, input.orderId);
  if (!order || order.organizationId !== input.organizationId || order.customerId !== input.customerId) {
    throw new OrderNotCancellableError(`order ${input.orderId} is not this customer's`);
  }
  if (order.status !== 'PENDING_PAYMENT' && order.status !== 'PAID') {
    throw new OrderNotCancellableError(`order ${order.id} is ${order.status}`);
  }
  await setOrderStatus(tx, deps.events, order.id, 'CANCELLED');
  if (order.status === 'PENDING_PAYMENT') {
    const cancelled = await rows<SelectedTransaction>(
      tx,
      sql`update transactions t set status = 'CANCELLED', updated_at = ${new Date().toISOString()}::timestamptz
  where t.order_id = ${order.id} and t.type = 'INCOMING' and t.status = 'PENDING'
  returning ${TRANSACTION_COLUMNS}`,
    );
    for (const row of cancelled) await emitTransactionEvent(tx, deps.events, 'TRANSACTION.UPDATED', row);
    return { payments: [] };
  }
  return { payments: [await refund(tx, order, money(order.amount, order.currency), deps)] };
}

/** A PENDING refund disbursement (OUTGOING) of `amount`, to the number that paid the order. */
async function refund(tx: Tx, order: OrderRow, amount: Money, deps: OrderDeps): Promise<TransactionRef> {
  const paidFrom = await one<{ msisdn: string | null }>(
    tx,
    sql`select coalesce((select msisdn from transactions where order_id = ${order.id} and type = 'INCOMING' limit 1),
  (select msisdn from customers where id = ${order.customerId})) as msisdn`,
  );
  const msisdn = paidFrom?.msisdn;
  if (!msisdn) throw new Error(`order ${order.id}: no number to refund to`);
  return createTransaction({
    tx,
    deps,
    input: { organizationId: order.organizationId, orderId: order.id, type: 'OUTGOING', amount, msisdn },
  });
}

// ---- the money ledger ----

/**
 * One money entry per transaction that moved money, once (the transaction id is unique): a
 * collection in (+), a sell's payout or a buy's refund out (−).
 */
async function recordMoney(tx: Tx, order: OrderRow, moved: TransactionRow): Promise<void> {
  const incoming = moved.type === 'INCOMING';
  const kind = incoming ? 'COLLECTION' : order.side === 'SELL' ? 'PAYOUT' : 'REFUND';
  await run(
    tx,
    sql`insert into money_entries (id, organization_id, customer_id, order_id, transaction_id, kind, amount, currency)
  values (${createId()}, ${order.organizationId}, ${order.customerId}, ${order.id}, ${moved.id}, ${kind},
    ${incoming ? moved.amount : `-${moved.amount}`}::numeric, ${moved.currency})
  on conflict (transaction_id) do nothing`,
  );
}
