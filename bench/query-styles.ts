/**
 * CPU per call of the three ways a query could be written, on the hottest one (the caller lookup
 * every authenticated request makes): drizzle's builder assembled per call, the same builder
 * `.prepare()`d once, and a `sql` template through db/query.ts. Sequential calls, so the client's
 * CPU per call is what the process spent divided by the calls (PGlite's includes the database's).
 * Run: npx tsx bench/query-styles.ts (add DATABASE_URL for PostgreSQL too). docs/performance.md,
 * "One way to write a query".
 */
import { createId } from '@partner-api/contract';
import { eq, sql } from 'drizzle-orm';
import { type Db, openDatabase } from '../packages/server/src/db/client.ts';
import { one } from '../packages/server/src/db/query.ts';
import { credentials, organizations, revokedTokens } from '../packages/server/src/db/schema.ts';

const CALLS = Number(process.env.CALLS ?? 4000);
const ROUNDS = 3;

const selection = {
  credentialId: credentials.id,
  organizationId: credentials.organizationId,
  isActive: credentials.isActive,
  expiresAt: credentials.expiresAt,
  publicKey: credentials.publicKey,
  trustedIps: credentials.trustedIps,
  organizationActive: organizations.isActive,
};

const builder = (db: Db, id: string, jti: string) =>
  db
    .select({
      ...selection,
      revoked: sql<boolean>`exists (select 1 from ${revokedTokens} where ${revokedTokens.jti} = ${jti})`,
    })
    .from(credentials)
    .innerJoin(organizations, eq(organizations.id, credentials.organizationId))
    .where(eq(credentials.id, id));

const candidates = (db: Db) => {
  const statement = db
    .select({
      ...selection,
      revoked: sql<boolean>`exists (select 1 from ${revokedTokens} where ${revokedTokens.jti} = ${sql.placeholder('jti')})`,
    })
    .from(credentials)
    .innerJoin(organizations, eq(organizations.id, credentials.organizationId))
    .where(eq(credentials.id, sql.placeholder('id')))
    .prepare('bench_caller');
  type Row = {
    credentialId: string;
    organizationId: string;
    isActive: boolean;
    expiresAt: string | null;
    publicKey: string | null;
    trustedIps: string[];
    organizationActive: boolean;
    revoked: boolean;
  };
  return {
    builder: (id: string, jti: string) => builder(db, id, jti),
    prepared: (id: string, jti: string) => statement.execute({ id, jti }),
    template: (id: string, jti: string) =>
      one<Row>(
        db,
        sql`select c.id as "credentialId", c.organization_id as "organizationId", c.is_active as "isActive",
  c.expires_at as "expiresAt", c.public_key as "publicKey",
  c.trusted_ips as "trustedIps", o.is_active as "organizationActive",
  exists (select 1 from revoked_tokens r where r.jti = ${jti}) as revoked
  from credentials c join organizations o on o.id = c.organization_id where c.id = ${id}`,
      ),
  };
};

async function measure(store: string, databaseUrl?: string) {
  const database = await openDatabase(databaseUrl ? { databaseUrl } : {});
  const org = createId();
  const id = createId();
  await database.db.insert(organizations).values({ id: org, name: 'bench' });
  await database.db
    .insert(credentials)
    .values({ id, organizationId: org, name: 'bench', clientId: createId(), secretHash: 'x' });
  const runs = candidates(database.db);
  const best: Record<string, number> = {};
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, call] of Object.entries(runs)) {
      for (let i = 0; i < 200; i++) await call(id, 'warm');
      const before = process.cpuUsage();
      for (let i = 0; i < CALLS; i++) await call(id, `jti-${i}`);
      const used = process.cpuUsage(before);
      const us = (used.user + used.system) / CALLS;
      best[name] = Math.min(best[name] ?? Number.POSITIVE_INFINITY, us);
    }
  }
  await database.db.delete(credentials).where(eq(credentials.id, id));
  await database.db.delete(organizations).where(eq(organizations.id, org));
  await database.close();
  for (const [name, us] of Object.entries(best))
    console.log(`${store.padEnd(9)} ${name.padEnd(9)} ${us.toFixed(1).padStart(7)} µs CPU per call`);
}

await measure('pglite');
if (process.env.DATABASE_URL) await measure('postgres', process.env.DATABASE_URL);
