/**
 * CPU per statement on the embedded store: PGlite's own `query` (Parse, Describe, Bind, Describe,
 * Execute: every statement parsed and planned anew) against `NamingPGlite` (db/pglite.ts: prepared
 * once per session, then Bind, Describe, Execute, Sync in one call). A primary-key select of a
 * customer-shaped row, sequential calls in memory, so the process's CPU per call is PGlite's work
 * plus the JavaScript around it. Run: npx tsx bench/pglite-named.ts. docs/performance.md, "The
 * embedded store".
 */
import { PGlite } from '@electric-sql/pglite';
import { NamingPGlite } from '../packages/server/src/db/pglite.ts';

const CALLS = Number(process.env.CALLS ?? 5000);
const TABLE = `create table customers (id text primary key, organization_id text not null, first_name text,
  last_name text, msisdn text, is_active boolean, created_at timestamptz default now())`;
const SELECT = `select id, organization_id as "organizationId", first_name as "firstName",
  last_name as "lastName", msisdn, is_active as "isActive", created_at::text as "createdAt"
  from customers where id = $1 and organization_id = $2`;

async function filled(db: PGlite) {
  await db.exec(TABLE);
  for (let i = 0; i < 1000; i++) {
    await db.query(
      'insert into customers (id, organization_id, first_name, last_name) values ($1, $2, $3, $4)',
      [`c${i}`, 'org', 'Amina', `Otieno ${i}`],
    );
  }
  return db;
}

async function cpuPerCall(db: PGlite): Promise<number> {
  for (let i = 0; i < 500; i++) await db.query(SELECT, [`c${i % 1000}`, 'org']); // warm-up
  const before = process.cpuUsage();
  for (let i = 0; i < CALLS; i++) await db.query(SELECT, [`c${i % 1000}`, 'org']);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / CALLS;
}

const plain = await filled(await PGlite.create('memory://'));
const named = await filled(await NamingPGlite.open('memory://', {}));
for (let round = 1; round <= 2; round++) {
  const a = await cpuPerCall(plain);
  const b = await cpuPerCall(named);
  console.log(
    `round ${round}: PGlite query ${a.toFixed(0)} µs CPU per call, NamingPGlite ${b.toFixed(0)} µs (${(a / b).toFixed(1)}×)`,
  );
}
await plain.close();
await named.close();
