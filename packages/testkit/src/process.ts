import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import type { SandboxCredentials } from '../../sdk/src/index.ts';
import { type Partner, payloadOf, signedHeaders } from './partner.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const CLI = path.join(ROOT, 'packages/cli/src/partner-api.ts');
/** What `npm start` runs: the bundle `npm run build` writes (scripts/build.ts's buildBundles). */
export const BUILT_CLI = path.join(ROOT, 'packages/cli/dist/partner-api.js');

export function tempDataDir(): string {
  return mkdtempSync(path.join(tmpdir(), 'partner-api-test-'));
}

/** Ports this process has handed out: the system may offer a closed one again at once. */
const handedOut = new Set<number>();

/** A port free now and not handed out before by this process (servers started together differ). */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const server = createServer();
      server.unref();
      server.on('error', reject);
      server.listen(0, '127.0.0.1', () => {
        const { port } = server.address() as { port: number };
        server.close(() => resolve(port));
      });
    });
    if (!handedOut.has(port)) {
      handedOut.add(port);
      return port;
    }
  }
}

export type ServerProcess = {
  baseUrl: string;
  adminUrl: string;
  port: number;
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
};

/** A server process's JSON log lines so far, parsed (the other lines of its output left out). */
export function logEntries(server: ServerProcess): Array<Record<string, unknown>> {
  return server
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/**
 * Runs `partner-api serve` as a real process, the way an operator does (from the sources through tsx,
 * or `built`: the bundle `npm start` runs); resolves once /healthz answers 200.
 */
export async function startServer(
  env: Record<string, string>,
  options: { waitForHealth?: boolean; timeoutMs?: number; built?: boolean } = {},
): Promise<ServerProcess> {
  // A port freePort found free can be taken before the server binds it (another suite's server,
  // or any client socket's ephemeral port): then the server refuses to start (exit 2), and it is
  // started again on fresh ports. Ports the caller chose are never changed.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startServerOnce(env, options);
    } catch (error) {
      const portTaken = error instanceof PortTaken && !env.PORT && !env.ADMIN_PORT;
      if (!portTaken || attempt === 3) throw error;
    }
  }
}

class PortTaken extends Error {}

/**
 * Several servers started together. If one fails, those that started are stopped before its error
 * is thrown: with `[a, b] = await Promise.all(...)` a server that did start was never assigned, no
 * afterAll could stop it, and it outlived the test run (seen once, 2026-11-26).
 */
export async function startServers(
  envs: Record<string, string>[],
  options: { timeoutMs?: number; built?: boolean } = {},
): Promise<ServerProcess[]> {
  const settled = await Promise.allSettled(envs.map((env) => startServer(env, options)));
  const failed = settled.find((result) => result.status === 'rejected');
  if (failed) {
    await Promise.all(
      settled.map((result) => (result.status === 'fulfilled' ? result.value.stop('SIGKILL') : undefined)),
    );
    throw failed.reason;
  }
  return settled.map((result) => (result as PromiseFulfilledResult<ServerProcess>).value);
}

async function startServerOnce(
  env: Record<string, string>,
  options: { waitForHealth?: boolean; timeoutMs?: number; built?: boolean },
): Promise<ServerProcess> {
  const port = env.PORT ? Number(env.PORT) : await freePort();
  const adminPort = env.ADMIN_PORT ? Number(env.ADMIN_PORT) : await freePort();
  // One process (no tsx wrapper), so that a SIGKILL in a test really kills the server.
  const args = options.built ? [BUILT_CLI, 'serve'] : ['--import', 'tsx', CLI, 'serve'];
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      LOG_LEVEL: 'warn',
      // Suites run at any hour: only the market-hours suites enforce them (docs/market.md).
      MARKET_HOURS: 'always-open',
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      ...env,
      PORT: String(port),
      ADMIN_PORT: String(adminPort),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk) => (output += chunk));
  child.stderr?.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const server: ServerProcess = {
    baseUrl: `http://127.0.0.1:${port}`,
    adminUrl: `http://127.0.0.1:${adminPort}`,
    port,
    child,
    output: () => output,
    exited,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
  if (options.waitForHealth === false) return server;
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  let done = false;
  exited.then(() => (done = true));
  while (Date.now() < deadline && !done) {
    try {
      const response = await fetch(`${server.baseUrl}/healthz`);
      if (response.status === 200) return server;
    } catch {}
    await new Promise((r) => setTimeout(r, 200));
  }
  await server.stop('SIGKILL');
  const message = `server did not become healthy:\n${output}`;
  // server.ts's refusal when a port is taken (listenOrExit).
  throw /cannot listen: \S+ is already in use/.test(output) ? new PortTaken(message) : new Error(message);
}

