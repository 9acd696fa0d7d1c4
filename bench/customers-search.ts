/**
 * GET /v1/customers?search= with 10,000 customers in one organization, on PostgreSQL.
 * Target: under 50 ms. Run: npx tsx bench/customers-search.ts
 * Needs DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test). Requests go through
 * Fastify's inject, signed like a partner's, so the figures include the whole auth pipeline.
 */
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { type CustomerListQuery, createId, customerListQuerySchema } from '@partner-api/contract';
import { buildTestApp } from '@partner-api/testkit/app.ts';
import { createPartner, signedInject } from '@partner-api/testkit/partner.ts';
import { eq, sql } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import pg from 'pg';
import { customers } from '../packages/server/src/db/schema.ts';
import { buildListQueries } from '../packages/server/src/services/customers/list.ts';

process.env.DATABASE_URL ??= 'postgres://postgres@127.0.0.1:5432/test';
const CUSTOMERS = 10_000;
const REQUESTS = 200;
const TARGET_MS = 50;
const FIRST = ['Amina', 'Brian', 'Chebet', 'David', 'Esther', 'Faith', 'George', 'Halima', 'Ian', 'Joy'];
const LAST = [
  'Otieno',
  'Kamau',
  'Wanjiru',
  'Kiprop',
  'Mwangi',
  'Njeri',
  'Odhiambo',
  'Achieng',
  'Mutua',
  'Chege',
];
/** A name shared by a tenth of the rows, a rare id fragment, a reference, an absent term. */
const TERMS = ['wanjiru', 'ID00123', 'crm-7777', 'halima', 'zzqx', 'kipr'];

const pick = <T>(list: T[], i: number) => list[i % list.length]!;
const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;

async function measure(request: (i: number) => Promise<{ statusCode: number }>) {
  for (let i = 0; i < 20; i++) await request(i); // warm-up: pool connections, plan caches, JIT
  const timings: number[] = [];
  for (let i = 0; i < REQUESTS; i++) {
    const began = performance.now();
    const res = await request(i);
    timings.push(performance.now() - began);
    if (res.statusCode !== 200) throw new Error(`unexpected ${res.statusCode}`);
  }
  timings.sort((a, b) => a - b);
  const p50 = percentile(timings, 0.5);
  const p99 = percentile(timings, 0.99);
  const summary = `p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, max ${timings.at(-1)!.toFixed(1)} ms`;
  return { p50, p99, summary };
}

async function seed(t: Awaited<ReturnType<typeof buildTestApp>>, organizationId: string) {
  const start = Date.now() - CUSTOMERS * 1000;
  for (let offset = 0; offset < CUSTOMERS; offset += 1000) {
    const rows = Array.from({ length: 1000 }, (_, j) => {
      const i = offset + j;
      const createdAt = new Date(start + i * 1000);
      return {
        id: createId(),
        organizationId,
        firstName: pick(FIRST, i * 7),
        lastName: pick(LAST, Math.floor(i / 10)),
        msisdn: `2547${String(i).padStart(8, '0')}`,
        isActive: i % 5 !== 0,
        identificationNumber: `ID${String(i * 37).padStart(8, '0')}`,
        identificationType: 'NATIONAL_ID',
        referenceId: `crm-${i}`,
        createdAt,
        updatedAt: createdAt,
      };
    });
    await t.ctx.database.db.insert(customers).values(rows);
  }
  await t.ctx.database.db.execute(sql`ANALYZE customers`);
}

async function explain(organizationId: string, search: string) {
  const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await client.connect();
  try {
    const query = customerListQuerySchema.parse({ search }) as CustomerListQuery;
    const dialect = new PgDialect();
    for (const [name, template] of Object.entries(buildListQueries(organizationId, query))) {
      const { sql: text, params } = dialect.sqlToQuery(template);
      const plan = await client.query(`EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) ${text}`, params);
      console.log(`\nEXPLAIN ${name} query, search=${JSON.stringify(search)}:`);
      for (const row of plan.rows) console.log(`  ${row['QUERY PLAN']}`);
    }
  } finally {
    await client.end();
  }
}

async function main() {
  const t = await buildTestApp('postgres');
  let organizationId: string | undefined;
  try {
    const partner = await createPartner(t, { name: 'bench customers-search' });
    organizationId = partner.organizationId;
    const seeding = performance.now();
    await seed(t, partner.organizationId);
    console.log(`seeded ${CUSTOMERS} customers in ${(performance.now() - seeding).toFixed(0)} ms`);

    const get = (term: string) =>
      signedInject(t.app, partner, {
        method: 'GET',
        url: `/v1/customers?search=${encodeURIComponent(term)}`,
      });
    for (const term of TERMS) {
      const res = await get(term);
      if (res.statusCode !== 200) throw new Error(`unexpected ${res.statusCode}: ${res.body}`);
      console.log(`search=${JSON.stringify(term)}: total ${res.json().pagination.total}`);
    }
    const search = await measure((i) => get(pick(TERMS, i)));
    // The same pipeline without a search: what the token, signature and listing cost on their own.
    const plain = await measure(() => signedInject(t.app, partner, { method: 'GET', url: '/v1/customers' }));
    const verdict = search.p99 < TARGET_MS ? 'met' : 'MISSED';
    console.log(
      `\n${REQUESTS} signed requests each over ${CUSTOMERS} customers (load average ${loadavg()[0]!.toFixed(2)}):`,
    );
    console.log(
      `  GET /v1/customers?search=...  ${search.summary} (target p99 < ${TARGET_MS} ms: ${verdict})`,
    );
    console.log(`  GET /v1/customers (baseline)  ${plain.summary}`);
    await explain(partner.organizationId, 'wanjiru'); // a tenth of the rows: a scan is the right plan
    await explain(partner.organizationId, 'crm-7777'); // selective: the trigram index
  } finally {
    // Keep the shared test database from growing by 10,000 rows a run.
    if (organizationId)
      await t.ctx.database.db.delete(customers).where(eq(customers.organizationId, organizationId));
    await t.close();
  }
}

await main();
