import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { tempDataDir } from '@partner-api/testkit/app.ts';
import { startServer } from '@partner-api/testkit/process.ts';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { MPESA_REQUIRED } from '../../src/services/payments/providers/mpesa/settings.ts';
import { makeCertificate } from '../webhooks/receiver.ts';

/** The problems loadConfig reports, or [] when the environment is accepted. */
function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
    return [];
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).problems;
  }
}

/** Exactly one line, naming the variable first, on one line. */
function expectOneLineNaming(env: Record<string, string>, name: string) {
  const problems = problemsOf(env);
  expect(problems, JSON.stringify(env)).toHaveLength(1);
  expect(problems[0]).toMatch(new RegExp(`^${name}: \\S`));
  expect(problems[0]).not.toContain('\n');
}

const ed25519Pem = () =>
  generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();

const PRODUCTION_SECRETS = {
  DATABASE_URL: 'postgres://app@db.internal:5432/partner',
  ADMIN_TOKEN: randomBytes(24).toString('hex'),
  JWT_SECRET: randomBytes(32).toString('hex'),
  WEBHOOK_SIGNING_KEY: ed25519Pem(),
  PROVIDER_CALLBACK_SECRET: randomBytes(16).toString('hex'),
  PUBLIC_BASE_URL: 'https://api.example.com',
};

