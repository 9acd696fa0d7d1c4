/**
 * Splits a `perf record -g` profile of the server by who owns each sample, and names the embedded
 * store's engine frames. V8 names a WebAssembly frame only `wasm-function[N]`, and PGlite's module
 * has no name section; but it is built for dynamic linking (its extensions are side modules), so it
 * exports ~2,000 of its functions by their C names (`ExecutorRun`, `XLogFlush`, `_bt_search`, ...),
 * and an export's index is the frame's N (docs/performance.md, "Profiling").
 *
 *   perf record -e cpu-clock -F 999 -g -p <server pid> -o /tmp/perf.data -- sleep 15
 *   npx tsx bench/lib/perf-engine.ts /tmp/perf.data [--top 40]          # owners, then engine functions
 *   npx tsx bench/lib/perf-engine.ts /tmp/perf.data --under ExecutorFinish   # what a function runs
 *
 * Shares are of all the process's samples, inclusive: a function's share is the samples with it
 * anywhere on the stack. Frames numbered below 256 are left unnamed: an extension loaded as a side
 * module (pg_trgm's functions are 0–170) numbers its frames from 0 as well, and perf cannot tell the
 * modules apart. Only frames the engine exports are named; the rest stay `wasm#N`.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const SIDE_MODULE_INDICES = 256;

/** Reads an unsigned LEB128 number at `at`: [value, next offset]. */
function leb(bytes: Uint8Array, at: number): [number, number] {
  let value = 0;
  let shift = 0;
  let i = at;
  for (;;) {
    const byte = bytes[i++]!;
    value += (byte & 0x7f) * 2 ** shift;
    shift += 7;
    if (byte < 0x80) return [value, i];
  }
}

/** Function index → exported name, from the module's export section (id 7). */
export function wasmExportNames(wasm: Uint8Array): Map<number, string> {
  const names = new Map<number, string>();
  const decoder = new TextDecoder();
  let at = 8; // magic and version
  while (at < wasm.length) {
    const id = wasm[at++]!;
    const [size, body] = leb(wasm, at);
    if (id === 7) {
      let [count, i] = leb(wasm, body);
      while (count-- > 0) {
        const [length, nameAt] = leb(wasm, i);
        const name = decoder.decode(wasm.subarray(nameAt, nameAt + length));
        const kind = wasm[nameAt + length]!;
        const [index, next] = leb(wasm, nameAt + length + 1);
        // The first name wins: aliases (`__main_argc_argv` and `main`) export one function twice.
        if (kind === 0 && !names.has(index)) names.set(index, name);
        i = next;
      }
    }
    at = body + size;
  }
  return names;
}

type Frame = { name: string; kind: 'wasm' | 'js' | 'kernel' | 'native'; file?: string };

