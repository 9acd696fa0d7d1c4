import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { tempDataDir } from '@partner-api/testkit/app.ts';
import { freePort, startServer } from '@partner-api/testkit/process.ts';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../ussd/support.ts';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const CLI = path.join(ROOT, 'packages/cli/src/partner-api.ts');
/** util-linux `script` gives the server a pseudo-terminal, as `npm start` in a terminal does. */
const SCRIPT = '/usr/bin/script';
if (!existsSync(SCRIPT)) console.warn(`${SCRIPT} is absent (util-linux): the terminal test is skipped`);

/** pino-pretty's colour codes (ESC [ ... m). */
const ANSI_COLOUR = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g');

const isJson = (line: string) => {
  try {
    return typeof JSON.parse(line) === 'object';
  } catch {
    return false;
  }
};

describe('a person at a terminal', () => {
  let child: ChildProcess | undefined;
  afterEach(() => {
    if (child?.pid && child.exitCode === null) process.kill(-child.pid, 'SIGTERM');
    child = undefined;
  });

  it.skipIf(!existsSync(SCRIPT))(
    'on a TTY: readable log lines, then a banner with the URLs and the credentials file',
    async () => {
      const dataDir = tempDataDir();
      const port = await freePort();
      const adminPort = await freePort();
      const command = `${JSON.stringify(process.execPath)} --import tsx ${JSON.stringify(CLI)} serve`;
      child = spawn(SCRIPT, ['-qefc', command, '/dev/null'], {
        cwd: ROOT,
        detached: true,
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          TERM: 'dumb',
          DATA_DIR: dataDir,
          PORT: String(port),
          ADMIN_PORT: String(adminPort),
          PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout?.on('data', (chunk) => (output += chunk));
      const base = `http://127.0.0.1:${port}`;
      await waitFor(async () => (output.includes('Admin API') ? true : undefined), 60_000, 'the banner');
      const plain = output.replace(ANSI_COLOUR, '').replace(/\r/g, '');
      expect(plain).toContain('partner-api is up (sandbox, pglite store)');
      for (const line of [
        `API            ${base}/v1`,
        `Reference      ${base}/docs`,
        `Signing guide  ${base}/docs/signing`,
        `USSD handset   ${base}/sandbox/ussd`,
        `Credentials    ${path.resolve(dataDir, 'sandbox-credentials.json')}`,
        `Admin API      http://127.0.0.1:${adminPort}`,
      ])
        expect(plain).toContain(line);
      const logLines = plain.split('\n').filter((l) => l.includes('partner-api serving'));
      expect(logLines).toHaveLength(1);
      expect(isJson(logLines[0]!)).toBe(false);
      expect(logLines[0]).toMatch(/INFO/);
    },
    90_000,
  );

  it('not a TTY: JSON lines and no banner; LOG_FORMAT=pretty gives readable lines anyway', async () => {
    const json = await startServer({ DATA_DIR: tempDataDir(), LOG_LEVEL: 'info' });
    await json.stop();
    const jsonLines = json.output().split('\n').filter(Boolean);
    expect(jsonLines.some((l) => l.includes('partner-api serving'))).toBe(true);
    expect(jsonLines.filter((l) => !isJson(l))).toEqual([]);
    expect(json.output()).not.toContain('partner-api is up');

    const pretty = await startServer({ DATA_DIR: tempDataDir(), LOG_LEVEL: 'info', LOG_FORMAT: 'pretty' });
    await pretty.stop();
    const serving = pretty
      .output()
      .split('\n')
      .filter((l) => l.includes('partner-api serving'));
    expect(serving).toHaveLength(1);
    expect(isJson(serving[0]!)).toBe(false);
  }, 90_000);
});
