/**
 * The physical ceilings the scenarios are compared with, measured in the same run: one core's
 * ed25519 verification rate, PostgreSQL's single-row insert rate (pgbench, and a node-postgres loop),
 * and PGlite's. The minimal Fastify ceiling is a process of its own (minimal-fastify.ts).
 */
import { execFile } from 'node:child_process';
import { generateKeyPairSync, randomBytes, sign, verify } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';

const run = promisify(execFile);

export type Rate = { perSecond: number; perCpuSecond: number };

/**
 * crypto.verify of an ed25519 signature over a request-sized base, in a loop on this thread: per
 * second of wall time, and per second of this process's CPU time (what one core does when it runs).
 */
export function ed25519VerifyRate(seconds = 2): Rate {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const base = Buffer.from(
    `"@method": GET\n"@target-uri": http://127.0.0.1:8080/v1/customers/c${'x'.repeat(24)}\n` +
      `"authorization": Bearer ${'t'.repeat(260)}\n"x-client-id": ${'c'.repeat(40)}\n` +
      `"@signature-params": ("@method" "@target-uri" "authorization" "x-client-id");created=1;expires=301;keyid="bench"`,
    'latin1',
  );
  const signature = sign(null, base, privateKey);
  for (let i = 0; i < 500; i++) verify(null, base, publicKey, signature); // warm-up
  let count = 0;
  const cpu0 = process.cpuUsage();
  const began = performance.now();
  const until = began + seconds * 1000;
  while (performance.now() < until) {
    for (let i = 0; i < 100; i++) {
      if (!verify(null, base, publicKey, signature)) throw new Error('verify failed');
    }
    count += 100;
  }
  const cpu = process.cpuUsage(cpu0);
  return {
    perSecond: count / ((performance.now() - began) / 1000),
    perCpuSecond: count / ((cpu.user + cpu.system) / 1e6),
  };
}

const SCRATCH = 'bench_insert_ceiling';
const CREATE_SCRATCH = `create table if not exists ${SCRATCH} (id text primary key, payload text not null, created_at timestamptz not null default now())`;
/** One row per statement, autocommit: what a single-row insert costs this PostgreSQL. */
const INSERT_SQL = `INSERT INTO ${SCRATCH} (id, payload) VALUES (md5(random()::text || clock_timestamp()::text), 'Bench Ceiling 254700000000')`;

/** Creates the scratch table; the returned function drops it. */
export async function withScratchTable(databaseUrl: string): Promise<() => Promise<void>> {
  const admin = new pg.Client({ connectionString: databaseUrl });
  await admin.connect();
  await admin.query(CREATE_SCRATCH);
  await admin.query(`truncate ${SCRATCH}`);
  return async () => {
    await admin.query(`drop table if exists ${SCRATCH}`);
    await admin.end();
  };
}

/** PostgreSQL's single-row insert rate at `clients` connections, measured by pgbench (a C client). */
export async function pgbenchInsertRate(
  databaseUrl: string,
  clients: number,
  seconds: number,
): Promise<{ perSecond?: number; error?: string }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'bench-pgbench-'));
  try {
    const script = path.join(dir, 'insert.sql');
    writeFileSync(script, `${INSERT_SQL};\n`);
    const args = ['-n', '-f', script, '-c', String(clients), '-j', '2', '-T', String(seconds), databaseUrl];
    const { stdout } = await run('pgbench', args);
    const tps = /tps = ([\d.]+) \(without initial connection time\)/.exec(stdout);
    return tps ? { perSecond: Number(tps[1]) } : { error: 'pgbench printed no tps' };
  } catch (error) {
    return { error: (error as Error).message.split('\n')[0] };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The same statement from one Node process through a node-postgres pool, `clients` loops at once. */
export async function nodePgInsertRate(
  databaseUrl: string,
  clients: number,
  seconds: number,
): Promise<number> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: clients });
  let count = 0;
  const began = performance.now();
  const until = began + seconds * 1000;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < until) {
        await pool.query(INSERT_SQL);
        count += 1;
      }
    }),
  );
  const rate = count / ((performance.now() - began) / 1000);
  await pool.end();
  return rate;
}

/**
 * PGlite's single-row insert rate on disk, in this process (PGlite serialises every query, so
 * concurrency adds nothing). Opened once (about 5 s); measure() can be called before and after a run.
 */
export async function openPgliteCeiling() {
  const dir = mkdtempSync(path.join(tmpdir(), 'bench-pglite-'));
  const db = await PGlite.create(dir);
  await db.query(CREATE_SCRATCH);
  for (let i = 0; i < 200; i++) await db.query(INSERT_SQL); // warm-up
  return {
    async measure(seconds: number): Promise<number> {
      let count = 0;
      const began = performance.now();
      const until = began + seconds * 1000;
      while (performance.now() < until) {
        await db.query(`INSERT INTO ${SCRATCH} (id, payload) VALUES ($1, 'Bench Ceiling 254700000000')`, [
          randomBytes(12).toString('hex'),
        ]);
        count += 1;
      }
      return count / ((performance.now() - began) / 1000);
    },
    async close() {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