const OWNERS: [RegExp, string][] = [
  [/@electric-sql\/pglite/, "PGlite's JavaScript"],
  [/drizzle-orm/, 'drizzle'],
  [/node_modules\/(fastify|find-my-way|avvio|light-my-request|@fastify)/, 'Fastify'],
  [/node_modules\/(pino|sonic-boom)/, 'pino'],
  [/node_modules\/(ioredis|rate-limiter-flexible)/, 'Redis client and limiter'],
  [/node_modules\/(pg|pg-protocol|pg-pool)\//, 'node-postgres'],
  [/partner-api\.js/, 'our bundle'],
];

function frameOf(line: string, names: Map<number, string>): Frame {
  const symbol = line.trim().replace(/^[0-9a-f]+ /, '');
  const wasm = /wasm-function\[(\d+)\]/.exec(symbol);
  if (wasm) {
    const index = Number(wasm[1]);
    const name = index >= SIDE_MODULE_INDICES ? names.get(index) : undefined;
    return { name: name ?? `wasm#${index}`, kind: 'wasm' };
  }
  if (symbol.includes('[kernel')) return { name: symbol.split(/[+ ]/)[0]!, kind: 'kernel' };
  // `JS:*name file:///…` (an ES module), `JS:^name /…` (CommonJS) or `JS:~name node:…`; a stub has no file.
  if (symbol.startsWith('JS:')) {
    const [name, file] = symbol.slice(3).split(' ');
    return { name: name!.replace(/^[*^~+]/, ''), kind: 'js', file: file?.replace(/:\d+:\d+.*$/, '') };
  }
  return { name: symbol.replace(/\+0x[0-9a-f]+.*$/, '').replace(/ \(.*\)$/, ''), kind: 'native' };
}

/** Who a sample's CPU belongs to: the nearest frame on its stack that says. */
function ownerOf(frames: Frame[]): string {
  const top = frames[0]!;
  if (top.kind === 'native' && /^(fe_|ge_|x25519|sc_|slide|sha512|SHA512|KeccakF)/.test(top.name))
    return 'ed25519 and SHA';
  if (top.kind === 'native' && /(Scavenge|MarkCompact|Sweep|ConcurrentMarking|Heap::)/.test(top.name))
    return 'GC';
  const kernel = top.kind === 'kernel';
  for (const frame of frames) {
    if (frame.kind === 'wasm') return kernel ? 'kernel, for the engine' : "the engine (PGlite's wasm)";
    if (frame.kind !== 'js' || !frame.file) continue;
    const owner =
      OWNERS.find(([pattern]) => pattern.test(frame.file!))?.[1] ??
      (frame.file.startsWith('node:') ? 'Node' : 'other JavaScript');
    return kernel ? `kernel, for ${owner}` : owner;
  }
  return kernel ? 'kernel' : 'native code with no JavaScript caller';
}

function percent(part: number, whole: number): string {
  return `${((100 * part) / whole).toFixed(2).padStart(6)}%`;
}

function main() {
  const args = process.argv.slice(2);
  const file = args[0];
  if (!file || file.startsWith('--')) {
    console.error('usage: npx tsx bench/lib/perf-engine.ts <perf.data> [--top 40] [--under NAME]');
    process.exit(2);
  }
  const option = (flag: string) => {
    const at = args.indexOf(flag);
    return at > 0 ? args[at + 1] : undefined;
  };
  const top = Number(option('--top') ?? 40);
  const under = option('--under');
  const require = createRequire(import.meta.url);
  const wasmFile = path.join(path.dirname(require.resolve('@electric-sql/pglite')), 'pglite.wasm');
  const names = wasmExportNames(readFileSync(wasmFile));
  const script = execFileSync('perf', ['script', '-i', file], { encoding: 'utf8', maxBuffer: 1 << 30 });

  let samples = 0;
  let underSamples = 0;
  const owners = new Map<string, number>();
  const engine = new Map<string, number>();
  const beneath = new Map<string, number>();
  const add = (map: Map<string, number>, key: string) => map.set(key, (map.get(key) ?? 0) + 1);
  for (const block of script.split('\n\n')) {
    const lines = block
      .split('\n')
      .slice(1)
      .filter((line) => line.trim() !== '');
    if (lines.length === 0) continue;
    samples++;
    const frames = lines.map((line) => frameOf(line, names));
    add(owners, ownerOf(frames));
    for (const name of new Set(frames.filter((f) => f.kind === 'wasm').map((f) => f.name))) add(engine, name);
    if (!under) continue;
    const at = frames.findIndex((f) => f.name === under);
    if (at < 0) continue;
    underSamples++;
    for (const name of new Set(frames.slice(0, at).map((f) => f.name))) add(beneath, name);
  }

  const sorted = (map: Map<string, number>) => [...map].sort((a, b) => b[1] - a[1]);
  console.log(`${samples} samples, ${names.size} engine functions named from ${wasmFile}\n`);
  if (under) {
    console.log(`under ${under} (${percent(underSamples, samples)} of all samples), inclusive:`);
    for (const [name, count] of sorted(beneath).slice(0, top))
      console.log(`${percent(count, samples)}  ${name}`);
    return;
  }
  console.log(
    'by owner (a native or kernel frame counts for the nearest JavaScript or engine frame above it):',
  );
  for (const [owner, count] of sorted(owners)) console.log(`${percent(count, samples)}  ${owner}`);
  console.log('\nthe engine by exported function, inclusive:');
  const named = sorted(engine).filter(([name]) => !name.startsWith('wasm#'));
  for (const [name, count] of named.slice(0, top)) console.log(`${percent(count, samples)}  ${name}`);
}

// Run as a command only: importing the module for `wasmExportNames` runs nothing (as bench/lib/profile.ts).
if (import.meta.url === `file://${process.argv[1]}`) main();
