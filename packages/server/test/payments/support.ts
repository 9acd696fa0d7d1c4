import { createId } from '@partner-api/contract';
import type { TestApp } from '@partner-api/testkit/app.ts';
import type { Partner } from '@partner-api/testkit/partner.ts';
import type { InjectOptions } from 'fastify';
import { orders, transactions } from '../../src/db/schema.ts';
import { signCallback } from '../../src/services/payments/callback-signature.ts';

/** A buy order awaiting its collection, as a USSD confirmation leaves it. */
export async function placePendingBuy(
  t: TestApp,
  partner: Partner,
  input: { customerId: string; stockId: string; amount: string; msisdn?: string },
) {
  const orderId = createId();
  const transactionId = createId();
  const db = t.ctx.database.db;
  await db.insert(orders).values({
    id: orderId,
    organizationId: partner.organizationId,
    customerId: input.customerId,
    stockId: input.stockId,
    side: 'BUY',
    status: 'PENDING_PAYMENT',
    amount: input.amount,
    price: '25.0000',
  });
  await db.insert(transactions).values({
    id: transactionId,
    organizationId: partner.organizationId,
    orderId,
    type: 'INCOMING',
    amount: input.amount,
    status: 'PENDING',
    provider: 'MPESA',
    msisdn: input.msisdn ?? '254712345678',
  });
  return { orderId, transactionId };
}

export type CallbackBody = {
  transactionId: string;
  status: 'SUCCESS' | 'FAILED' | string;
  providerReference?: string;
  reason?: string;
};

/** POST /v1/webhooks/callback signed with the app's secret (or the given signature header). */
export function sendCallback(t: TestApp, body: CallbackBody | string, signature?: string | null) {
  const raw =
    typeof body === 'string'
      ? body
      : JSON.stringify({ providerReference: `REF${createId().slice(-8)}`, ...body });
  const header =
    signature === undefined ? signCallback(t.ctx.secrets.providerCallbackSecret, raw) : signature;
  return t.app.inject({
    method: 'POST',
    url: '/v1/webhooks/callback',
    headers: {
      'content-type': 'application/json',
      ...(header === null ? {} : { 'x-callback-signature': header }),
    },
    payload: raw,
  });
}

/** Calls the test app's admin listener with its admin token. */
export const adminCaller = (t: () => TestApp) => (method: 'GET' | 'POST', url: string, payload?: unknown) =>
  t().admin.inject({
    method,
    url,
    payload: payload as InjectOptions['payload'],
    headers: { authorization: `Bearer ${t().ctx.secrets.adminToken}` },
  });
