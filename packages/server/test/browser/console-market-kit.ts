import { adminInject } from '@partner-api/testkit/helpers.ts';
import type { Page } from 'playwright-core';
import { upsertStocks } from '../../src/services/stocks/upsert.ts';
import { type ConsoleBrowser, consoleBrowser, signIn } from './console-kit.ts';

/** Tuesday 1 Dec 2026, 11:00 EAT: the NSE is in its session. */
export const NOW = new Date('2026-12-01T08:00:00Z');

/**
 * The Market and Book pages' browser: `consoleBrowser()` with its clock at `NOW`, and two
 * instruments of fixed names and prices (ZLKT at 100, ZMVC at 45.50); answers their rows.
 */
export async function marketBrowser(): Promise<{
  b: ConsoleBrowser;
  stocks: { id: string; symbol: string }[];
}> {
  const b = await consoleBrowser();
  b.t.ctx.clock = () => NOW;
  const stocks = await upsertStocks(b.t.ctx.database.db, [
    { symbol: 'ZLKT', name: 'Lakeside Tea Ltd', price: '100.0000', currency: 'KES' },
    { symbol: 'ZMVC', name: 'Mvita Cement Ltd', price: '45.5000', currency: 'KES' },
  ]);
  return { b, stocks };
}

/**
 * Adds an operator of `role` with a fixed name and signs it in. The name is masked in screenshots
 * but its width is not: a random name can wrap the header and change the page's height.
 */
export async function signInAs(b: ConsoleBrowser, role: 'operator' | 'viewer'): Promise<Page> {
  const name = role === 'operator' ? 'Amina Otieno' : 'Baraka Mwangi';
  const added = await adminInject(b.t, 'POST', '/admin/operators', { name, role });
  return signIn(b, { name, credential: (added.json() as { credential: string }).credential });
}