describe('loadConfig', () => {
  const tls = makeCertificate();
  it('applies the documented defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      PORT: 8080,
      HOST: '0.0.0.0',
      ADMIN_PORT: 8081,
      ADMIN_HOST: '127.0.0.1',
      APP_ENV: 'sandbox',
      DATA_DIR: './data',
      TRUST_PROXY: false,
      DATABASE_POOL_SIZE: 10,
      WEBHOOK_KEY_GENERATION: 2,
      RATE_LIMIT_GLOBAL: { points: 300, durationSeconds: 60 },
      RATE_LIMIT_TOKEN: { points: 10, durationSeconds: 900 },
      IDEMPOTENCY_TTL_SECONDS: 86_400,
      USSD_SESSION_TTL_SECONDS: 180,
      SANDBOX_SETTLE_MS: 3000,
      LOG_LEVEL: 'info',
      PUBLIC_BASE_URL: 'http://localhost:8080',
    });
    expect(config.DATABASE_URL).toBeUndefined();
    expect(config.REDIS_URL).toBeUndefined();
    expect(loadConfig({ PORT: '9000' }).PUBLIC_BASE_URL).toBe('http://localhost:9000');
  });

  it('reads the overrides', () => {
    const config = loadConfig({
      RATE_LIMIT_GLOBAL: '50/10s',
      RATE_LIMIT_TOKEN: '3/120s',
      TRUST_PROXY: '10.0.0.1, 10.0.0.0/8,2001:db8::/32',
      PORT: '0',
      DATABASE_POOL_SIZE: '25',
    });
    expect(config.DATABASE_POOL_SIZE).toBe(25);
    expect(config.RATE_LIMIT_GLOBAL).toEqual({ points: 50, durationSeconds: 10 });
    expect(config.RATE_LIMIT_TOKEN).toEqual({ points: 3, durationSeconds: 120 });
    expect(config.TRUST_PROXY).toEqual(['10.0.0.1', '10.0.0.0/8', '2001:db8::/32']);
    expect(loadConfig({ TRUST_PROXY: 'true' }).TRUST_PROXY).toBe(true);
    expect(loadConfig({ TRUST_PROXY: 'false' }).TRUST_PROXY).toBe(false);
    expect(loadConfig({ TRUST_PROXY: 'loopback' }).TRUST_PROXY).toEqual(['loopback']);
    // An empty variable counts as unset (as in a .env with `PORT=`).
    expect(loadConfig({ PORT: '' }).PORT).toBe(8080);
  });

  it('gives one line naming each bad variable', () => {
    const cases: [string, string][] = [
      ['PORT', 'abc'],
      ['PORT', '70000'],
      ['PORT', '-1.5'],
      ['ADMIN_PORT', '8081x'],
      ['RATE_LIMIT_GLOBAL', 'lots'],
      ['RATE_LIMIT_GLOBAL', '0/60s'],
      ['RATE_LIMIT_TOKEN', '10/15m'],
      ['TRUST_PROXY', '2'],
      ['TRUST_PROXY', '10.0.0.0/8,1'],
      ['TRUST_PROXY', 'my-proxy'],
      ['TRUST_PROXY', '10.0.0.0/40'],
      ['APP_ENV', 'staging'],
      ['LOG_LEVEL', 'verbose'],
      ['DATABASE_URL', 'not a url'],
      ['DATABASE_URL', 'localhost:5432/partner'],
      ['DATABASE_URL', 'mysql://db/partner'],
      ['REDIS_URL', 'localhost:6379'],
      ['PUBLIC_BASE_URL', 'localhost:8080'],
      ['PUBLIC_BASE_URL', 'ftp://example.com'],
      ['ADMIN_TOKEN', 'short'],
      ['JWT_SECRET', 'short'],
      ['WEBHOOK_SIGNING_KEY', 'not a key'],
      ['WEBHOOK_SIGNING_KEY', '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----'],
      [
        'WEBHOOK_SIGNING_KEY',
        generateKeyPairSync('ec', { namedCurve: 'P-256' })
          .privateKey.export({ format: 'pem', type: 'pkcs8' })
          .toString(),
      ],
      ['WEBHOOK_KEY_GENERATION', '0'],
      ['IDEMPOTENCY_TTL_SECONDS', '1.5'],
      ['SANDBOX_SETTLE_MS', '-1'],
      ['DATABASE_POOL_SIZE', '0'],
      ['DATABASE_POOL_SIZE', 'ten'],
      ['DATABASE_POOL_SIZE', '1001'],
    ];
    for (const [name, value] of cases) expectOneLineNaming({ [name]: value }, name);
  });

  it('reports every bad variable at once, one line each', () => {
    const problems = problemsOf({ PORT: 'abc', RATE_LIMIT_GLOBAL: 'lots', TRUST_PROXY: '2' });
    expect(problems).toHaveLength(3);
    expect(problems.map((p) => p.split(':')[0]).sort()).toEqual(['PORT', 'RATE_LIMIT_GLOBAL', 'TRUST_PROXY']);
  });

  it('refuses production without its secrets, naming each missing one', () => {
    const problems = problemsOf({ APP_ENV: 'production' });
    expect(problems.map((p) => p.split(':')[0]).sort()).toEqual(Object.keys(PRODUCTION_SECRETS).sort());
    for (const p of problems) expect(p).toMatch(/^[A-Z_]+: required when APP_ENV=production$/);

    for (const missing of Object.keys(PRODUCTION_SECRETS)) {
      const env: Record<string, string> = { APP_ENV: 'production', ...PRODUCTION_SECRETS };
      delete env[missing];
      expect(problemsOf(env)).toEqual([`${missing}: required when APP_ENV=production`]);
    }
  });

  it('names the missing production secrets together with a bad variable', () => {
    const problems = problemsOf({
      APP_ENV: 'production',
      ...PRODUCTION_SECRETS,
      JWT_SECRET: '',
      PORT: 'abc',
    });
    expect(problems.map((p) => p.split(':')[0]).sort()).toEqual(['JWT_SECRET', 'PORT']);
  });

  it('starts production with all its secrets', () => {
    const config = loadConfig({ APP_ENV: 'production', ...PRODUCTION_SECRETS });
    expect(config.APP_ENV).toBe('production');
    expect(config.PUBLIC_BASE_URL).toBe('https://api.example.com');
  });

  it('refuses a WEBHOOKS_CA_FILE that cannot be read or holds no certificate, in one line', () => {
    const notACertificate = path.join(tls.dir, 'not-a-certificate.pem');
    writeFileSync(notACertificate, '-----BEGIN CERTIFICATE-----\nZ2FyYmFnZQ==\n-----END CERTIFICATE-----\n');
    for (const file of [path.join(tls.dir, 'missing.pem'), tls.dir, notACertificate]) {
      expect(problemsOf({ WEBHOOKS_CA_FILE: file })).toEqual([
        'WEBHOOKS_CA_FILE: must name a readable PEM certificate file',
      ]);
    }
    expect(loadConfig({ WEBHOOKS_CA_FILE: tls.certFile }).WEBHOOKS_CA_FILE).toBe(tls.certFile);
  });

  it('refuses the webhook rehearsal settings in production, and takes them in the sandbox', () => {
    const rehearsal = { WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOKS_CA_FILE: '/tmp/ca.pem' };
    expect(problemsOf({ APP_ENV: 'production', ...PRODUCTION_SECRETS, ...rehearsal }).sort()).toEqual([
      'WEBHOOKS_ALLOW_PRIVATE_TARGETS: not allowed when APP_ENV=production',
      'WEBHOOKS_CA_FILE: not allowed when APP_ENV=production',
    ]);
    const sandbox = loadConfig({ ...rehearsal, WEBHOOKS_CA_FILE: tls.certFile, WEBHOOKS_PREVIEW: 'true' });
    expect([sandbox.WEBHOOKS_PREVIEW, sandbox.WEBHOOKS_ALLOW_PRIVATE_TARGETS]).toEqual([true, true]);
    expect(loadConfig({}).WEBHOOKS_PREVIEW).toBe(false);
  });

  it('production refuses a plain-HTTP PUBLIC_BASE_URL, naming it, unless its host is loopback', () => {
    const at = (url: string) =>
      problemsOf({ APP_ENV: 'production', ...PRODUCTION_SECRETS, PUBLIC_BASE_URL: url });
    for (const url of ['http://api.example.com', 'http://10.0.0.5:8080', 'http://127.example.com'])
      expect(at(url), url).toEqual([
        'PUBLIC_BASE_URL: must be https:// when APP_ENV=production (providers call back on it), unless its host is a loopback address',
      ]);
    // A go-live rehearsal against the fakes on one machine, and the real thing.
    for (const url of [
      'http://127.0.0.1:8080',
      'http://localhost:8080',
      'http://[::1]:8080',
      'https://api.example.com',
    ])
      expect(at(url), url).toEqual([]);
    // The sandbox keeps its http://localhost default and takes any.
    expect(problemsOf({ PUBLIC_BASE_URL: 'http://api.example.com' })).toEqual([]);
    expect(problemsOf({ WEBHOOKS_PREVIEW: 'yes' })).toEqual(['WEBHOOKS_PREVIEW: must be true or false']);
  });
});

