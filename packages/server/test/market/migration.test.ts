/**
 * Migrations 0007 to 0011 applied in place: a store with stocks, a holding and an executed order,
 * migrated as far as 0006, keeps all of it, each stock gets its price as a first IMPORT and the
 * executed order its execution, each holding its opening ledger entry and its units pending
 * settlement, each transaction that moved money its money entry.
 */
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { drizzle } from 'drizzle-orm/pglite';
import { migrate } from 'drizzle-orm/pglite/migrator';
import { describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../../src/db/client.ts';

/** A copy of the migrations folder whose journal stops after `lastTag`. */
function migrationsUpTo(lastTag: string): string {
  const folder = mkdtempSync(path.join(tmpdir(), 'migrations-'));
  cpSync(MIGRATIONS, folder, { recursive: true });
  const journalFile = path.join(folder, 'meta', '_journal.json');
  const journal = JSON.parse(readFileSync(journalFile, 'utf8')) as { entries: { tag: string }[] };
  const last = journal.entries.findIndex((e) => e.tag === lastTag);
  journal.entries = journal.entries.slice(0, last + 1);
  writeFileSync(journalFile, JSON.stringify(journal));
  return folder;
}

describe('the securities migrations, in place on a store that has data', () => {
  it('keeps every stock, holding and order; adds first prices and executions', async () => {
    const client = await PGlite.create({ extensions: { pg_trgm } });
    const db = drizzle(client);
    try {
      await migrate(db, { migrationsFolder: migrationsUpTo('0006_callback_records_dispatch') });
      await client.exec(`
        insert into organizations (id, name) values ('corg0000000000000000000001', 'Org');
        insert into customers (id, organization_id, first_name, last_name, msisdn)
          values ('ccus0000000000000000000001', 'corg0000000000000000000001', 'Amina', 'Otieno', '254712000001');
        insert into stocks (id, symbol, name, price, currency, updated_at)
          values ('cstk0000000000000000000001', 'SCOM', 'Safaricom', 28.55, 'KES', '2026-11-20T08:00:00Z'),
                 ('cstk0000000000000000000002', 'EQTY', 'Equity', 46.2, 'KES', '2026-11-21T08:00:00Z');
        insert into holdings (organization_id, customer_id, stock_id, units)
          values ('corg0000000000000000000001', 'ccus0000000000000000000001', 'cstk0000000000000000000001', 3.5);
        insert into orders (id, organization_id, customer_id, stock_id, side, status, amount, currency, quantity, price, updated_at)
          values ('cord0000000000000000000001', 'corg0000000000000000000001', 'ccus0000000000000000000001',
                  'cstk0000000000000000000001', 'BUY', 'EXECUTED', 100, 'KES', 3.5, 28.55, '2026-11-27T12:00:00Z'),
                 ('cord0000000000000000000002', 'corg0000000000000000000001', 'ccus0000000000000000000001',
                  'cstk0000000000000000000001', 'BUY', 'FAILED', 50, 'KES', null, null, '2026-11-27T12:00:00Z');
        insert into transactions (id, organization_id, order_id, type, amount, currency, status, provider, msisdn, settled_at)
          values ('ctrx0000000000000000000001', 'corg0000000000000000000001', 'cord0000000000000000000001',
                  'INCOMING', 100, 'KES', 'SUCCESS', 'MPESA', '254712000001', '2026-11-27T11:59:00Z'),
                 ('ctrx0000000000000000000002', 'corg0000000000000000000001', 'cord0000000000000000000002',
                  'INCOMING', 50, 'KES', 'FAILED', 'MPESA', '254712000001', '2026-11-27T11:59:00Z');
      `);

      await migrate(db, { migrationsFolder: MIGRATIONS });

      const stocks = await client.query<{
        symbol: string;
        price: string;
        investment_type: string;
        market: string;
        price_as_of: Date;
      }>(
        `select symbol, price::text as price, investment_type, market, price_as_of from stocks order by symbol`,
      );
      expect(stocks.rows.map((s) => [s.symbol, s.price, s.investment_type, s.market])).toEqual([
        ['EQTY', '46.2000', 'STOCK', 'XNAI'],
        ['SCOM', '28.5500', 'STOCK', 'XNAI'],
      ]);
      expect(stocks.rows[1]?.price_as_of.toISOString()).toBe('2026-11-20T08:00:00.000Z');
      const prices = await client.query<{
        symbol: string;
        price: string;
        source: string;
        status: string;
        as_of: Date;
      }>(
        `select s.symbol, p.price::text as price, p.source, p.status, p.as_of from prices p join stocks s on s.id = p.stock_id order by s.symbol`,
      );
      expect(prices.rows.map((p) => [p.symbol, p.price, p.source, p.status, p.as_of.toISOString()])).toEqual([
        ['EQTY', '46.2000', 'IMPORT', 'APPLIED', '2026-11-21T08:00:00.000Z'],
        ['SCOM', '28.5500', 'IMPORT', 'APPLIED', '2026-11-20T08:00:00.000Z'],
      ]);
      const holdings = await client.query<{ units: string }>(`select units::text as units from holdings`);
      expect(holdings.rows).toEqual([{ units: '3.5000' }]);
      const orders = await client.query<{ id: string; status: string }>(
        `select id, status from orders order by id`,
      );
      expect(orders.rows.map((o) => o.status)).toEqual(['EXECUTED', 'FAILED']);
      // Executed Friday 27 Nov 2026 (15:00 EAT): T+3 weekdays is Wednesday 2 December; only the executed order.
      const executions = await client.query<{
        order_id: string;
        side: string;
        units: string;
        price: string;
        settlement_date: string;
      }>(
        `select order_id, side, units::text as units, price::text as price, settlement_date from executions`,
      );
      expect(executions.rows).toEqual([
        {
          order_id: 'cord0000000000000000000001',
          side: 'BUY',
          units: '3.5000',
          price: '28.5500',
          settlement_date: '2026-12-02',
        },
      ]);
      // The ledger opens with each holding as it stood.
      const ledger = await client.query<{ kind: string; units: string }>(
        `select kind, units::text as units from ledger_entries`,
      );
      expect(ledger.rows).toEqual([{ kind: 'OPENING', units: '3.5000' }]);
      // The executed buy's units settle on 2 December: until then they are pending, not available.
      const pending = await client.query<{ pending: string }>(
        `select pending_units::text as pending from holdings`,
      );
      expect(pending.rows).toEqual([{ pending: '3.5000' }]);
      // The money ledger opens with each transaction that moved money; the failed one moved none.
      const money = await client.query<{ transaction_id: string; kind: string; amount: string }>(
        `select transaction_id, kind, amount::text as amount from money_entries`,
      );
      expect(money.rows).toEqual([
        { transaction_id: 'ctrx0000000000000000000001', kind: 'COLLECTION', amount: '100.00' },
      ]);
    } finally {
      await client.close();
    }
  }, 120_000); // a fresh PGlite and every migration twice: slow on a loaded machine
});
