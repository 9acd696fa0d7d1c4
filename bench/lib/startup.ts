/**
 * `npm start` on the embedded store, the way the README tells a newcomer to run it: the time from the
 * command to the first 200 on /healthz, on a fresh DATA_DIR and again on the same one.
 */
import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync } from 'node:fs';
import path from 'node:path';
import { freePort, ROOT } from './processes.ts';

export type StartTiming = { firstMs: number; secondMs: number };

async function startOnce(dataDir: string, logFile: string): Promise<number> {
  const port = await freePort();
  const adminPort = await freePort();
  const fd = openSync(logFile, 'a');
  const began = performance.now();
  // npm → sh → node: its own process group, so that the whole tree gets the signal.
  const child = spawn('npm', ['start', '--silent'], {
    cwd: ROOT,
    detached: true,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      DATA_DIR: dataDir,
      PORT: String(port),
      ADMIN_PORT: String(adminPort),
      HOST: '127.0.0.1',
    },
    stdio: ['ignore', fd, fd],
  });
  closeSync(fd);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    const deadline = Date.now() + 120_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`npm start exited with ${child.exitCode}; see ${logFile}`);
      try {
        if ((await fetch(`http://127.0.0.1:${port}/healthz`)).status === 200) break;
      } catch {}
      if (Date.now() > deadline) throw new Error(`npm start: no /healthz 200 within 120 s; see ${logFile}`);
      await new Promise((r) => setTimeout(r, 25));
    }
    return performance.now() - began;
  } finally {
    process.kill(-child.pid!, 'SIGTERM');
    const kill = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 15_000);
    await exited;
    clearTimeout(kill);
    // npm can exit before its server does: wait until the server has let go of the DATA_DIR lock.
    for (let i = 0; i < 600 && existsSync(path.join(dataDir, 'server.lock')); i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

export async function measureStart(dataDir: string, logFile: string): Promise<StartTiming> {
  const firstMs = await startOnce(dataDir, logFile);
  const secondMs = await startOnce(dataDir, logFile);
  return { firstMs, secondMs };
}