describe('a bad variable stops a real `partner-api serve`', () => {
  const cases: [string, Record<string, string>][] = [
    ['PORT', { PORT: 'abc' }],
    ['RATE_LIMIT_GLOBAL', { RATE_LIMIT_GLOBAL: 'lots' }],
    ['TRUST_PROXY', { TRUST_PROXY: 'my-proxy' }],
    ['WEBHOOKS_CA_FILE', { WEBHOOKS_PREVIEW: 'true', WEBHOOKS_CA_FILE: '/nonexistent/ca.pem' }],
  ];
  it.each(cases)('%s: exit code 2 and a line naming it, no stack trace', async (name, env) => {
    const server = await startServer({ ...env, DATA_DIR: tempDataDir() }, { waitForHealth: false });
    const timer = setTimeout(() => server.stop('SIGKILL'), 20_000);
    const code = await server.exited;
    clearTimeout(timer);
    expect(code, server.output()).toBe(2);
    const lines = server.output().split('\n');
    expect(
      lines.filter((line) => new RegExp(`^\\s*${name}: \\S`).test(line)),
      server.output(),
    ).toHaveLength(1);
    expect(server.output()).not.toMatch(/^\s+at /m);
  });

  it('a DATA_DIR that cannot be made: exit code 2 and one line naming it, no stack trace', async () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'partner-api-file-')), 'a-file');
    writeFileSync(file, 'not a directory');
    for (const dataDir of [file, path.join(file, 'below')]) {
      const server = await startServer({ DATA_DIR: dataDir }, { waitForHealth: false });
      expect(await server.exited, server.output()).toBe(2);
      expect(server.output()).toMatch(
        new RegExp(`^partner-api: cannot use DATA_DIR ${dataDir}: E(EXIST|NOTDIR): .+$`, 'm'),
      );
      expect(server.output()).not.toMatch(/^\s+at /m);
    }
  });

  it('production without secrets: exit code 2, each missing one named', async () => {
    const server = await startServer(
      { APP_ENV: 'production', DATA_DIR: tempDataDir() },
      { waitForHealth: false },
    );
    const code = await server.exited;
    expect(code, server.output()).toBe(2);
    for (const name of [
      'DATABASE_URL',
      'ADMIN_TOKEN',
      'JWT_SECRET',
      'WEBHOOK_SIGNING_KEY',
      'PROVIDER_CALLBACK_SECRET',
    ]) {
      expect(server.output()).toMatch(new RegExp(`^\\s*${name}: required when APP_ENV=production$`, 'm'));
    }
  });
});

