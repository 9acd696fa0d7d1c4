import { createId } from '@partner-api/contract';
import type { TestApp } from '@partner-api/testkit/app.ts';
import { createPartner } from '@partner-api/testkit/partner.ts';
import { sql } from 'drizzle-orm';
import { run } from '../../src/db/query.ts';
import { ensureCatalog, insertCustomer } from '../ussd/support.ts';

/** One seeded payment: its provider request `minutesAgo` before `now`, its transaction's outcome. */
export type SeededPayment = {
  adapter: string;
  minutesAgo: number;
  status: 'SUCCESS' | 'FAILED' | 'CANCELLED' | 'PENDING';
  /** The send exchange's latency, recorded at the request's time. */
  latencyMs?: number;
};

/**
 * Payments written straight into the store (an order, its transaction, its provider request and
 * the send exchange) at fixed times before `now`, in a fresh organization. Answers its id.
 */
export async function seedPayments(t: TestApp, now: Date, payments: SeededPayment[]): Promise<string> {
  const db = t.ctx.database.db;
  const partner = await createPartner(t);
  const customerId = await insertCustomer(t, partner);
  const { buy } = await ensureCatalog(t);
  for (const p of payments) {
    const at = new Date(now.getTime() - p.minutesAgo * 60_000).toISOString();
    const orderId = createId();
    const transactionId = createId();
    const requestId = createId();
    await run(
      db,
      sql`insert into orders (id, organization_id, customer_id, stock_id, side, status, amount, currency, quantity, price, created_at, updated_at)
    values (${orderId}, ${partner.organizationId}, ${customerId}, ${buy}, 'BUY', 'PENDING', 100, 'KES', 4, 25, ${at}::timestamptz, ${at}::timestamptz)`,
    );
    await run(
      db,
      sql`insert into transactions (id, organization_id, order_id, type, amount, currency, status, provider, msisdn, created_at, updated_at)
    values (${transactionId}, ${partner.organizationId}, ${orderId}, 'INCOMING', 100, 'KES', ${p.status}, 'MPESA', '254700000001', ${at}::timestamptz, ${at}::timestamptz)`,
    );
    await run(
      db,
      sql`insert into provider_requests (id, transaction_id, organization_id, adapter, operation, state, created_at, updated_at)
    values (${requestId}, ${transactionId}, ${partner.organizationId}, ${p.adapter}, 'COLLECT',
      ${p.status === 'PENDING' ? 'AWAITING' : 'DONE'}, ${at}::timestamptz, ${at}::timestamptz)`,
    );
    if (p.latencyMs !== undefined)
      await run(
        db,
        sql`insert into provider_exchanges (id, provider_request_id, transaction_id, kind, operation, at, latency_ms, http_status)
    values (${createId()}, ${requestId}, ${transactionId}, 'request', 'COLLECT', ${at}::timestamptz, ${p.latencyMs}, 200)`,
      );
  }
  return partner.organizationId;
}
