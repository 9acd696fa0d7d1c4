import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Sandbox, startSandbox } from '@partner-api/testkit/process.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * What a partner does with our packages, end to end: `npm pack` (whose prepack builds the SDK and the
 * partner CLI from the sources, so no prior `npm run build` is needed), then in an empty directory
 * outside the repository `npm init -y && npm install <the SDK tarball>`, a plain .mjs and a .cjs on
 * node alone, a .ts and a .cts type-checked by tsc (NodeNext), and `npm install -g` of the CLI
 * tarball, all against a started sandbox server.
 */

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const TSC = path.join(ROOT, 'node_modules/.bin/tsc');
/** A partner's shell: node on the PATH, none of npm's or vitest's variables, no NODE_OPTIONS loader. */
const PATH = [path.dirname(process.execPath), '/usr/local/bin', '/usr/bin', '/bin'].join(path.delimiter);

type Run = { code: number | null; stdout: string; stderr: string };

function run(command: string, args: string[], cwd: string, env: Record<string, string> = {}): Promise<Run> {
  const child = spawn(command, args, {
    cwd,
    env: { PATH, HOME: process.env.HOME ?? cwd, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Runs and requires exit code 0, with the output in the failure message. */
async function ok(
  command: string,
  args: string[],
  cwd: string,
  env?: Record<string, string>,
): Promise<string> {
  const result = await run(command, args, cwd, env);
  if (result.code !== 0) {
    throw new Error(`${command} ${args.join(' ')} exited ${result.code}\n${result.stdout}\n${result.stderr}`);
  }
  return result.stdout;
}

// A registry fetch that stalls is retried within the test's 120 s instead of waiting out npm's
// default 5-minute fetch timeout (one such stall failed a run here). npm refuses a retry maximum
// below its minimum (10 s by default), so both are set.
const NPM_FLAGS = [
  '--prefer-offline',
  '--no-audit',
  '--no-fund',
  '--loglevel=error',
  '--fetch-timeout=30000',
  '--fetch-retry-mintimeout=1000',
  '--fetch-retry-maxtimeout=5000',
];

type PackEntry = { name: string; version: string; filename: string; files: { path: string }[] };

const ESM_SCRIPT = `
import { NotFoundError, PartnerClient, SDK_VERSION } from '@partner-api/sdk';

const client = PartnerClient.fromSandboxFile(process.env.SANDBOX_FILE);
const token = await client.oauth.token();
const me = await client.oauth.me();
const created = await client.customers.create({
  firstName: 'Amina',
  lastName: 'Otieno',
  msisdn: process.env.MSISDN,
});
const fetched = await client.customers.get(created.data.id);
const home = await client.ussd.start(created.data.id);
const stocks = await client.ussd.process(home.data.sessionId, '1');
const missing = await client.customers.get('c000000000000000000000000').catch((error) => error);
console.log(JSON.stringify({
  resolved: import.meta.resolve('@partner-api/sdk'),
  version: SDK_VERSION,
  tokenType: token.tokenType,
  organization: me.data.name,
  created: created.data,
  fetched: fetched.data,
  ussd: home.data,
  next: stocks.data.currentState,
  missing: { notFound: missing instanceof NotFoundError, status: missing.status },
}));
`;

const CJS_SCRIPT = `
const { NotFoundError, PartnerClient } = require('@partner-api/sdk');

(async () => {
  const client = PartnerClient.fromSandboxFile(process.env.SANDBOX_FILE);
  const me = await client.oauth.me();
  const created = await client.customers.create({ firstName: 'Kofi', lastName: 'Mensah' });
  const fetched = await client.customers.get(created.data.id);
  const home = await client.ussd.start(created.data.id);
  const missing = await client.customers.get('c000000000000000000000000').catch((error) => error);
  console.log(JSON.stringify({
    resolved: require.resolve('@partner-api/sdk'),
    organization: me.data.name,
    id: fetched.data.id,
    state: home.data.currentState,
    notFound: missing instanceof NotFoundError,
  }));
})().catch((error) => {
  console.error(error);
  process.exit(1);
});
`;

/** Type-checked only (node 20 runs no .ts); the @ts-expect-error lines fail the check if the types were `any`. */
const TS_SCRIPT = `
import { readFileSync } from 'node:fs';
import {
  type Customer,
  type CustomerCreate,
  NotFoundError,
  PartnerClient,
  type PartnerClientOptions,
  type UssdSessionData,
} from '@partner-api/sdk';

const options: PartnerClientOptions = {
  baseUrl: 'http://localhost:8080',
  clientId: 'client-id',
  clientSecret: 'client-secret',
  privateKey: readFileSync('partner-key.pem', 'utf8'),
  keyId: 'my-key-1',
};
const client = new PartnerClient(options);
const body: CustomerCreate = { firstName: 'Amina', lastName: 'Otieno', msisdn: '254712000001' };
const created: { message: string; data: Customer } = await client.customers.create(body, {
  idempotencyKey: '7b0f9d1e-3c2a-4d5b-8e6f-9a0b1c2d3e4f',
});
const fetched: Customer = (await client.customers.get(created.data.id)).data;
const home: UssdSessionData = (await client.ussd.start(fetched.id)).data;
const orgName: string = (await client.oauth.me()).data.name;
const tokenType: string = (await client.oauth.token()).tokenType;
console.log(home.ussdText, orgName, tokenType);
try {
  await client.customers.get('c000000000000000000000000');
} catch (error) {
  if (error instanceof NotFoundError) console.log(error.status, error.requestId);
}
// @ts-expect-error firstName is a string
await client.customers.create({ firstName: 1, lastName: 'Otieno' });
// @ts-expect-error no such resource
client.portfolios;
`;

const CTS_SCRIPT = `
import sdk = require('@partner-api/sdk');

const client: sdk.PartnerClient = sdk.PartnerClient.fromSandboxFile('sandbox-credentials.json');
export const first: Promise<sdk.CustomerGetResponse> = client.customers.get('c000000000000000000000000');
// @ts-expect-error a status is a number
export const status: string = new sdk.NotFoundError({ status: 404, label: 'NOT_FOUND' }).status;
`;

/**
 * The README's shell lines up to its `npm pack` (the folder made, the tarballs packed), as written
 * but for the destination, moved to `kit`, and `--json` added for the tarballs' names.
 */
function readmePackCommands(kit: string): string {
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const block = /```sh\n((?:(?!```)[\s\S])*?\nnpm pack [^\n]*)\n/.exec(readme)?.[1];
  if (!block?.includes('/tmp/partner-kit')) throw new Error('README.md: no `npm pack` to /tmp/partner-kit');
  return `${block.replaceAll('/tmp/partner-kit', kit)} --json`;
}

/**
 * A consumer compiled by each TypeScript a partner may have, with the tsconfig its `tsc --init`
 * writes (`"types": []`, skipLibCheck): @types/node is installed but named by nothing of theirs.
 * The @ts-expect-error lines fail the check if node's types were missing from ours: then KeyObject
 * is `any`, and a number passes for a private key.
 */
const CONSUMER_MTS = `
import { PartnerClient, type PartnerClientOptions } from '@partner-api/sdk';

const options: PartnerClientOptions = {
  baseUrl: 'http://localhost:8080',
  clientId: 'client-id',
  clientSecret: 'client-secret',
  privateKey: '-----BEGIN PRIVATE KEY-----',
  keyId: 'my-key-1',
};
export const client: PartnerClient = new PartnerClient(options);
export const bad: PartnerClientOptions = {
  ...options,
  // @ts-expect-error a private key is a PEM string or a KeyObject
  privateKey: 42,
};
`;

const CONSUMER_CTS = `
import sdk = require('@partner-api/sdk');

const client: sdk.PartnerClient = sdk.PartnerClient.fromSandboxFile('sandbox-credentials.json');
// @ts-expect-error a private key is a PEM string or a KeyObject
const bad: sdk.PartnerClientOptions['privateKey'] = 42;
console.log(client, bad);
`;

/** The TypeScript versions the consumer is compiled with: the last 5.x and the current one. */
// `latest` became TypeScript 7 (the native compiler), whose npm install does not complete on the CI
// machine, and a first install of 6.0 failed there once: 5.9 only until a newer line installs reliably.
const TYPESCRIPTS = ['5.9'];

/**
 * The tsc of `typescript@<spec>`, installed once per version under node_modules/.cache (a clean
 * clone installs it from npm's cache, without asking the registry again with --prefer-offline).
 */
async function typescriptAt(spec: string): Promise<{ version: string; tsc: string }> {
  const version = JSON.parse(
    await ok('npm', ['view', `typescript@${spec}`, 'version', '--json', ...NPM_FLAGS], ROOT),
  ) as string | string[];
  const exact = Array.isArray(version) ? version.at(-1)! : version;
  const dir = path.join(ROOT, 'node_modules/.cache/partner-api-pack', `typescript-${exact}`);
  const tsc = path.join(dir, 'node_modules/typescript/bin/tsc');
  if (!existsSync(tsc)) {
    // Installed beside and renamed: a run that stops halfway, or a second run at once, leaves no
    // half-installed compiler where the next run looks.
    mkdirSync(path.dirname(dir), { recursive: true });
    const partial = mkdtempSync(`${dir}.partial-`);
    writeFileSync(path.join(partial, 'package.json'), '{ "private": true }\n');
    await ok('npm', ['install', '--prefix', partial, ...NPM_FLAGS, `typescript@${exact}`], partial);
    try {
      renameSync(partial, dir);
    } catch (error) {
      rmSync(partial, { recursive: true, force: true });
      if (!existsSync(tsc)) throw error;
    }
  }
  return { version: exact, tsc };
}

// Installs and tsc over @types/node take tens of seconds on a busy two-core machine.
describe('the packed SDK and partner CLI, installed the way a partner installs them', {
  timeout: 120_000,
}, () => {
  let sandbox: Sandbox;
  let work: string;
  let app: string;
  /** Where the README's commands pack to: a folder that does not exist before they run. */
  let kit: string;
  const tarballs: Record<string, PackEntry> = {};

  beforeAll(async () => {
    work = mkdtempSync(path.join(tmpdir(), 'partner-api-pack-'));
    kit = path.join(work, 'partner-kit');
    const packed = ok('sh', ['-ec', readmePackCommands(kit)], ROOT);
    // Both at once; a sandbox that started is stopped in afterAll even when the pack failed.
    const [started, pack] = await Promise.allSettled([startSandbox(), packed]);
    if (started.status === 'fulfilled') sandbox = started.value;
    else throw started.reason;
    if (pack.status === 'rejected') throw pack.reason;
    const json = pack.value;
    for (const entry of JSON.parse(json.slice(json.indexOf('[\n'))) as PackEntry[])
      tarballs[entry.name] = entry;

    app = path.join(work, 'app');
    mkdirSync(app);
    await ok('npm', ['init', '-y'], app);
    // @types/node for the type checks (the SDK's types use node:crypto's KeyObject and Buffer), at
    // the repository's version so that it comes from the npm cache.
    const typesNode = JSON.parse(
      readFileSync(path.join(ROOT, 'node_modules/@types/node/package.json'), 'utf8'),
    );
    await ok(
      'npm',
      [
        'install',
        ...NPM_FLAGS,
        path.join(kit, tarballs['@partner-api/sdk']!.filename),
        `@types/node@${typesNode.version}`,
      ],
      app,
    );
  }, 240_000);
  afterAll(async () => {
    await sandbox?.server.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('the SDK tarball: dist, README and package.json; its own deps only, not our workspaces', () => {
    const sdk = tarballs['@partner-api/sdk']!;
    expect(sdk.files.map((f) => f.path).sort()).toEqual([
      'README.md',
      'dist/index.cjs',
      'dist/index.cjs.map',
      'dist/index.d.cts',
      'dist/index.d.ts',
      'dist/index.js',
      'dist/index.js.map',
      'package.json',
    ]);
    const installed = JSON.parse(
      readFileSync(path.join(app, 'node_modules/@partner-api/sdk/package.json'), 'utf8'),
    );
    expect(Object.keys(installed.dependencies).sort()).toEqual(['structured-headers', 'zod']);
    const dts = readFileSync(path.join(app, 'node_modules/@partner-api/sdk/dist/index.d.ts'), 'utf8');
    expect(dts).not.toContain('@partner-api/');
    const cli = tarballs['@partner-api/partner-cli']!;
    expect(cli.files.map((f) => f.path).sort()).toEqual([
      'README.md',
      'dist/partner.js',
      'dist/partner.js.map',
      'package.json',
    ]);
  });

  it('a plain .mjs on node: token, me, customer create and get, a USSD session, a typed error', async () => {
    writeFileSync(path.join(app, 'quickstart.mjs'), ESM_SCRIPT);
    const msisdn = `2547${String(Date.now()).slice(-8)}`;
    const out = JSON.parse(
      await ok(process.execPath, ['quickstart.mjs'], app, {
        SANDBOX_FILE: sandbox.credentialsFile,
        MSISDN: msisdn,
      }),
    );
    expect(fileURLToPath(out.resolved)).toBe(path.join(app, 'node_modules/@partner-api/sdk/dist/index.js'));
    expect(out.version).toBe(tarballs['@partner-api/sdk']!.version);
    expect(out.tokenType).toBe('Bearer');
    expect(out.organization).toBe('Demo Investments');
    expect(out.created).toMatchObject({ firstName: 'Amina', lastName: 'Otieno', msisdn });
    expect(out.created.id).toMatch(/^c[a-z0-9]{24}$/);
    expect(out.fetched).toEqual(out.created);
    expect(out.ussd.currentState).toBe('HOME');
    expect(out.ussd.ussdText).toContain('Welcome to Demo Investments');
    expect(out.next).toBe('STOCKS');
    expect(out.missing).toEqual({ notFound: true, status: 404 });
  });

  it('the README quick start, copied as it is, reaches a created customer', async () => {
    const readme = readFileSync(path.join(ROOT, 'packages/sdk/README.md'), 'utf8');
    const code = /## First call[^\n]*\n[\s\S]*?```js\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(code).toContain("from '@partner-api/sdk'");
    writeFileSync(path.join(app, 'readme-quickstart.mjs'), code!);
    const { credentials } = sandbox;
    writeFileSync(path.join(app, 'partner-key.pem'), credentials.privateKey, { mode: 0o600 });
    const out = await ok(process.execPath, ['readme-quickstart.mjs'], app, {
      PARTNER_BASE_URL: credentials.baseUrl,
      PARTNER_CLIENT_ID: credentials.clientId,
      PARTNER_CLIENT_SECRET: credentials.clientSecret,
      PARTNER_KEY_ID: credentials.keyId,
    });
    expect(out).toMatch(/^Demo Investments: customer c[a-z0-9]{24}\n\nWelcome to Demo Investments\n/);
  });

  it('require() from CommonJS', async () => {
    writeFileSync(path.join(app, 'quickstart.cjs'), CJS_SCRIPT);
    const out = JSON.parse(
      await ok(process.execPath, ['quickstart.cjs'], app, { SANDBOX_FILE: sandbox.credentialsFile }),
    );
    expect(out.resolved).toBe(path.join(app, 'node_modules/@partner-api/sdk/dist/index.cjs'));
    expect(out).toMatchObject({ organization: 'Demo Investments', state: 'HOME', notFound: true });
    expect(out.id).toMatch(/^c[a-z0-9]{24}$/);
  });

  it('a .ts and a .cts type-check with tsc (module NodeNext), and a wrong call does not', async () => {
    writeFileSync(path.join(app, 'quickstart.ts'), TS_SCRIPT);
    writeFileSync(path.join(app, 'quickstart-cjs.cts'), CTS_SCRIPT);
    const tsconfig = {
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        noEmit: true,
        skipLibCheck: false,
        types: ['node'],
      },
      files: ['quickstart.ts', 'quickstart-cjs.cts'],
    };
    writeFileSync(path.join(app, 'tsconfig.json'), JSON.stringify(tsconfig));
    // package.json of `npm init -y` is CommonJS; the .ts uses top-level await, so it is an ES module.
    const pkg = JSON.parse(readFileSync(path.join(app, 'package.json'), 'utf8'));
    writeFileSync(path.join(app, 'package.json'), JSON.stringify({ ...pkg, type: 'module' }, null, 2));
    await ok(process.execPath, [TSC, '-p', '.'], app);

    // A wrong type is an error: the declarations are real, not `any`.
    writeFileSync(
      path.join(app, 'wrong.ts'),
      "import { PartnerClient } from '@partner-api/sdk';\n" +
        'export const name: number = (await PartnerClient.fromSandboxFile().oauth.me()).data.name;\n',
    );
    const wrong = await run(
      process.execPath,
      [
        TSC,
        '--noEmit',
        '--strict',
        '--target',
        'ES2022',
        '--module',
        'NodeNext',
        '--types',
        'node',
        'wrong.ts',
      ],
      app,
    );
    expect(wrong.stdout).toContain("error TS2322: Type 'string' is not assignable to type 'number'.");
    expect(wrong.code).not.toBe(0);
  });

  it.each(TYPESCRIPTS)(
    'TypeScript %s compiles a consumer with the tsconfig of its `tsc --init`',
    async (spec) => {
      const { version, tsc } = await typescriptAt(spec);
      if (spec !== 'latest') expect(version.startsWith(`${spec}.`)).toBe(true);
      // Inside the app, which has the SDK and @types/node installed; .mts and .cts whatever its type.
      const dir = path.join(app, `typescript-${version}`);
      mkdirSync(dir);
      await ok(process.execPath, [tsc, '--init'], dir);
      const tsconfig = readFileSync(path.join(dir, 'tsconfig.json'), 'utf8');
      expect(tsconfig).toMatch(/"types": \[\]/);
      writeFileSync(path.join(dir, 'consumer.mts'), CONSUMER_MTS);
      writeFileSync(path.join(dir, 'consumer.cts'), CONSUMER_CTS);
      await ok(process.execPath, [tsc, '-p', '.', '--noEmit'], dir);
      // Our declarations themselves, as a project that checks its libraries does.
      await ok(process.execPath, [tsc, '-p', '.', '--noEmit', '--skipLibCheck', 'false'], dir);
    },
  );

  it('npm install -g of the partner CLI tarball gives a `partner` that runs on node and logs in', async () => {
    const prefix = path.join(work, 'global');
    const home = path.join(work, 'home');
    mkdirSync(home);
    const cli = path.join(kit, tarballs['@partner-api/partner-cli']!.filename);
    // --prefix also moves npm's global config to <prefix>/etc/npmrc; the machine's own global
    // config (its CA file, its registry) still applies, as it does for a partner's `npm i -g`.
    const globalconfig = (await ok('npm', ['config', 'get', 'globalconfig'], work)).trim();
    await ok(
      'npm',
      ['install', '-g', '--prefix', prefix, '--globalconfig', globalconfig, ...NPM_FLAGS, cli],
      work,
    );
    const partner = path.join(prefix, 'bin/partner');
    const env = { HOME: home };

    const help = await run(partner, ['--help'], home, env);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: partner [options] [command]');

    const login = await run(partner, ['login', '--sandbox-file', sandbox.credentialsFile], home, env);
    expect(login.stderr).toBe('');
    expect(login.code).toBe(0);
    expect(login.stdout).toContain('Demo Investments');

    const customerId = sandbox.credentials.customerIds[0]!;
    const got = await run(partner, ['--json', 'customers', 'get', customerId], home, env);
    expect(got.stderr).toBe('');
    expect(got.code).toBe(0);
    expect(JSON.parse(got.stdout).data.id).toBe(customerId);
  });
});
