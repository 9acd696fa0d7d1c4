import type { MessageValues } from '../../i18n/index.ts';
import { amountString, parseDecimal, plain, proceeds } from '../../lib/money.ts';
import type { SelectedOrder } from '../orders/lock-order.ts';
import type { TransactionRow } from '../payments/transaction-row.ts';

/** What an SMS tells the investor (docs/sms.md, "Which messages"). */
export type SmsKind = 'TRADE_BUY' | 'TRADE_SELL' | 'PAYMENT_FAILED' | 'REFUND' | 'PAYOUT';

/** Each kind's message id in the catalogues (i18n/messages/<language>.json, the `sms.*` block). */
export const SMS_MESSAGE_IDS: Readonly<Record<SmsKind, string>> = {
  TRADE_BUY: 'sms.trade.buy',
  TRADE_SELL: 'sms.trade.sell',
  PAYMENT_FAILED: 'sms.payment.failed',
  REFUND: 'sms.payment.refunded',
  PAYOUT: 'sms.payout.paid',
};

/** One SMS to queue: whose, why (the event key: one SMS per cause), and its message's values. */
export type SmsRequest = {
  organizationId: string;
  customerId: string;
  kind: SmsKind;
  eventKey: string;
  values: MessageValues;
  /** The instrument named by a trade confirmation (its symbol is read when queueing). */
  stockId?: string;
};

/** Only the last 4 digits of a number that identifies an account (product.md). */
export const lastFour = (msisdn: string | null | undefined) => (msisdn ?? '').replace(/\D/g, '').slice(-4);

/**
 * The trade confirmation of an executed order: units, the instrument, the price, what the units
 * cost at it, the order id. Keyed by the order (an order executes once: executions.order_id is unique).
 */
export function executionSms(order: SelectedOrder, msisdn?: string | null): SmsRequest {
  const units = order.quantity ?? '0';
  const price = order.price ?? '0';
  const cost = proceeds(parseDecimal(units, 'units'), parseDecimal(price, 'price'), order.currency);
  return {
    organizationId: order.organizationId,
    customerId: order.customerId,
    kind: order.side === 'BUY' ? 'TRADE_BUY' : 'TRADE_SELL',
    eventKey: `execution:${order.id}`,
    stockId: order.stockId,
    values: {
      units: plain(parseDecimal(units, 'units')),
      price: plain(parseDecimal(price, 'price')),
      amount: amountString(cost),
      currency: order.currency,
      order: order.id,
      last4: lastFour(msisdn),
    },
  };
}

/**
 * The SMS a settled transaction of an order causes, if any: a collection that failed; a refund
 * or a sell's payout paid. A payout or refund that failed is the operator's (no SMS).
 */
export function paymentSms(
  order: Pick<SelectedOrder, 'id' | 'organizationId' | 'customerId' | 'side'>,
  settled: Pick<TransactionRow, 'id' | 'type' | 'status' | 'amount' | 'currency' | 'msisdn'>,
): SmsRequest | undefined {
  const values = {
    amount: settled.amount,
    currency: settled.currency,
    order: order.id,
    last4: lastFour(settled.msisdn),
  };
  const base = { organizationId: order.organizationId, customerId: order.customerId, values };
  if (settled.type === 'INCOMING')
    return settled.status === 'SUCCESS'
      ? undefined
      : { ...base, kind: 'PAYMENT_FAILED', eventKey: `payment-failed:${settled.id}` };
  if (settled.status !== 'SUCCESS') return undefined;
  return order.side === 'SELL'
    ? { ...base, kind: 'PAYOUT', eventKey: `payout:${settled.id}` }
    : { ...base, kind: 'REFUND', eventKey: `refund:${settled.id}` };
}
