import { randomUUID } from 'node:crypto';
import type { TestApp } from '@partner-api/testkit/app.ts';
import { sql } from 'drizzle-orm';
import { rows } from '../../src/db/query.ts';
import { upsertStocks } from '../../src/services/stocks/upsert.ts';

/** An instrument of our own, with a symbol no other suite uses. */
export async function ownInstrument(t: TestApp, price = '20.0000') {
  const symbol = `AC${randomUUID()
    .replace(/[^a-f]/g, '')
    .slice(0, 6)
    .toUpperCase()}`;
  const [row] = await upsertStocks(t.ctx.database.db, [
    { symbol, name: `Accounts ${symbol}`, price, currency: 'KES' },
  ]);
  return { id: row!.id, symbol };
}

/** ACCOUNT.CREATED events of the organization, by their data's account id. */
export const accountEvents = (t: TestApp, organizationId: string) =>
  rows<{ accountId: string; data: Record<string, unknown> }>(
    t.ctx.database.db,
    sql`select data->>'accountId' as "accountId", data from webhook_events
    where organization_id = ${organizationId} and event = 'ACCOUNT.CREATED' order by created_at`,
  );