const names = (problems: string[]) => problems.map((p) => p.split(':')[0]).sort();

const PRODUCTION = {
  APP_ENV: 'production',
  ...PRODUCTION_SECRETS,
  PUBLIC_BASE_URL: 'https://api.example.com/',
};

const MPESA = {
  MPESA_CONSUMER_KEY: 'consumer-key-value',
  MPESA_CONSUMER_SECRET: 'consumer-secret-value',
  MPESA_SHORTCODE: '174379',
  MPESA_PASSKEY: 'passkey-value',
  MPESA_B2C_SHORTCODE: '600000',
  MPESA_INITIATOR_NAME: 'apiop',
  MPESA_SECURITY_CREDENTIAL: 'security-credential-value',
  MPESA_CALLBACK_TOKEN: randomBytes(24).toString('base64url'),
};

describe('M-Pesa configuration', () => {
  it('is absent when no M-Pesa variable is set (production starts; payments are not available)', () => {
    expect(loadConfig(PRODUCTION).mpesa).toBeUndefined();
    expect(loadConfig({}).mpesa).toBeUndefined();
  });

  it('builds the adapter settings from a complete set, the base URL by environment', () => {
    const production = loadConfig({ ...PRODUCTION, ...MPESA });
    expect(production.mpesa).toEqual({
      baseUrl: 'https://api.safaricom.co.ke',
      consumerKey: MPESA.MPESA_CONSUMER_KEY,
      consumerSecret: MPESA.MPESA_CONSUMER_SECRET,
      shortcode: '174379',
      passkey: MPESA.MPESA_PASSKEY,
      b2cShortcode: '600000',
      initiatorName: 'apiop',
      securityCredential: MPESA.MPESA_SECURITY_CREDENTIAL,
      callbackBaseUrl: 'https://api.example.com/v1/payments/callbacks/daraja',
      callbackToken: MPESA.MPESA_CALLBACK_TOKEN,
      callbackAllowedIps: [],
      reconcileAfterMs: 120_000,
      timeouts: { tokenMs: 10_000, requestMs: 15_000 },
    });
    const sandbox = loadConfig({
      ...MPESA,
      MPESA_CALLBACK_ALLOWED_IPS: '196.201.214.0/24, 10.0.0.1',
      MPESA_RECONCILE_AFTER_SECONDS: '30',
      MPESA_REQUEST_TIMEOUT_MS: '4000',
    });
    expect(sandbox.mpesa).toMatchObject({
      baseUrl: 'https://sandbox.safaricom.co.ke',
      callbackBaseUrl: 'http://localhost:8080/v1/payments/callbacks/daraja',
      callbackAllowedIps: ['196.201.214.0/24', '10.0.0.1'],
      reconcileAfterMs: 30_000,
      // The token call gets at most 10 s, and never more than the other calls.
      timeouts: { tokenMs: 4000, requestMs: 4000 },
    });
    expect(loadConfig({ ...MPESA, MPESA_BASE_URL: 'http://127.0.0.1:9001' }).mpesa?.baseUrl).toBe(
      'http://127.0.0.1:9001',
    );
  });

  it('refuses a partial set in production, naming each missing variable on its own line', () => {
    const problems = problemsOf({
      ...PRODUCTION,
      MPESA_CONSUMER_KEY: MPESA.MPESA_CONSUMER_KEY,
      MPESA_SHORTCODE: '174379',
    });
    expect(names(problems)).toEqual(
      MPESA_REQUIRED.filter((n) => n !== 'MPESA_CONSUMER_KEY' && n !== 'MPESA_SHORTCODE').sort(),
    );
    for (const p of problems) {
      expect(p).toMatch(/^MPESA_[A-Z0-9_]+: required with the other M-Pesa settings/);
      expect(p).not.toContain('\n');
    }
    // Each one missing alone is named alone.
    for (const missing of MPESA_REQUIRED) {
      const env: Record<string, string> = { ...PRODUCTION, ...MPESA };
      delete env[missing];
      expect(names(problemsOf(env))).toEqual([missing]);
    }
  });

  it('refuses a partial set in sandbox too', () => {
    expect(names(problemsOf({ MPESA_PASSKEY: 'x' }))).toEqual(
      MPESA_REQUIRED.filter((n) => n !== 'MPESA_PASSKEY').sort(),
    );
  });

  it('gives one line per bad value, and never the value of a secret', () => {
    const cases: [string, string][] = [
      ['MPESA_CALLBACK_TOKEN', 'short-guessable-token'],
      ['MPESA_CALLBACK_TOKEN', `${'a'.repeat(40)}/../x`],
      ['MPESA_SHORTCODE', '17 43 79'],
      ['MPESA_B2C_SHORTCODE', 'abc'],
      ['MPESA_BASE_URL', 'api.safaricom.co.ke'],
      ['MPESA_CALLBACK_ALLOWED_IPS', '10.0.0.0/8,not-an-ip'],
      ['MPESA_RECONCILE_AFTER_SECONDS', '0'],
      ['MPESA_CONSUMER_SECRET', '   '],
    ];
    for (const [name, value] of cases) {
      const problems = problemsOf({ ...MPESA, [name]: value });
      expect(names(problems), `${name}=${value}`).toEqual([name]);
      if (name === 'MPESA_CALLBACK_TOKEN') expect(problems[0]).not.toContain(value);
    }
  });
});

describe('a partial M-Pesa configuration stops a real `partner-api serve`', () => {
  it('production: exit code 2, each missing variable named, no secret printed', async () => {
    const server = await startServer(
      {
        ...PRODUCTION,
        DATA_DIR: tempDataDir(),
        MPESA_CONSUMER_SECRET: MPESA.MPESA_CONSUMER_SECRET,
        MPESA_PASSKEY: MPESA.MPESA_PASSKEY,
      },
      { waitForHealth: false },
    );
    const timer = setTimeout(() => server.stop('SIGKILL'), 20_000);
    const code = await server.exited;
    clearTimeout(timer);
    expect(code, server.output()).toBe(2);
    for (const name of MPESA_REQUIRED.filter((n) => n !== 'MPESA_CONSUMER_SECRET' && n !== 'MPESA_PASSKEY')) {
      expect(server.output()).toMatch(
        new RegExp(`^\\s*${name}: required with the other M-Pesa settings`, 'm'),
      );
    }
    expect(server.output()).not.toContain(MPESA.MPESA_CONSUMER_SECRET);
    expect(server.output()).not.toContain(MPESA.MPESA_PASSKEY);
    expect(server.output()).not.toMatch(/^\s+at /m);
  });
});
