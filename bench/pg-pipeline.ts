/**
 * node-postgres's pipelining (pg 8.23, `pipeline: true`) against the pool, for autocommit inserts
 * like the signed create's one statement (docs/performance.md, "Tried and dropped"): 20,000 inserts
 * of one row from 50 concurrent workers into a scratch table, through a pool of 10, one pipelined
 * client, and four pipelined clients taken in turn; inserts a second and this process's CPU per
 * insert, two rounds. Needs DATABASE_URL.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx bench/pg-pipeline.ts
 */
import pg from 'pg';

const url = process.env.DATABASE_URL;
if (!url) {
  console.error('DATABASE_URL is required');
  process.exit(2);
}
const INSERTS = 20_000;
const WORKERS = 50;
const TABLE = `pipeline_bench_${process.pid}`;

type Target = { query: (config: pg.QueryConfig) => Promise<unknown> };

async function measure(label: string, targets: Target[]): Promise<void> {
  let next = 0;
  const began = performance.now();
  const cpu = process.cpuUsage();
  const worker = async () => {
    for (let i = next++; i < INSERTS; i = next++) {
      await targets[i % targets.length]!.query({
        name: 'pipeline_bench_insert',
        text: `insert into ${TABLE} (id, v) values ($1, $2)`,
        values: [`${label} ${i}`, 'x'.repeat(100)],
      });
    }
  };
  await Promise.all(Array.from({ length: WORKERS }, worker));
  const seconds = (performance.now() - began) / 1000;
  const used = process.cpuUsage(cpu);
  console.log(
    `${label.padEnd(22)} ${(INSERTS / seconds).toFixed(0).padStart(6)} inserts/s, ` +
      `${((used.user + used.system) / INSERTS).toFixed(1)} µs of this process's CPU an insert`,
  );
}

async function pipelined(count: number): Promise<pg.Client[]> {
  return Promise.all(
    Array.from({ length: count }, async () => {
      const client = new pg.Client({ connectionString: url, pipeline: true } as pg.ClientConfig);
      await client.connect();
      return client;
    }),
  );
}

const admin = new pg.Client(url);
await admin.connect();
await admin.query(`create table ${TABLE} (id text primary key, v text)`);
try {
  for (let round = 1; round <= 2; round++) {
    const pool = new pg.Pool({ connectionString: url, max: 10 });
    await measure(`round ${round}, pool of 10`, [pool]);
    await pool.end();
    for (const count of [1, 4]) {
      const clients = await pipelined(count);
      await measure(`round ${round}, ${count} pipelined`, clients);
      await Promise.all(clients.map((client) => client.end()));
    }
  }
} finally {
  await admin.query(`drop table ${TABLE}`);
  await admin.end();
}
