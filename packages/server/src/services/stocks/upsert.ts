import { createId } from '@partner-api/contract';
import { asc, eq, sql } from 'drizzle-orm';
import type { Queryable } from '../../db/client.ts';
import { stocks } from '../../db/schema.ts';

export type StockInput = {
  symbol: string;
  name: string;
  price: string;
  currency: string;
  isActive?: boolean;
};
export type StockRow = typeof stocks.$inferSelect;

/**
 * Upserts the catalog by symbol (the operator's import, the sandbox seed). `mode: 'keep'` only adds
 * missing symbols, so a restart's seed never overwrites prices the operator imported.
 */
export async function upsertStocks(
  db: Queryable,
  input: StockInput[],
  mode: 'replace' | 'keep' = 'replace',
): Promise<StockRow[]> {
  if (input.length === 0) return [];
  // One row per symbol: the last one given wins, and a statement never touches a row twice.
  const bySymbol = new Map(input.map((s) => [s.symbol, s]));
  const values = [...bySymbol.values()].map((s) => ({ id: createId(), ...s, isActive: s.isActive ?? true }));
  const insert = db.insert(stocks).values(values);
  const rows =
    mode === 'keep'
      ? await insert.onConflictDoNothing({ target: stocks.symbol }).returning()
      : await insert
          .onConflictDoUpdate({
            target: stocks.symbol,
            set: {
              name: sql`excluded.name`,
              price: sql`excluded.price`,
              currency: sql`excluded.currency`,
              isActive: sql`excluded.is_active`,
              updatedAt: sql`now()`,
            },
          })
          .returning();
  return rows.sort((a, b) => (a.symbol < b.symbol ? -1 : a.symbol > b.symbol ? 1 : 0));
}

/** The listed (active) catalog, by symbol: what USSD shows. */
export async function listActiveStocks(db: Queryable): Promise<StockRow[]> {
  return db.select().from(stocks).where(eq(stocks.isActive, true)).orderBy(asc(stocks.symbol));
}
