/**
 * Scenario 8 (`inv`): the investments API's reads (INVESTMENTS_PREVIEW=true), each a signed GET
 * measured like scenario 1 and set beside it: a page of `/v1/instruments`, of `/v1/requests` (an
 * organization with a few hundred orders), of `/v1/transactions`, and `/v1/accounts/{id}/portfolio`
 * of a customer with several positions. Seeded through the API: buys of `POST /v1/requests` spread
 * over a few customers and instruments, then waited for until the sandbox has settled and executed
 * them (the portfolio then holds positions with prices and costs).
 */
import type { PreparedRequest } from './load.ts';
import { type BenchPartner, send, signed } from './partner.ts';

export type InvestmentsSeed = {
  orders: number;
  executed: number;
  customers: number;
  positions: number;
  accountId: string;
  /** The reads measured, each a path of a signed GET. */
  reads: { name: string; path: string }[];
};

type Json = { data?: unknown; pagination?: { total?: number } };
type Instrument = {
  id: string;
  symbol: string;
  minOrderAmount: string;
  latestPrice?: { value?: string | null };
};

async function getJson(partner: BenchPartner, path: string): Promise<Json> {
  const res = await send(partner, signed(partner, 'GET', path));
  if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${res.text}`);
  return JSON.parse(res.text) as Json;
}

/**
 * `orders` buys over `customerIds` (each customer buys every one of `instruments` instruments in
 * turn), 20 at a time; then waits until every buy is EXECUTED (at most `timeoutMs`).
 */
export async function seedInvestments(
  partner: BenchPartner,
  customerIds: string[],
  options: { orders: number; instruments: number; timeoutMs?: number; log: (line: string) => void },
): Promise<InvestmentsSeed> {
  const listed = (await getJson(partner, '/v1/instruments?tradingStatus=ACTIVE&limit=100'))
    .data as Instrument[];
  const priced = listed.filter((i) => i.latestPrice?.value).slice(0, options.instruments);
  if (priced.length < options.instruments) throw new Error(`only ${priced.length} priced instruments`);
  // Three units' worth, at least the minimum: a whole-units buy of every instrument.
  const amountOf = (i: Instrument) =>
    String(Math.max(Math.ceil(Number(i.minOrderAmount)), Math.ceil(Number(i.latestPrice!.value) * 3)));
  let next = 0;
  const worker = async () => {
    for (let n = next++; n < options.orders; n = next++) {
      const instrument = priced[n % priced.length]!;
      const customerId = customerIds[Math.floor(n / priced.length) % customerIds.length]!;
      const res = await send(
        partner,
        signed(partner, 'POST', '/v1/requests', {
          customerId,
          instrumentId: instrument.id,
          side: 'BUY',
          amount: amountOf(instrument),
        }),
      );
      if (res.status !== 201) throw new Error(`POST /v1/requests: ${res.status} ${res.text}`);
    }
  };
  await Promise.all(Array.from({ length: 20 }, worker));
  options.log(`investments: ${options.orders} buys placed; waiting until the sandbox executes them`);
  const deadline = Date.now() + (options.timeoutMs ?? 120_000);
  let executed = 0;
  for (;;) {
    executed = (await getJson(partner, '/v1/requests?status=EXECUTED&limit=1')).pagination?.total ?? 0;
    if (executed >= options.orders) break;
    if (Date.now() > deadline) throw new Error(`${options.orders - executed} buys never executed`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  const first = customerIds[0]!;
  const accounts = (await getJson(partner, `/v1/accounts?customerId=${first}`)).data as { id: string }[];
  const accountId = accounts[0]?.id;
  if (!accountId) throw new Error('the first customer has no account');
  const portfolio = (await getJson(partner, `/v1/accounts/${accountId}/portfolio`)).data as {
    positions: unknown[];
  };
  const customers = Math.min(customerIds.length, Math.ceil(options.orders / priced.length));
  return {
    orders: options.orders,
    executed,
    customers,
    positions: portfolio.positions.length,
    accountId,
    reads: [
      { name: 'GET /v1/instruments (a page of 10)', path: '/v1/instruments' },
      { name: 'GET /v1/requests (a page of 10)', path: '/v1/requests' },
      { name: 'GET /v1/transactions (a page of 10)', path: '/v1/transactions' },
      { name: 'GET /v1/accounts/{id}/portfolio', path: `/v1/accounts/${accountId}/portfolio` },
    ],
  };
}

/** The signed request of a read, signed anew each time (a signature is sent once). */
export const signedRead = (partner: BenchPartner, path: string): PreparedRequest =>
  signed(partner, 'GET', path);
