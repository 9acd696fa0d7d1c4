/**
 * Child processes the bench measures: `partner-api serve` (optionally under --cpu-prof), the bare
 * Fastify ceiling, and samplers of a process's resident memory and CPU time from /proc.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '@partner-api/testkit/process.ts';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** The production build (`npm run build`, which the bench runs first): node alone, no TypeScript loader. */
const CLI_IN_CHECKOUT = 'packages/cli/dist/partner-api.js';
const CLI = path.join(ROOT, CLI_IN_CHECKOUT);

/** The test support's: a port free now and never handed out twice in this process. */
export { freePort };

export type Child = {
  pid: number;
  baseUrl: string;
  adminUrl: string;
  child: ChildProcess;
  /** Milliseconds from spawn to the first 200 on the health URL. */
  readyMs: number;
  stop(): Promise<number | null>;
};

async function waitForHealth(url: string, child: ChildProcess, logFile: string, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) break;
    try {
      const response = await fetch(url);
      if (response.status === 200) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill('SIGKILL');
  let tail = '';
  try {
    tail = readFileSync(logFile, 'utf8').slice(-3000);
  } catch {}
  throw new Error(`${url} never answered 200 (exit code ${child.exitCode}); log tail:\n${tail}`);
}

function spawnLogged(
  args: string[],
  env: Record<string, string>,
  logFile: string,
  cwd: string = ROOT,
): ChildProcess {
  // stdout and stderr are the log file itself: a pipe read by this busy process would fill up and
  // stall the server's synchronous log writes, a cost no production log collector imposes.
  const fd = openSync(logFile, 'a');
  const child = spawn(process.execPath, args, {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', fd, fd],
  });
  closeSync(fd);
  return child;
}

function stopper(child: ChildProcess) {
  const exited = new Promise<number | null>((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode);
    else child.once('exit', (code) => resolve(code));
  });
  return async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    const code = await exited;
    clearTimeout(timer);
    return code;
  };
}

/**
 * `partner-api serve` as an operator runs it (one node process, the built bundle), logs to `logFile`.
 * `checkout`: another checkout of the repository whose bundle to serve (built there beforehand), to
 * compare two trees with the same bench (docs/performance.md, "Securities side").
 */
export async function startPartnerApi(options: {
  env: Record<string, string>;
  logFile: string;
  /** Directory for a V8 CPU profile written at exit (node --cpu-prof). */
  cpuProfDir?: string;
  checkout?: string;
}): Promise<Child> {
  const root = options.checkout ?? ROOT;
  const port = await freePort();
  const adminPort = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const args = [
    ...(options.cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${options.cpuProfDir}`] : []),
    options.checkout ? path.join(root, CLI_IN_CHECKOUT) : CLI,
    'serve',
  ];
  const began = performance.now();
  const child = spawnLogged(
    args,
    {
      PUBLIC_BASE_URL: baseUrl,
      HOST: '127.0.0.1',
      ...options.env,
      PORT: String(port),
      ADMIN_PORT: String(adminPort),
    },
    options.logFile,
    root,
  );
  await waitForHealth(`${baseUrl}/healthz`, child, options.logFile, 120_000);
  return {
    pid: child.pid!,
    baseUrl,
    adminUrl: `http://127.0.0.1:${adminPort}`,
    child,
    readyMs: performance.now() - began,
    stop: stopper(child),
  };
}

/** The ceiling of scenario 2: a bare Fastify 5 app with one route, in its own process. */
export async function startMinimalFastify(logFile: string): Promise<Child> {
  const port = await freePort();
  const began = performance.now();
  const child = spawnLogged(
    ['--import', 'tsx', path.join(ROOT, 'bench/minimal-fastify.ts')],
    { PORT: String(port) },
    logFile,
  );
  const baseUrl = `http://127.0.0.1:${port}`;
  await waitForHealth(`${baseUrl}/key`, child, logFile, 30_000);
  return {
    pid: child.pid!,
    baseUrl,
    adminUrl: '',
    child,
    readyMs: performance.now() - began,
    stop: stopper(child),
  };
}

/** Resident set size of a process in MB, from /proc/<pid>/status (VmRSS). */
export function rssMb(pid: number): number | undefined {
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

const CLOCK_TICKS = 100; // USER_HZ on Linux

/** User + system CPU seconds a process has used, from /proc/<pid>/stat. */
export function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return Number.NaN;
  }
}

/** Busy and total jiffies of the whole machine (all cores), from /proc/stat. */
export function machineJiffies(): { busy: number; total: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0]!;
  const values = line.trim().split(/\s+/).slice(1).map(Number);
  const total = values.reduce((a, b) => a + b, 0);
  const idle = (values[3] ?? 0) + (values[4] ?? 0);
  return { busy: total - idle, total };
}

/** Samples a process's RSS every `everyMs` until stopped: the peak and the samples. */
export function sampleRss(pid: number, everyMs = 200) {
  const samples: number[] = [];
  // The peak of each phase the caller names with `phase`: which scenario sets the overall peak.
  const phases: { name: string; peakMb: number }[] = [];
  const take = () => {
    const value = rssMb(pid);
    if (value === undefined) return;
    samples.push(value);
    const current = phases.at(-1);
    if (current) current.peakMb = Math.max(current.peakMb, value);
  };
  take();
  const timer = setInterval(take, everyMs);
  timer.unref();
  return {
    phase(name: string) {
      phases.push({ name, peakMb: Number.NEGATIVE_INFINITY });
      take();
    },
    stop() {
      clearInterval(timer);
      take();
      return {
        peakMb: Math.max(...samples),
        lastMb: samples.at(-1) ?? Number.NaN,
        samples: samples.length,
        phases,
      };
    },
  };
}
