import { randomUUID } from 'node:crypto';
import { createId } from '@partner-api/contract';
import type { TestApp } from '@partner-api/testkit/app.ts';
import { type Partner, signedInject } from '@partner-api/testkit/partner.ts';
import { eq } from 'drizzle-orm';
import { expect } from 'vitest';
import { customers, holdings, orders, stocks, transactions } from '../../src/db/schema.ts';
import { NSE_STOCKS } from '../../src/services/stocks/nse-catalog.ts';
import { upsertStocks } from '../../src/services/stocks/upsert.ts';

/**
 * Fixture stocks with fixed prices. The catalog is global and shared by test files running at once
 * on one PostgreSQL: every file upserts the same values (harmless), and no test changes them.
 * Symbols start with ZZ so that they list last and never match a real ticker.
 */
export const FIXTURES = {
  buy: { symbol: 'ZZBUY', name: 'Zulu Buy Test Holdings', price: '25.0000', currency: 'KES' },
  sell: { symbol: 'ZZSELL', name: 'Zulu Sell Test Holdings', price: '40.0000', currency: 'KES' },
  cancel: { symbol: 'ZZCANCEL', name: 'Zulu Cancel Test Holdings', price: '10.0000', currency: 'KES' },
} as const;

/** Ensures the demo NSE catalog (more than one page) and the fixtures exist; returns the fixtures' ids. */
export async function ensureCatalog(t: TestApp): Promise<Record<keyof typeof FIXTURES, string>> {
  const db = t.ctx.database.db;
  await upsertStocks(db, NSE_STOCKS, 'keep');
  await upsertStocks(db, Object.values(FIXTURES), 'replace');
  const idOf = async (symbol: string) => {
    const [row] = await db.select({ id: stocks.id }).from(stocks).where(eq(stocks.symbol, symbol));
    if (!row) throw new Error(`fixture ${symbol} missing`);
    return row.id;
  };
  return {
    buy: await idOf(FIXTURES.buy.symbol),
    sell: await idOf(FIXTURES.sell.symbol),
    cancel: await idOf(FIXTURES.cancel.symbol),
  };
}

/** A customer of the partner's organization, inserted directly (customers are another service). */
export async function insertCustomer(
  t: TestApp,
  partner: Partner,
  fields: { msisdn?: string | null; isActive?: boolean } = {},
): Promise<string> {
  const id = createId();
  await t.ctx.database.db.insert(customers).values({
    id,
    organizationId: partner.organizationId,
    firstName: 'Wanjiku',
    lastName: 'Test',
    msisdn: fields.msisdn === undefined ? '254712345678' : fields.msisdn,
    isActive: fields.isActive ?? true,
  });
  return id;
}

/** A holding of the customer, inserted directly. */
export async function insertHolding(
  t: TestApp,
  partner: Partner,
  customerId: string,
  stockId: string,
  units: string,
) {
  await t.ctx.database.db
    .insert(holdings)
    .values({ organizationId: partner.organizationId, customerId, stockId, units });
}

export type UssdData = {
  sessionId: string;
  currentState: string;
  menu: {
    state: string;
    text: string;
    options: {
      key: string;
      label: string;
      nextState?: string;
      action?: string;
      data?: { stockId: string; symbol: string; name: string };
    }[];
    isEndState: boolean;
  };
  ussdText: string;
  expiresAt: string;
};

/** Signed USSD calls of one partner. */
export function ussdClient(t: TestApp, partner: Partner) {
  const post = (url: string, body: unknown, idempotencyKey: string = randomUUID()) =>
    signedInject(t.app, partner, { method: 'POST', url, body, idempotencyKey });
  return {
    open: (customerId: string, key?: string) => post('/v1/ussd/session', { customerId }, key),
    press: (sessionId: string, choice: string, key?: string) =>
      post('/v1/ussd/process', { sessionId, choice }, key),
    /** Opens a session and presses each choice in turn, asserting every step answered 200. */
    async walk(customerId: string, choices: string[]): Promise<UssdData> {
      const opened = await post('/v1/ussd/session', { customerId });
      expect(opened.statusCode, opened.body).toBe(201);
      let data = opened.json().data as UssdData;
      for (const choice of choices) {
        const moved = await post('/v1/ussd/process', { sessionId: data.sessionId, choice });
        expect(moved.statusCode, moved.body).toBe(200);
        data = moved.json().data as UssdData;
      }
      return data;
    },
  };
}

/** Holds the first move that reaches `ussd.process.effects` open until `release()`. */
export function holdFirstMove(t: TestApp) {
  let release = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let reached = () => {};
  const inside = new Promise<void>((resolve) => {
    reached = resolve;
  });
  let held = false;
  t.ctx.faultInjector = async (point) => {
    if (point !== 'ussd.process.effects' || held) return;
    held = true;
    reached();
    await released;
  };
  return { inside, release };
}

/** The order id on a submitted screen (`... Ref <orderId>`). */
/** The order id a submitted screen shows: `Ref <id>` (en), `Kumb. <id>` (sw). */
export function refOf(data: UssdData): string {
  const match = /(?:Ref|Kumb\.) (c[a-z0-9]{24})/.exec(data.menu.text);
  if (!match?.[1]) throw new Error(`no order reference in: ${data.menu.text}`);
  return match[1];
}

export async function waitFor<T>(
  probe: () => Promise<T | undefined>,
  timeoutMs = 10_000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

export async function orderRow(t: TestApp, orderId: string) {
  const [row] = await t.ctx.database.db.select().from(orders).where(eq(orders.id, orderId));
  return row;
}

export async function transactionsOf(t: TestApp, orderId: string) {
  return t.ctx.database.db
    .select()
    .from(transactions)
    .where(eq(transactions.orderId, orderId))
    .orderBy(transactions.createdAt, transactions.id);
}

/** The position (key) of a stock in the STOCKS list shown. */
export function keyOf(data: UssdData, stockId: string): string {
  const option = data.menu.options.find((o) => o.data?.stockId === stockId);
  if (!option) throw new Error(`stock ${stockId} not listed on: ${data.ussdText}`);
  return option.key;
}
