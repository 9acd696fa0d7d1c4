/**
 * Names the JIT frames of a callgrind count and prints the instructions per request of each function
 * (its own, not its callees'), or the difference between two counts. `bench/instructions.sh` keeps
 * the callgrind files; started with `--perf-basic-prof`, node writes `/tmp/perf-<pid>.map`, which
 * gives the address range of every function V8 compiled (docs/performance.md, "Profiling").
 *
 *   npx tsx bench/lib/callgrind-names.ts <callgrind dir or file> [--requests 8000] [--top 40]
 *   npx tsx bench/lib/callgrind-names.ts <route's> --against <ceiling's>    # what the route adds
 *   npx tsx bench/lib/callgrind-names.ts <callgrind dir or file> --callers NAME  # who calls NAME
 *
 * Names are only as good as the map: V8 reuses the addresses of code it throws away, and a frame is
 * named after the last function compiled at its start address.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

type JitMap = { starts: number[]; ends: number[]; names: string[] };

/** The main thread's file: callgrind writes one per thread (`cg.out-01` is the first). */
function mainThreadFile(target: string): string {
  return statSync(target).isDirectory() ? path.join(target, 'cg.out-01') : target;
}

function loadJitMap(file: string): JitMap | undefined {
  const pid = /^pid: (\d+)$/m.exec(readFileSync(file, 'utf8').slice(0, 2000))?.[1];
  const mapFile = `/tmp/perf-${pid}.map`;
  if (!pid || !existsSync(mapFile)) return undefined;
  // Later lines win: the same start address may have held several functions over the run.
  const byStart = new Map<number, [number, string]>();
  for (const line of readFileSync(mapFile, 'utf8').split('\n')) {
    const [start, size, ...name] = line.split(' ');
    if (!start || !size) continue;
    byStart.set(Number.parseInt(start, 16), [Number.parseInt(size, 16), name.join(' ')]);
  }
  const starts = [...byStart.keys()].sort((a, b) => a - b);
  return {
    starts,
    ends: starts.map((s) => s + byStart.get(s)![0]),
    names: starts.map((s) => byStart.get(s)![1]),
  };
}

function jitName(map: JitMap, address: number): string | undefined {
  let lo = 0;
  let hi = map.starts.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (map.starts[mid]! <= address) lo = mid + 1;
    else hi = mid - 1;
  }
  return hi >= 0 && address < map.ends[hi]! ? map.names[hi] : undefined;
}

/** callgrind_annotate's output with each `???:0x…` frame named from the map. */
function annotate(file: string, args: string[]): string {
  const text = execFileSync('callgrind_annotate', [...args, file], {
    encoding: 'utf8',
    maxBuffer: 1 << 28,
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const map = loadJitMap(file);
  if (!map) return text;
  return text.replace(/\?\?\?:0x([0-9a-f]+)/g, (frame, hex: string) => {
    const name = jitName(map, Number.parseInt(hex, 16));
    return name ? `JIT:${name}` : frame;
  });
}

const COST_LINE = /^\s*([\d,]+) \(\s*[\d.]+%\)\s+(\*\s+|<\s+)?(.*)$/;

/** One name for a function whatever its recursion depth, library path or bundle line. */
function functionKey(raw: string): string {
  return raw
    .replace(/\s*\[[^\]]*\]\s*$/, '')
    .replace(/ \([\d,]+x\)$/, '')
    .replace(/'\d+$/, '')
    .replace(/^JIT:(JS|RegExp):[*^~]?/, 'js ')
    .replace(/file:\/\/\S*\/dist\/[\w.-]+\.js/, 'bundle')
    .replace(/\S*\/node_modules\//, '');
}

/** Instructions of each function's own code (callgrind_annotate's default listing), by key. */
function selfCosts(file: string): Map<string, number> {
  const costs = new Map<string, number>();
  let listing = false;
  for (const line of annotate(file, ['--threshold=100']).split('\n')) {
    if (line.includes('file:function')) listing = true;
    const match = listing ? COST_LINE.exec(line) : null;
    if (!match) continue;
    const key = functionKey(match[3]!);
    costs.set(key, (costs.get(key) ?? 0) + Number(match[1]!.replaceAll(',', '')));
  }
  return costs;
}

function callers(file: string, wanted: string, requests: number, top: number): void {
  for (const block of annotate(file, ['--tree=caller', '--threshold=100']).split('\n\n')) {
    const lines = block.split('\n');
    const self = lines.find((l) => COST_LINE.exec(l)?.[2]?.startsWith('*'));
    if (!self?.includes(wanted)) continue;
    console.log(self.trim());
    const rows = lines
      .map((l) => COST_LINE.exec(l))
      .filter((m) => m?.[2]?.startsWith('<'))
      .map((m) => [Number(m![1]!.replaceAll(',', '')) / requests, m![3]!] as const)
      .sort((a, b) => b[0] - a[0]);
    for (const [cost, name] of rows.slice(0, top)) console.log(`${cost.toFixed(0).padStart(9)}  ${name}`);
  }
}

function main(): void {
  const argv = process.argv.slice(2);
  const option = (flag: string) => {
    const i = argv.indexOf(flag);
    return i < 0 ? undefined : argv.splice(i, 2)[1];
  };
  const requests = Number(option('--requests') ?? 8000);
  const top = Number(option('--top') ?? 40);
  const against = option('--against');
  const wanted = option('--callers');
  const [target] = argv;
  if (!target) {
    console.error('usage: callgrind-names.ts <callgrind dir or file> [--against <other>] [--callers NAME]');
    process.exit(2);
  }
  const file = mainThreadFile(target);
  if (wanted) {
    callers(file, wanted, requests, top);
    return;
  }
  const mine = selfCosts(file);
  const theirs = against ? selfCosts(mainThreadFile(against)) : new Map<string, number>();
  const total = (costs: Map<string, number>) => [...costs.values()].reduce((a, b) => a + b, 0) / requests;
  console.log(
    against
      ? `instructions per request: ${total(mine).toFixed(0)} against ${total(theirs).toFixed(0)}; by function, own code only:`
      : `instructions per request: ${total(mine).toFixed(0)}; by function, own code only:`,
  );
  const rows = [...new Set([...mine.keys(), ...theirs.keys()])]
    .map((key) => ({ key, mine: (mine.get(key) ?? 0) / requests, theirs: (theirs.get(key) ?? 0) / requests }))
    .sort((a, b) => b.mine - b.theirs - (a.mine - a.theirs));
  for (const { key, mine: m, theirs: t } of rows.slice(0, top)) {
    const figures = against
      ? `${(m - t).toFixed(0).padStart(8)} ${m.toFixed(0).padStart(8)} ${t.toFixed(0).padStart(8)}`
      : m.toFixed(0).padStart(8);
    console.log(`${figures}  ${key.slice(0, 140)}`);
  }
}

main();