export type Sandbox = {
  server: ServerProcess;
  dataDir: string;
  credentialsFile: string;
  credentials: SandboxCredentials;
};

/** A real `partner-api serve` in sandbox mode on a fresh data directory, with its seeded credentials. */
export async function startSandbox(env: Record<string, string> = {}): Promise<Sandbox> {
  const dataDir = tempDataDir();
  const server = await startServer({
    DATA_DIR: dataDir,
    APP_ENV: 'sandbox',
    SANDBOX_SETTLE_MS: '200',
    RATE_LIMIT_GLOBAL: '100000/60s',
    RATE_LIMIT_TOKEN: '1000/60s',
    ...env,
  });
  const credentialsFile = path.join(dataDir, 'sandbox-credentials.json');
  const credentials = JSON.parse(readFileSync(credentialsFile, 'utf8')) as SandboxCredentials;
  return { server, dataDir, credentialsFile, credentials };
}

/**
 * A partner's signed POSTs to a server process that a crash test kills and starts again: `server`
 * is read at each call, so the calls after a restart reach the new process.
 */
export function processPoster(server: () => ServerProcess, partner: () => Partner) {
  return async function post(url: string, body: unknown, expected: number) {
    const payload = payloadOf(body);
    const headers = signedHeaders(partner(), { method: 'POST', url, idempotencyKey: randomUUID() }, payload);
    const res = await fetch(server().baseUrl + url, { method: 'POST', headers, body: payload });
    const json = (await res.json()) as {
      data: Record<string, unknown> & { sessionId: string; menu: { text: string } };
    };
    expect(res.status, `${url}: ${JSON.stringify(json)}`).toBe(expected);
    return json.data;
  };
}

/** Lists one instrument through the process's admin API (POST /admin/stocks). */
export async function listStock(
  server: ServerProcess,
  adminToken: string,
  stock: { symbol: string; name: string; price: string },
): Promise<void> {
  const res = await fetch(`${server.adminUrl}/admin/stocks`, {
    method: 'POST',
    headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify([{ ...stock, currency: 'KES' }]),
  });
  expect(res.status).toBe(200);
}

/** A new customer buys `amount` of `symbol` through the USSD menu; the order id and the customer. */
export async function ussdBuy(
  post: ReturnType<typeof processPoster>,
  input: { firstName: string; lastName: string; msisdn: string; symbol: string; amount: string },
): Promise<{ orderId: string; customerId: string }> {
  const { firstName, lastName, msisdn } = input;
  const customer = await post('/v1/customers', { firstName, lastName, msisdn }, 201);
  let screen = await post('/v1/ussd/session', { customerId: customer.id }, 201);
  for (const choice of ['1', '8', input.symbol, '1', '1', input.amount, '1'])
    screen = await post('/v1/ussd/process', { sessionId: screen.sessionId, choice }, 200);
  const orderId = /Ref (c[a-z0-9]{24})/.exec(screen.menu.text)?.[1];
  expect(orderId, screen.menu.text).toBeDefined();
  return { orderId: orderId!, customerId: customer.id as string };
}
