import { createId } from '@partner-api/contract';
import type { TestApp } from '@partner-api/testkit/app.ts';
import { stocks } from '../../src/db/schema.ts';
import { recordPrice } from '../../src/services/market/prices.ts';

/** The app settings of the investments suites. */
export const INVESTMENTS_ENV = { INVESTMENTS_PREVIEW: 'true' };

/** A CUID no instrument has. */
export const NONEXISTENT_ID = 'c000000000000000000000000';

/** An instant in East Africa Time. */
export const eat = (local: string) => new Date(`${local}+03:00`);

/** A run's own tag: its instruments' symbols and names carry it, so a search finds only them. */
export const runTag = () => Math.random().toString(36).slice(2, 8).toUpperCase();

type InstrumentSeed = {
  suffix: string;
  name: string;
  price: string;
  isActive?: boolean;
  investmentType?: string;
  isin?: string;
  minOrderAmount?: string;
  fractional?: boolean;
};

/**
 * Instruments of the catalogue (global: every organization sees them), written directly as the
 * operator's import would, each priced as of `asOf` through the prices module. Returns their ids by suffix.
 */
export async function seedInstruments(
  t: TestApp,
  tag: string,
  seeds: InstrumentSeed[],
  asOf: Date,
): Promise<Record<string, { id: string; symbol: string }>> {
  const db = t.ctx.database.db;
  const out: Record<string, { id: string; symbol: string }> = {};
  for (const seed of seeds) {
    const id = createId();
    const symbol = `MK${tag}${seed.suffix}`;
    await db.insert(stocks).values({
      id,
      symbol,
      name: seed.name.replace('{tag}', tag),
      price: seed.price,
      isActive: seed.isActive ?? true,
      investmentType: seed.investmentType ?? 'STOCK',
      isin: seed.isin ?? null,
      minOrderAmount: seed.minOrderAmount ?? null,
      fractional: seed.fractional ?? true,
    });
    await db.transaction((tx) => recordPrice(tx, { symbol, price: seed.price, asOf, source: 'IMPORT' }));
    out[seed.suffix] = { id, symbol };
  }
  return out;
}
