/**
 * Scenario 4: many USSD sessions at once, each walking HOME → STOCKS → SELECT_STOCK → BUY_AMOUNT →
 * BUY_CONFIRM → BUY_SUBMITTED, every call signed (at the moment it is sent: a move's body names the
 * session, known only once the session exists) with its own idempotency key.
 */

import { readFileSync } from 'node:fs';
import { type BenchPartner, send, signed } from './partner.ts';
import { cpuSeconds, sampleRss } from './processes.ts';

/** The walk: the choice pressed and the state it must lead to. '1' on STOCKS is the first stock listed. */
export const WALK: { choice: string; state: string }[] = [
  { choice: '1', state: 'STOCKS' },
  { choice: '1', state: 'SELECT_STOCK' },
  { choice: '1', state: 'BUY_AMOUNT' },
  { choice: '1000', state: 'BUY_CONFIRM' },
  { choice: '1', state: 'BUY_SUBMITTED' },
];
export const MOVES = ['open → HOME', ...WALK.map((w) => `'${w.choice}' → ${w.state}`)];

export type UssdOptions = {
  sessions: number;
  /** Each session starts at a random moment within this window. */
  rampMs: number;
  /** Pause before each move, uniformly drawn in [min, max] ms: a person reading the screen and typing. */
  thinkMs: [number, number];
  /** At most this many sessions at once, each walker taking the next customer when done (default: all). */
  concurrency?: number;
};

export type UssdResult = {
  sessions: number;
  completed: number;
  moves: number;
  errors: number;
  errorSamples: string[];
  seconds: number;
  /** Moves answered per second over the run. */
  throughput: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** p99 of each step of the walk. */
  perMove: { move: string; p50Ms: number; p99Ms: number }[];
  serverCores: number;
  loadGeneratorCores: number;
  rssPeakMb: number;
  options: UssdOptions;
};

export const percentile = (sorted: number[], p: number) =>
  sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!;

/** The server's own time for the USSD requests of a phase, from its access lines. */
export type ServerTimes = { requests: number; p50Ms: number; p99Ms: number; maxMs: number };

/**
 * The `responseTime` of every access line of a USSD request (an open or a move) that ended between
 * `from` and `to` (epoch ms): what the server itself spent on each, without the load generator, the
 * kernel's queues and the network (docs/performance.md, "The USSD tail is the disk's").
 * Lines that are not JSON (a warning on stderr) are skipped.
 */
export function ussdServerTimes(logFile: string, from: number, to: number): ServerTimes {
  const times: number[] = [];
  for (const line of readFileSync(logFile, 'utf8').split('\n')) {
    if (!line.includes('"path":"/v1/ussd/')) continue;
    let entry: { time?: number; responseTime?: number };
    try {
      entry = JSON.parse(line);
    } catch {
      continue;
    }
    const { time, responseTime } = entry;
    if (typeof time === 'number' && typeof responseTime === 'number' && time >= from && time <= to)
      times.push(responseTime);
  }
  times.sort((a, b) => a - b);
  return {
    requests: times.length,
    p50Ms: percentile(times, 0.5),
    p99Ms: percentile(times, 0.99),
    maxMs: times.length ? times[times.length - 1]! : Number.NaN,
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const between = ([min, max]: [number, number]) => min + Math.random() * (max - min);

export async function runUssd(
  partner: BenchPartner,
  pid: number,
  customerIds: string[],
  options: UssdOptions,
): Promise<UssdResult> {
  const perStep: number[][] = MOVES.map(() => []);
  const errorSamples: string[] = [];
  let errors = 0;
  let completed = 0;
  const fail = (what: string) => {
    errors += 1;
    if (errorSamples.length < 5) errorSamples.push(what);
  };
  const rss = sampleRss(pid);
  const serverCpu0 = cpuSeconds(pid);
  const self0 = process.cpuUsage();
  const began = performance.now();
  const walk = async (customerId: string) => {
    await sleep(Math.random() * options.rampMs);
    const opened = await send(partner, signed(partner, 'POST', '/v1/ussd/session', { customerId })).catch(
      (e: Error) => ({ status: 0, text: e.message, json: undefined, ms: 0 }),
    );
    if (opened.status !== 201 || opened.json?.data?.currentState !== 'HOME') {
      return fail(`open: ${opened.status} ${opened.text.slice(0, 200)}`);
    }
    perStep[0]!.push(opened.ms);
    const sessionId = opened.json?.data?.sessionId as string;
    for (const [i, step] of WALK.entries()) {
      await sleep(between(options.thinkMs));
      const moved = await send(
        partner,
        signed(partner, 'POST', '/v1/ussd/process', { sessionId, choice: step.choice }),
      ).catch((e: Error) => ({ status: 0, text: e.message, json: undefined, ms: 0 }));
      if (moved.status !== 200 || moved.json?.data?.currentState !== step.state) {
        return fail(`${MOVES[i + 1]}: ${moved.status} ${moved.text.slice(0, 200)}`);
      }
      perStep[i + 1]!.push(moved.ms);
    }
    completed += 1;
  };
  const ids = customerIds.slice(0, options.sessions);
  let next = 0;
  const walker = async () => {
    while (next < ids.length) await walk(ids[next++]!);
  };
  await Promise.all(Array.from({ length: options.concurrency ?? ids.length }, walker));
  const seconds = (performance.now() - began) / 1000;
  const self = process.cpuUsage(self0);
  const all = perStep.flat().sort((a, b) => a - b);
  return {
    sessions: options.sessions,
    completed,
    moves: all.length,
    errors,
    errorSamples,
    seconds,
    throughput: all.length / seconds,
    p50Ms: percentile(all, 0.5),
    p99Ms: percentile(all, 0.99),
    maxMs: all.at(-1) ?? Number.NaN,
    perMove: perStep.map((list, i) => {
      const sorted = [...list].sort((a, b) => a - b);
      return { move: MOVES[i]!, p50Ms: percentile(sorted, 0.5), p99Ms: percentile(sorted, 0.99) };
    }),
    serverCores: (cpuSeconds(pid) - serverCpu0) / seconds,
    loadGeneratorCores: (self.user + self.system) / 1e6 / seconds,
    rssPeakMb: rss.stop().peakMb,
    options,
  };
}
