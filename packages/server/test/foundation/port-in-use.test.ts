import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { tempDataDir } from '@partner-api/testkit/app.ts';
import { freePort, type ServerProcess, startServer } from '@partner-api/testkit/process.ts';
import { afterAll, describe, expect, it } from 'vitest';

const CLI = fileURLToPath(new URL('../../../cli/src/partner-api.ts', import.meta.url));

/**
 * `partner-api serve` with stdout and stderr on one file, as a terminal shows them: the order of
 * its lines is the order they were written in. Resolves with the exit code and the output.
 */
async function serveToOneFile(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const file = path.join(tempDataDir(), 'output.log');
  const fd = openSync(file, 'w');
  try {
    const child = spawn(process.execPath, ['--import', 'tsx', CLI, 'serve'], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
      stdio: ['ignore', fd, fd],
    });
    const code = await new Promise<number | null>((resolve, reject) => {
      child.on('error', reject);
      child.on('exit', resolve);
    });
    return { code, output: readFileSync(file, 'utf8') };
  } finally {
    closeSync(fd);
  }
}

/** An HTTP server holding a port on 127.0.0.1, as another program would. */
async function holdPort(): Promise<{ port: number; server: Server }> {
  const server = createServer((_request, response) => response.end());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as { port: number }).port, server };
}

/**
 * `partner-api serve` on a port already in use refuses to start as it does for a bad configuration
 * (exit 2, one line, no stack) and lets go of what it had opened: the DATA_DIR lock, the other port.
 */
describe('a port already in use, or a host that cannot be listened on (real processes, embedded store)', () => {
  const started: ServerProcess[] = [];
  const held: Server[] = [];
  afterAll(async () => {
    await Promise.all(started.map((s) => s.stop()));
    await Promise.all(held.map((s) => new Promise((resolve) => s.close(resolve))));
  });
  const start = (env: Record<string, string>, wait = false) =>
    startServer({ HOST: '127.0.0.1', ...env }, { waitForHealth: wait }).then((s) => {
      started.push(s);
      return s;
    });

  it('PORT taken: exit 2 with one clear line; the DATA_DIR is free for the next start', async () => {
    const { port, server } = await holdPort();
    held.push(server);
    const dataDir = tempDataDir();
    const refused = await start({ DATA_DIR: dataDir, PORT: String(port) });
    expect(await refused.exited, refused.output()).toBe(2);
    expect(refused.output()).toContain(
      `partner-api: cannot listen: 127.0.0.1:${port} is already in use; set PORT to a free port\n`,
    );
    expect(refused.output()).not.toMatch(/^\s+at /m);
    expect(refused.output()).not.toContain('EADDRINUSE');
    // The lock was released on the way out: the same DATA_DIR starts at once on a free port.
    const next = await start({ DATA_DIR: dataDir, PORT: String(await freePort()) }, true);
    expect((await fetch(`${next.baseUrl}/healthz`)).status).toBe(200);
  }, 90_000);

  it.each([
    ['HOST', 'not-a-host.invalid', 'not-a-host.invalid does not resolve to an address (HOST)'],
    ['ADMIN_HOST', '192.0.2.1', '192.0.2.1 is not an address of this machine (ADMIN_HOST)'],
  ])(
    '%s that cannot be listened on: exit 2 with one clear line',
    async (variable, value, line) => {
      const refused = await start({
        DATA_DIR: tempDataDir(),
        PORT: String(await freePort()),
        [variable]: value,
      });
      expect(await refused.exited, refused.output()).toBe(2);
      expect(refused.output()).toContain(`partner-api: cannot listen: ${line}\n`);
      expect(refused.output()).not.toMatch(/^\s+at /m);
    },
    90_000,
  );

  it('ADMIN_PORT taken: exit 2 naming ADMIN_PORT; the public port it had bound is let go', async () => {
    const { port, server } = await holdPort();
    held.push(server);
    const publicPort = await freePort();
    const refused = await start({
      DATA_DIR: tempDataDir(),
      PORT: String(publicPort),
      ADMIN_PORT: String(port),
    });
    expect(await refused.exited, refused.output()).toBe(2);
    expect(refused.output()).toContain(
      `partner-api: cannot listen: 127.0.0.1:${port} is already in use; set ADMIN_PORT to a free port\n`,
    );
    expect(refused.output()).not.toMatch(/^\s+at /m);
    const again = createServer();
    await new Promise<void>((resolve, reject) => {
      again.once('error', reject);
      again.listen(publicPort, '127.0.0.1', resolve);
    });
    held.push(again);
  }, 90_000);

  it("ADMIN_PORT taken: the refusal is the last line, below the public listener's log lines", async () => {
    const { port, server } = await holdPort();
    held.push(server);
    const dataDir = tempDataDir();
    const env = {
      DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      PORT: String(await freePort()),
      ADMIN_PORT: String(port),
      LOG_LEVEL: 'info',
      LOG_FORMAT: 'json',
    };
    const refusal = `partner-api: cannot listen: 127.0.0.1:${port} is already in use; set ADMIN_PORT to a free port`;
    // Twice: the first start seeds the sandbox on its way, the second finds it seeded.
    for (const start of ['first', 'seeded']) {
      const { code, output } = await serveToOneFile(env);
      expect(code, output).toBe(2);
      const lines = output.trimEnd().split('\n');
      expect(lines.at(-1), `${start} start:\n${output}`).toBe(refusal);
      expect(output, `${start} start`).toContain('Server listening at http://127.0.0.1:');
      expect(output, `${start} start`).not.toContain('partner-api serving');
    }
  }, 90_000);
});
