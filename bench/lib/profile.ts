/**
 * Reads a V8 .cpuprofile (node --cpu-prof) and sums self time by function and by package, so the
 * bench can say where a server's CPU went. `npx tsx bench/lib/profile.ts <file.cpuprofile>` prints it.
 */
import { readFileSync } from 'node:fs';

type ProfileNode = {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
};
type CpuProfile = {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
};

export type ProfileSummary = {
  totalMs: number;
  idleMs: number;
  functions: { name: string; selfMs: number; share: number }[];
  packages: { name: string; selfMs: number; share: number }[];
};

/** `node_modules/<pkg>`, our own `packages/<name>/src`, `node:` internals or a special V8 bucket. */
function packageOf(url: string, name: string): string {
  if (!url) return name.startsWith('(') ? name : '(native)';
  const modules = url.lastIndexOf('node_modules/');
  if (modules >= 0) {
    const rest = url.slice(modules + 'node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  const own = /packages\/([^/]+)\/src\/(.*)$/.exec(url);
  if (own) return `@partner-api/${own[1]} ${own[2]!.split('/').slice(0, -1).join('/') || '.'}`;
  if (url.startsWith('node:')) return url;
  return url.replace(/^file:\/\//, '');
}

export function summariseProfile(file: string, top = 25): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i]!;
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  const functions = new Map<string, number>();
  const packages = new Map<string, number>();
  let total = 0;
  let idle = 0;
  for (const [id, us] of selfUs) {
    const node = byId.get(id)!;
    const { functionName, url, lineNumber } = node.callFrame;
    total += us;
    if (functionName === '(idle)') {
      idle += us;
      continue;
    }
    const where = url ? `${url.replace(/^.*\/(node_modules|packages)\//, '$1/')}:${lineNumber + 1}` : '';
    const key = `${functionName || '(anonymous)'} ${where}`.trim();
    functions.set(key, (functions.get(key) ?? 0) + us);
    const pkg = packageOf(url, functionName);
    packages.set(pkg, (packages.get(pkg) ?? 0) + us);
  }
  const busy = total - idle;
  const rank = (map: Map<string, number>) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, us]) => ({ name, selfMs: us / 1000, share: us / busy }));
  return { totalMs: total / 1000, idleMs: idle / 1000, functions: rank(functions), packages: rank(packages) };
}

export function formatProfile(summary: ProfileSummary): string {
  const lines = [
    `profile: ${(summary.totalMs / 1000).toFixed(1)} s sampled, ${((summary.totalMs - summary.idleMs) / 1000).toFixed(1)} s busy`,
    'self time by package:',
    ...summary.packages.map((p) => `  ${(p.share * 100).toFixed(1).padStart(5)}%  ${p.name}`),
    'self time by function:',
    ...summary.functions.map((f) => `  ${(f.share * 100).toFixed(1).padStart(5)}%  ${f.name}`),
  ];
  return lines.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const file = process.argv[2];
  if (!file) {
    console.error('usage: npx tsx bench/lib/profile.ts <file.cpuprofile> [top]');
    process.exit(2);
  }
  console.log(formatProfile(summariseProfile(file, Number(process.argv[3] ?? 30))));
}
