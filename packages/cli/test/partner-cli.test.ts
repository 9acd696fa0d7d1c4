import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createId } from '@partner-api/contract';
import { type Sandbox, startSandbox } from '@partner-api/testkit/process.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const PARTNER = path.join(ROOT, 'packages/cli/src/partner.ts');

type Run = { code: number | null; stdout: string; stderr: string };

/**
 * One `partner` process from the sources: `node --conditions=@partner-api/source --import tsx
 * packages/cli/src/partner.ts ...` (the condition picks the SDK's sources over its dist). The packed
 * and installed `partner` is tested by packages/sdk/test/pack.test.ts.
 */
function partner(args: string[], env: Record<string, string>): ChildProcessWithoutNullStreams {
  return spawn(process.execPath, ['--conditions=@partner-api/source', '--import', 'tsx', PARTNER, ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: 'pipe',
  });
}

function run(args: string[], env: Record<string, string>): Promise<Run> {
  const child = partner(args, env);
  child.stdin.end();
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

/** A handset box followed by its state line, as `partner ussd` prints each screen. */
const SCREEN = /┌─+┐\n((?:│.*│\n)+)└─+┘\n {2}([A-Z_]+)( · session ended)?\n/;

type Screen = { text: string; state: string; ended: boolean };

/** Drives `partner ussd` through its stdin, one line per screen, reading each screen as it is printed. */
function handset(customerId: string, env: Record<string, string>) {
  const child = partner(['ussd', customerId], env);
  let stdout = '';
  let stderr = '';
  let read = 0;
  let wake: (() => void) | undefined;
  child.stdout.on('data', (chunk) => {
    stdout += chunk;
    wake?.();
  });
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
    wake?.();
  });
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  return {
    get stdout() {
      return stdout;
    },
    get stderr() {
      return stderr;
    },
    exited,
    async screen(): Promise<Screen> {
      const deadline = Date.now() + 15_000;
      for (;;) {
        const match = SCREEN.exec(stdout.slice(read));
        if (match) {
          read += match.index + match[0].length;
          const text = match[1]!
            .split('\n')
            .filter(Boolean)
            .map((line) => line.slice(2, -2).trimEnd())
            .join('\n');
          return { text, state: match[2]!, ended: match[3] !== undefined };
        }
        if (Date.now() > deadline || child.exitCode !== null) {
          throw new Error(`no screen; stdout:\n${stdout}\nstderr:\n${stderr}`);
        }
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, 200);
        });
      }
    },
    send(line: string) {
      child.stdin.write(`${line}\n`);
    },
    async choose(choice: string): Promise<Screen> {
      this.send(choice);
      return this.screen();
    },
    hangUp() {
      child.stdin.end();
    },
  };
}

