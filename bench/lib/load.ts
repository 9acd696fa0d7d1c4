/**
 * autocannon in this process, measuring the server's CPU, the load generator's own CPU and the whole
 * machine's during the run. Signed scenarios hand in a pool of requests signed beforehand: each is
 * sent exactly once (`amount` = pool size), so no signature is ever replayed and signing costs the
 * load generator nothing while it measures.
 */
import autocannon from 'autocannon';
import { cpuSeconds, machineJiffies, sampleRss } from './processes.ts';

export type PreparedRequest = {
  method: 'GET' | 'POST' | 'PATCH';
  path: string;
  headers: Record<string, string>;
  body?: string;
};

export type LoadResult = {
  requests: number;
  /** Responses with the expected status. */
  ok: number;
  seconds: number;
  /** Responses per second with the expected status. */
  throughput: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Responses with another status, connection errors and timeouts. */
  errors: number;
  statuses: Record<string, number>;
  /** CPU seconds the server process used per second of the run (1.0 = one core). */
  serverCores: number;
  serverCpuSeconds: number;
  /** Requests per CPU second of the server process: its capacity per core. */
  perServerCoreSecond: number;
  /** CPU the load generator (this process) used per second of the run. */
  loadGeneratorCores: number;
  /** Share of the machine's CPU (all cores) busy during the run, every process included. */
  machineBusy: number;
  rssPeakMb: number;
};

export type LoadOptions = {
  url: string;
  /** The server process measured (CPU, RSS). */
  pid: number;
  connections: number;
  expectStatus: number;
  /** Either a fixed request for `seconds`, or a pool of distinct requests each sent once. */
  fixed?: PreparedRequest;
  seconds?: number;
  pool?: PreparedRequest[];
};

export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const statuses: Record<string, number> = {};
  let next = 0;
  const pool = options.pool;
  const base = {
    url: options.url,
    connections: options.connections,
    pipelining: 1,
    timeout: 30,
  };
  const rss = sampleRss(options.pid);
  const serverCpu0 = cpuSeconds(options.pid);
  const selfCpu0 = process.cpuUsage();
  const machine0 = machineJiffies();
  const began = performance.now();
  let lastResponseAt = began;
  const onResponse = (status: number) => {
    statuses[status] = (statuses[status] ?? 0) + 1;
    lastResponseAt = performance.now();
  };
  const result = await autocannon(
    pool
      ? {
          ...base,
          amount: pool.length,
          requests: [
            {
              setupRequest: (request: autocannon.Request) => {
                // autocannon builds exactly `amount` requests (checked below): each pooled one once.
                const prepared = pool[Math.min(next++, pool.length - 1)]!;
                return { ...request, ...prepared };
              },
              onResponse,
            },
          ],
        }
      : {
          ...base,
          duration: options.seconds ?? 10,
          requests: [{ ...options.fixed!, onResponse }],
        },
  );
  // A pooled run ends with its last response: autocannon itself notices that `amount` is reached
  // only at its next one-second tick, which would count up to a second of idling as the run's.
  const seconds = ((pool ? lastResponseAt : performance.now()) - began) / 1000;
  if (pool && next > pool.length)
    throw new Error(`${next - pool.length} pooled requests would have been sent twice`);
  const serverCpu = cpuSeconds(options.pid) - serverCpu0;
  const self = process.cpuUsage(selfCpu0);
  const machine1 = machineJiffies();
  const peak = rss.stop();
  const ok = statuses[String(options.expectStatus)] ?? 0;
  const total = Object.values(statuses).reduce((a, b) => a + b, 0);
  return {
    requests: total,
    ok,
    seconds,
    throughput: ok / seconds,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    maxMs: result.latency.max,
    errors: total - ok + result.errors + result.timeouts,
    statuses,
    serverCores: serverCpu / seconds,
    serverCpuSeconds: serverCpu,
    perServerCoreSecond: ok / serverCpu,
    loadGeneratorCores: (self.user + self.system) / 1e6 / seconds,
    machineBusy: (machine1.busy - machine0.busy) / (machine1.total - machine0.total),
    rssPeakMb: peak.peakMb,
  };
}

/** Several runs of one scenario as one: sums, the mean p50 and the worst p99. */
export function combine(results: LoadResult[]): LoadResult {
  const sum = (pick: (r: LoadResult) => number) => results.reduce((a, r) => a + pick(r), 0);
  const seconds = sum((r) => r.seconds);
  const ok = sum((r) => r.ok);
  const cpu = sum((r) => r.serverCpuSeconds);
  const statuses: Record<string, number> = {};
  for (const r of results)
    for (const [k, v] of Object.entries(r.statuses)) statuses[k] = (statuses[k] ?? 0) + v;
  return {
    requests: sum((r) => r.requests),
    ok,
    seconds,
    throughput: ok / seconds,
    p50Ms: sum((r) => r.p50Ms) / results.length,
    p99Ms: Math.max(...results.map((r) => r.p99Ms)),
    maxMs: Math.max(...results.map((r) => r.maxMs)),
    errors: sum((r) => r.errors),
    statuses,
    serverCores: cpu / seconds,
    serverCpuSeconds: cpu,
    perServerCoreSecond: ok / cpu,
    loadGeneratorCores: sum((r) => r.loadGeneratorCores * r.seconds) / seconds,
    machineBusy: sum((r) => r.machineBusy * r.seconds) / seconds,
    rssPeakMb: Math.max(...results.map((r) => r.rssPeakMb)),
  };
}
