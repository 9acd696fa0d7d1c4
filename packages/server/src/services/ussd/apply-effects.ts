import type { Tx } from '../../db/client.ts';
import type { OrderDeps } from '../orders/deps.ts';
import { cancelOrder, placeBuy, placeSell } from '../orders/life.ts';
import type { TransactionRef } from '../payments/provider.ts';
import type { UssdEffect } from './types.ts';

export type EffectsResult = {
  /** The order created by a buy or sell submission (its id goes on the submitted screen). */
  orderId?: string;
  /** Transactions created by the move (their provider requests are queued with them). */
  payments: TransactionRef[];
};

/** Whose move it is; `msisdn` is the customer's number as the move's snapshot read it. */
type Owner = { organizationId: string; customerId: string; msisdn: string | null };

/** Runs the machine's effects in the move's transaction; any failure rolls the whole move back. */
export async function applyEffects(
  tx: Tx,
  owner: Owner,
  effects: UssdEffect[],
  deps: OrderDeps,
): Promise<EffectsResult> {
  const result: EffectsResult = { payments: [] };
  for (const effect of effects) {
    const done = await applyEffect(tx, owner, effect, deps);
    if (done.orderId) result.orderId = done.orderId;
    result.payments.push(...done.payments);
  }
  return result;
}

async function applyEffect(
  tx: Tx,
  owner: Owner,
  effect: UssdEffect,
  deps: OrderDeps,
): Promise<EffectsResult> {
  switch (effect.type) {
    case 'CREATE_BUY_ORDER':
      return placeBuy(tx, { ...owner, stockId: effect.stockId, amount: effect.amount }, deps);
    case 'CREATE_SELL_ORDER':
      return placeSell(tx, { ...owner, stockId: effect.stockId, quantity: effect.quantity }, deps);
    case 'CANCEL_ORDER':
      return cancelOrder(tx, { ...owner, orderId: effect.orderId }, deps);
  }
  const unknown: never = effect;
  throw new Error(`Unknown USSD effect: ${JSON.stringify(unknown)}`);
}
