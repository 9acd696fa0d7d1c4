/**
 * PostgreSQL's commit latency while a scenario runs: a connection of its own commits a one-row
 * insert every `everyMs`, each waiting for the WAL flush as the server's commits do. The USSD paced
 * tail follows the disk's flush stalls (docs/performance.md, "The USSD tail is the disk's"); printed
 * beside it, this tells whether a run's disk stalled.
 */
import pg from 'pg';
import { percentile } from './ussd.ts';

export type FlushProbe = { commits: number; p50Ms: number; p99Ms: number; maxMs: number; over20Ms: number };

export async function startFlushProbe(databaseUrl: string, everyMs = 50) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  await client.query('create table if not exists bench_flush_probe (at timestamptz not null default now())');
  const insert = { name: 'bench_flush_probe', text: 'insert into bench_flush_probe default values' };
  const times: number[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const started = performance.now();
      await client.query(insert);
      times.push(performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  })();
  return {
    async stop(): Promise<FlushProbe> {
      running = false;
      await loop;
      await client.end();
      const sorted = [...times].sort((a, b) => a - b);
      return {
        commits: sorted.length,
        p50Ms: percentile(sorted, 0.5),
        p99Ms: percentile(sorted, 0.99),
        maxMs: sorted.at(-1) ?? Number.NaN,
        over20Ms: sorted.filter((ms) => ms > 20).length,
      };
    },
  };
}
