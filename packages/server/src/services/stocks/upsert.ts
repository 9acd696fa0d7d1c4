import { createId } from '@partner-api/contract';
import { sql } from 'drizzle-orm';
import type { Queryable } from '../../db/client.ts';
import { dateOf, rows } from '../../db/query.ts';
import type { stocks } from '../../db/schema.ts';

export type StockInput = {
  symbol: string;
  name: string;
  price: string;
  currency: string;
  isActive?: boolean;
};
export type StockRow = Pick<
  typeof stocks.$inferSelect,
  'id' | 'symbol' | 'name' | 'price' | 'currency' | 'isActive' | 'createdAt' | 'updatedAt'
>;
type Row = Omit<StockRow, 'createdAt' | 'updatedAt'> & { createdAt: string; updatedAt: string };

/** Every column, in the table's order (the order of the operator's JSON). */
const stockColumns = sql`id, symbol, name, price::text as price, currency, is_active as "isActive",
  created_at::text as "createdAt", updated_at::text as "updatedAt"`;

const stockOf = (row: Row): StockRow => ({
  ...row,
  createdAt: dateOf(row.createdAt),
  updatedAt: dateOf(row.updatedAt),
});

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
  const values = [...bySymbol.values()].map(
    (s) =>
      sql`(${createId()}, ${s.symbol}, ${s.name}, ${s.price}::numeric, ${s.currency}, ${s.isActive ?? true}, now())`,
  );
  const priceIds = [...bySymbol.keys()].map((symbol) => sql`(${symbol}, ${createId()})`);
  const onConflict =
    mode === 'keep'
      ? sql`do nothing`
      : sql`do update set name = excluded.name, price = excluded.price, currency = excluded.currency,
  is_active = excluded.is_active, price_as_of = now(), updated_at = now()`;
  // Each price set here joins the series as the operator's (source IMPORT), applied at once: a seed
  // that only adds missing symbols records the prices of those alone (`do nothing` returns no row).
  const found = await rows<Row>(
    db,
    sql`with upserted as (
    insert into stocks (id, symbol, name, price, currency, is_active, price_as_of)
    values ${sql.join(values, sql`, `)}
    on conflict (symbol) ${onConflict} returning ${stockColumns}
  ), recorded as (
    insert into prices (id, stock_id, price, as_of, source, status)
    select ids.price_id, upserted.id, upserted.price::numeric, now(), 'IMPORT', 'APPLIED'
    from upserted join (values ${sql.join(priceIds, sql`, `)}) as ids (symbol, price_id) using (symbol)
  )
  select * from upserted`,
  );
  return found.map(stockOf).sort((a, b) => (a.symbol < b.symbol ? -1 : a.symbol > b.symbol ? 1 : 0));
}