describe('the partner CLI against a real sandbox server', () => {
  let sandbox: Sandbox;
  let env: Record<string, string>;

  beforeAll(async () => {
    sandbox = await startSandbox({ INVESTMENTS_PREVIEW: 'true' });
    env = { PARTNER_PROFILE: path.join(sandbox.dataDir, 'partner-profile.json') };
    const login = await run(['login', '--sandbox-file', sandbox.credentialsFile], env);
    expect(login.stderr).toBe('');
    expect(login.code).toBe(0);
    expect(login.stdout).toContain('Logged in to');
    expect(login.stdout).toContain('Demo Investments');
  });
  afterAll(async () => {
    await sandbox?.server.stop();
  });

  it('login saved a 0600 profile with the credential and a reusable token', () => {
    const file = env.PARTNER_PROFILE!;
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const profile = JSON.parse(readFileSync(file, 'utf8'));
    expect(profile).toMatchObject({
      baseUrl: sandbox.credentials.baseUrl,
      clientId: sandbox.credentials.clientId,
      keyId: sandbox.credentials.keyId,
      organization: { name: 'Demo Investments' },
    });
    expect(profile.token.token).toEqual(expect.any(String));
  });

  it('ussd: a whole buy, screen by screen, then its payment status', async () => {
    const phone = handset(sandbox.credentials.customerIds[0]!, env);

    const home = await phone.screen();
    expect(home.state).toBe('HOME');
    expect(home.text).toBe('Welcome to Demo Investments\n\n1. Stocks\n2. My Portfolio');

    const stocks = await phone.choose('1');
    expect(stocks.state).toBe('STOCKS');
    expect(stocks.text).toMatch(/^Select a stock \(page 1\/\d+\)\n\n1\. /);
    expect(stocks.text).toContain('\n7. Next\n8. Search\n0. Home');

    const next = await phone.choose('7');
    expect(next.state).toBe('STOCKS');
    expect(next.text).toMatch(/^Select a stock \(page 2\/\d+\)/);
    const symbol = /\n1\. (\S+) /.exec(next.text)?.[1];
    expect(symbol).toBeDefined();

    const stock = await phone.choose('1');
    expect(stock.state).toBe('SELECT_STOCK');
    expect(stock.text).toMatch(new RegExp(`^${symbol} .+\\nPrice: KES [\\d,.]+\\n\\n1\\. Buy\\n`));

    const amount = await phone.choose('1');
    expect(amount.state).toBe('BUY_AMOUNT');
    expect(amount.text).toBe(`Buy ${symbol}\nEnter amount (KES), min 100\n\n0. Home`);

    const confirm = await phone.choose('1000');
    expect(confirm.state).toBe('BUY_CONFIRM');
    expect(confirm.text).toMatch(new RegExp(`^Buy ${symbol} for KES 1,000\\.00\\n`));
    expect(confirm.text).toContain('1. Confirm\n2. Cancel');

    const submitted = await phone.choose('1');
    expect(submitted).toMatchObject({ state: 'BUY_SUBMITTED', ended: true });
    expect(submitted.text).toMatch(
      /^Request received\. Approve the payment prompt on your phone\. Ref c[a-z0-9]{24}$/,
    );
    expect(await phone.exited).toBe(0);
    // The transcript shows what was typed between the screens.
    expect(phone.stdout.match(/^> .+$/gm)).toEqual(['> 1', '> 7', '> 1', '> 1', '> 1000', '> 1']);

    const orderId = /Ref (c[a-z0-9]{24})/.exec(submitted.text)![1]!;
    // The command's help names its argument the way the screen does.
    const help = await run(['payments', 'status', '--help'], env);
    expect(help.stdout).toMatch(/\n {2}orderId +the order id: the Ref on the USSD confirmation\n/);
    const status = await run(['payments', 'status', orderId, '--json'], env);
    expect(status.code).toBe(0);
    const body = JSON.parse(status.stdout);
    expect(body.message).toBe('Transaction status retrieved successfully');
    expect(body.data).toMatchObject({
      orderId,
      payment: { type: 'INCOMING', amount: '1000.00', currency: 'KES' },
    });

    const waited = await run(['payments', 'status', orderId, '--wait', '--json'], env);
    expect(waited.code).toBe(0);
    expect(JSON.parse(waited.stdout).data.payment.status).toBe('SUCCESS');

    const plain = await run(['payments', 'status', orderId, '--wait'], env);
    expect(plain.code).toBe(0);
    expect(plain.stdout).toMatch(/^payment\s+SUCCESS\s+INCOMING\s+KES 1000\.00/m);
  });

  it('ussd: a refused choice keeps the screen; closing the input hangs up', async () => {
    const phone = handset(sandbox.credentials.customerIds[1]!, env);
    expect((await phone.screen()).state).toBe('HOME');
    phone.send('Stocks!');
    expect((await phone.choose('1')).state).toBe('STOCKS');
    phone.hangUp();
    expect(await phone.exited).toBe(0);
    expect(phone.stderr).toContain('Choice must be alphanumeric');
    expect(phone.stdout).toMatch(/Hung up\.\n$/);
  });

  it('customers create --json prints the API answer; list and get find the customer', async () => {
    const created = await run(
      [
        'customers',
        'create',
        '--first-name',
        'Wanjiku',
        '--last-name',
        'Cli',
        '--msisdn',
        '254799000111',
        '--json',
      ],
      env,
    );
    expect(created.code).toBe(0);
    const body = JSON.parse(created.stdout);
    expect(body).toMatchObject({
      message: 'Customer created successfully',
      data: { firstName: 'Wanjiku', lastName: 'Cli', msisdn: '254799000111', isActive: true },
    });

    const listed = JSON.parse(
      (await run(['customers', 'list', '--msisdn', '254799000111', '--json'], env)).stdout,
    );
    expect(listed.data.map((c: { id: string }) => c.id)).toEqual([body.data.id]);

    const updated = await run(
      ['customers', 'update', body.data.id, '--msisdn', 'null', '--active', 'false'],
      env,
    );
    expect(updated.code).toBe(0);
    expect(updated.stdout).toContain('Customer updated successfully');
    expect(updated.stdout).toMatch(/^msisdn\s+-$/m);
    expect(updated.stdout).toMatch(/^active\s+false$/m);
  });

  it('instruments, orders create|list|get|cancel, portfolio, transactions and reports (investments preview)', async () => {
    const ok = async (args: string[]) => {
      const result = await run(args, env);
      expect(result.stderr, args.join(' ')).toBe('');
      expect(result.code).toBe(0);
      return result.stdout;
    };
    const catalogue = JSON.parse(await ok(['instruments', '--status', 'ACTIVE', '--limit', '100', '--json']));
    const instrument = catalogue.data.find(
      (i: { latestPrice: { value: string } }) => Number(i.latestPrice.value) <= 500,
    );
    const listed = await ok(['instruments', '--search', instrument.symbol]);
    expect(listed).toContain(`${instrument.id}  ${instrument.symbol}`);
    expect(listed).toMatch(/^page 1\/1, \d+ instruments?$/m);

    const customer = JSON.parse(
      await ok([
        'customers',
        'create',
        '--first-name',
        'Otieno',
        '--last-name',
        'Orders',
        '--msisdn',
        '254799000222',
        '--json',
      ]),
    ).data;
    // By symbol: the CLI finds the instrument's id.
    const created = await ok([
      'orders',
      'create',
      '--customer',
      customer.id,
      '--instrument',
      instrument.symbol,
      '--buy',
      '1000',
    ]);
    expect(created).toMatch(/^Request created successfully\nid\s+(c[a-z0-9]{24})$/m);
    expect(created).toMatch(/^side\s+BUY$/m);
    const orderId = /^id\s+(\S+)$/m.exec(created)![1]!;
    await ok(['payments', 'status', orderId, '--wait', '--timeout', '20']);
    let order = '';
    for (let i = 0; i < 50 && !/^status\s+EXECUTED$/m.test(order); i++) {
      order = await ok(['orders', 'get', orderId]);
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(order).toMatch(/^execution\s+FILLED \S+ @ /m);
    expect(order).toMatch(/^payment\s+INCOMING SUCCESS KES 1000\.00/m);

    const list = await ok(['orders', 'list', '--customer', customer.id]);
    expect(list).toMatch(new RegExp(`^${orderId}  BUY   EXECUTED `, 'm'));
    expect(list).toMatch(/^page 1\/1, 1 order$/m);

    const portfolio = await ok(['portfolio', customer.id]);
    expect(portfolio).toMatch(
      new RegExp(`^  ${instrument.symbol} +\\S+ units  @ +${instrument.latestPrice.value}`, 'm'),
    );
    const json = JSON.parse(await ok(['portfolio', customer.id, '--json']));
    expect(json.data.positions).toHaveLength(1);

    const transactions = await ok(['transactions', '--customer', customer.id]);
    expect(
      transactions
        .split('\n')
        .filter((l) => l.includes(orderId))
        .map((l) => l.split(/\s+/)[2]),
    ).toEqual(['BUY', 'COLLECTION']);

    // The execution's trade confirmation: listed, and saved as a PDF.
    const reports = await ok(['reports', 'list', '--customer', customer.id]);
    const reportId = new RegExp(`^(\\S+)  TRADE_CONFIRMATION  ${customer.id}  ${orderId} `, 'm').exec(
      reports,
    )?.[1];
    expect(reportId, reports).toMatch(/^c[a-z0-9]{24}$/);
    const file = path.join(sandbox.dataDir, 'confirmation.pdf');
    expect(await ok(['reports', 'get', reportId!, '--pdf', file])).toMatch(/: \d+ bytes\n$/);
    expect(readFileSync(file).subarray(0, 5).toString()).toBe('%PDF-');

    const cancel = await run(['orders', 'cancel', orderId], env);
    expect(cancel.code).toBe(1);
    expect(cancel.stderr).toContain('409 Conflict: Request is EXECUTED and can no longer be cancelled');

    // A customer with no account: portfolio opens one and prints an empty portfolio.
    const fresh = JSON.parse(
      await ok(['customers', 'create', '--first-name', 'New', '--last-name', 'Investor', '--json']),
    ).data;
    expect(await ok(['portfolio', fresh.id])).toMatch(/^value KES 0\.00 .*\n {2}no positions\n$/m);
    const both = await run(['orders', 'create', '--customer', fresh.id, '--instrument', instrument.id], env);
    expect(both.code).toBe(1);
    expect(both.stderr).toBe('partner: give either --buy <amount> or --sell <units>\n');
  }, 120_000); // about twenty CLI processes, each a node start: slow on the embedded store

  it('errors: the API body with --json, a readable line and the request id on stderr, exit 1', async () => {
    const missing = await run(['customers', 'get', createId(), '--json'], env);
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.stdout)).toEqual({ error: 'Not found', message: 'Customer not found' });
    expect(missing.stderr).toMatch(/^partner: 404 Not found: Customer not found\n {2}request id: \S+\n$/);

    const invalid = await run(['customers', 'create', '--first-name', ' ', '--last-name', 'X'], env);
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toContain('400 Validation failed\n  firstName: firstName must not be empty');
  });

  it('login also takes PARTNER_* variables (the key as a file) and reports every missing field', async () => {
    const keyFile = path.join(sandbox.dataDir, 'partner-key.pem');
    writeFileSync(keyFile, sandbox.credentials.privateKey, { mode: 0o600 });
    const profile = path.join(sandbox.dataDir, 'env-profile.json');
    const fromEnv = await run(['login', '--json'], {
      PARTNER_PROFILE: profile,
      PARTNER_BASE_URL: sandbox.credentials.baseUrl,
      PARTNER_CLIENT_ID: sandbox.credentials.clientId,
      PARTNER_CLIENT_SECRET: sandbox.credentials.clientSecret,
      PARTNER_PRIVATE_KEY: keyFile,
      PARTNER_KEY_ID: sandbox.credentials.keyId,
    });
    expect(fromEnv.code).toBe(0);
    expect(JSON.parse(fromEnv.stdout).data.name).toBe('Demo Investments');
    expect(JSON.parse(readFileSync(profile, 'utf8')).privateKey).toBe(sandbox.credentials.privateKey);

    const missing = await run(['login', '--client-id', sandbox.credentials.clientId], {
      PARTNER_PROFILE: profile,
      PARTNER_SANDBOX_FILE: path.join(sandbox.dataDir, 'absent.json'),
    });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('missing --base-url, --client-secret, --private-key, --key-id');
  });

  it('login refuses a key it cannot read or use, and a base URL that is not one, in one line each', async () => {
    const profile = path.join(sandbox.dataDir, 'refused-profile.json');
    const notAKey = path.join(sandbox.dataDir, 'not-a-key.pem');
    writeFileSync(notAKey, 'hello');
    const rsa = path.join(sandbox.dataDir, 'rsa.pem');
    writeFileSync(
      rsa,
      generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'pem', type: 'pkcs8' }),
    );
    const missing = path.join(sandbox.dataDir, 'absent.pem');
    const { baseUrl, clientId, clientSecret, keyId } = sandbox.credentials;
    const login = (key: string, base = baseUrl) =>
      run(['login'], {
        PARTNER_PROFILE: profile,
        PARTNER_BASE_URL: base,
        PARTNER_CLIENT_ID: clientId,
        PARTNER_CLIENT_SECRET: clientSecret,
        PARTNER_PRIVATE_KEY: key,
        PARTNER_KEY_ID: keyId,
      });
    const notEd25519 = (what: string) =>
      `partner: --private-key: ${what} is not an Ed25519 private key in PEM (PKCS#8, as \`openssl genpkey -algorithm ed25519\` writes)\n`;
    const cases: [Promise<Run>, string][] = [
      [login(missing), `partner: --private-key: cannot read ${missing} (ENOENT)\n`],
      [login(notAKey), notEd25519(notAKey)],
      [login(rsa), notEd25519(rsa)],
      [
        login('-----BEGIN PRIVATE KEY-----\nZ2FyYmFnZQ==\n-----END PRIVATE KEY-----\n'),
        notEd25519('the key given'),
      ],
      [
        login(sandbox.credentials.privateKey, 'localhost:8080'),
        'partner: --base-url: localhost:8080 is not an http:// or https:// URL\n',
      ],
    ];
    for (const [result, line] of cases) {
      const { code, stdout, stderr } = await result;
      expect([code, stdout, stderr]).toEqual([1, '', line]);
    }
    expect(existsSync(profile)).toBe(false);
  });

  it('without a profile, commands say how to log in', async () => {
    const result = await run(['customers', 'list'], {
      PARTNER_PROFILE: path.join(sandbox.dataDir, 'none.json'),
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/not logged in: .*none\.json does not exist; run `partner login` first/);
  });
});
