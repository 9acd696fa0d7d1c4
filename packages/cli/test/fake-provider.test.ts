import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const PARTNER_API = path.join(ROOT, 'packages/cli/src/partner-api.ts');

/** `partner-api fake-provider <args>` as a process: its output so far, a wait on it, and SIGTERM. */
function runFake(args: string[]) {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', PARTNER_API, 'fake-provider', ...args, '--port', '0'],
    {
      cwd: ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME },
      stdio: 'pipe',
    },
  );
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  return {
    output: () => output,
    async until(ready: (output: string) => boolean) {
      const deadline = Date.now() + 20_000;
      while (!ready(output) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    },
    stop() {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

describe('partner-api fake-provider mpesa', () => {
  it('serves a fake Daraja, prints the server settings for it, and stops on SIGTERM', async () => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', PARTNER_API, 'fake-provider', 'mpesa', '--port', '0'],
      { cwd: ROOT, env: { PATH: process.env.PATH, HOME: process.env.HOME }, stdio: 'pipe' },
    );
    let stdout = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stdout += chunk));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    try {
      const deadline = Date.now() + 20_000;
      while (!/^MPESA_SECURITY_CREDENTIAL=/m.test(stdout) && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 50));
      const url = /^MPESA_BASE_URL=(\S+)$/m.exec(stdout)?.[1];
      expect(url, stdout).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(stdout).toMatch(/^MPESA_SHORTCODE=174379$/m);
      const key = /^MPESA_CONSUMER_KEY=(\S+)$/m.exec(stdout)?.[1];
      const secret = /^MPESA_CONSUMER_SECRET=(\S+)$/m.exec(stdout)?.[1];
      const token = await fetch(`${url}/oauth/v1/generate?grant_type=client_credentials`, {
        headers: { authorization: `Basic ${Buffer.from(`${key}:${secret}`).toString('base64')}` },
      });
      expect(token.status).toBe(200);
      expect((await token.json()).access_token).toBeTruthy();
      const state = await fetch(`${url}/__fake/state`);
      expect(state.status).toBe(200);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited, stdout).toBe(0);
  });
});

describe.each([
  [
    'mtn',
    'MTN_BASE_URL',
    /^MTN_TARGET_ENVIRONMENT=mtnuganda$/m,
    ['--target-environment', 'mtnuganda', '--currency', 'UGX'],
  ],
  ['airtel', 'AIRTEL_BASE_URL', /^AIRTEL_COUNTRY=KE$/m, []],
  ['sms', 'AT_SMS_BASE_URL', /^AT_SMS_USERNAME=sandbox$/m, []],
] as const)('partner-api fake-provider %s', (provider, urlVariable, expected, extra) => {
  it('serves the fake, prints the server settings for it, and stops on SIGTERM', async () => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', PARTNER_API, 'fake-provider', provider, '--port', '0', ...extra],
      { cwd: ROOT, env: { PATH: process.env.PATH, HOME: process.env.HOME }, stdio: 'pipe' },
    );
    let stdout = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stdout += chunk));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    const line = new RegExp(`^${urlVariable}=(\\S+)$`, 'm');
    try {
      const deadline = Date.now() + 20_000;
      while (!(line.test(stdout) && expected.test(stdout)) && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 50));
      const url = line.exec(stdout)?.[1];
      expect(url, stdout).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(stdout).toMatch(expected);
      const state = await fetch(`${url}/__fake/state`);
      expect(state.status).toBe(200);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited, stdout).toBe(0);
  });
});

describe('partner-api fake-provider prices', () => {
  it('serves a fake price feed, prints PRICE_FEED_URL, answers prices, and stops on SIGTERM', async () => {
    const fake = runFake(['prices']);
    let code: number | null;
    try {
      await fake.until((output) => /^PRICE_FEED_FORMAT=/m.test(output));
      const url = /^PRICE_FEED_URL=(\S+)$/m.exec(fake.output())?.[1];
      expect(url, fake.output()).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/prices\.json$/);
      const answer = await fetch(url!);
      expect(answer.status).toBe(200);
      const body = (await answer.json()) as { prices: { symbol: string; price: string; asOf: string }[] };
      expect(body.prices.map((p) => p.symbol)).toEqual(['SCOM', 'EQTY', 'KCB', 'EABL']);
      expect(body.prices[0]).toEqual({
        symbol: 'SCOM',
        price: expect.stringMatching(/^\d+\.\d{4}$/),
        asOf: expect.any(String),
      });
    } finally {
      code = await fake.stop();
    }
    expect(code, fake.output()).toBe(0);
  });
});
