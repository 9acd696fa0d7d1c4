import { createHash, randomUUID } from 'node:crypto';
import type { TestApp } from '@partner-api/testkit/app.ts';
import { type Partner, signedInject } from '@partner-api/testkit/partner.ts';
import { sql } from 'drizzle-orm';
import { expect } from 'vitest';
import { one, run } from '../../src/db/query.ts';
import { upsertStocks } from '../../src/services/stocks/upsert.ts';

/** The app settings of the requests suites: the investments preview on, events written. */
export const REQUESTS_ENV = { INVESTMENTS_PREVIEW: 'true', WEBHOOKS_PREVIEW: 'true' };

/** Instruments of this run alone (the catalog is shared by suites running at once on PostgreSQL). */
export async function ownInstruments(t: TestApp, prefix: string) {
  const suffix = Math.random().toString(36).slice(2, 7).toUpperCase();
  const symbols = { fractional: `${prefix}A${suffix}`, whole: `${prefix}W${suffix}` };
  const listed = await upsertStocks(t.ctx.database.db, [
    { symbol: symbols.fractional, name: 'Requests Alpha Test Ltd', price: '25.0000', currency: 'KES' },
    { symbol: symbols.whole, name: 'Requests Whole Test Ltd', price: '250.0000', currency: 'KES' },
  ]);
  const fractional = listed.find((s) => s.symbol === symbols.fractional)!;
  const whole = listed.find((s) => s.symbol === symbols.whole)!;
  // The second is held in whole units only, with a minimum of 200.
  await run(
    t.ctx.database.db,
    sql`update stocks set fractional = false, min_order_amount = 200 where id = ${whole.id}`,
  );
  return { fractional, whole };
}

/** Signed calls of one partner to the requests endpoints. */
export function requestsClient(t: TestApp, partner: Partner) {
  return {
    create: (body: unknown, idempotencyKey: string = randomUUID()) =>
      signedInject(t.app, partner, { method: 'POST', url: '/v1/requests', body, idempotencyKey }),
    list: (query = '') => signedInject(t.app, partner, { method: 'GET', url: `/v1/requests${query}` }),
    get: (id: string) => signedInject(t.app, partner, { method: 'GET', url: `/v1/requests/${id}` }),
    cancel: (id: string, idempotencyKey: string = randomUUID()) =>
      signedInject(t.app, partner, { method: 'POST', url: `/v1/requests/${id}/cancel`, idempotencyKey }),
  };
}

/** The key's record as a request still running left it (locked, no answer yet). */
export async function keyInFlight(t: TestApp, partner: Partner, path: string, body: string) {
  const key = randomUUID();
  const fingerprint = `POST ${path} ${createHash('sha256').update(body).digest('hex')}`;
  await run(
    t.ctx.database.db,
    sql`insert into idempotency_keys (credential_id, key, fingerprint, locked_until, expires_at)
  values (${partner.credentialId}, ${key}, ${fingerprint}, now() + interval '1 hour', now() + interval '1 hour')`,
  );
  return key;
}

export async function ordersOf(t: TestApp, customerId: string): Promise<number> {
  const row = await one<{ n: number }>(
    t.ctx.database.db,
    sql`select count(*)::int as n from orders where customer_id = ${customerId}`,
  );
  return row!.n;
}

export const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** An EXECUTED request of `units` at `price` for `amount`, its execution FILLED (a matcher). */
export const executedAs = (units: string, price: string, amount: string) => ({
  status: 'EXECUTED',
  amount,
  quantity: units,
  price,
  execution: {
    units,
    price,
    priceAsOf: expect.stringMatching(ISO),
    executedAt: expect.stringMatching(ISO),
    settlementDate: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
    status: 'FILLED',
  },
});
