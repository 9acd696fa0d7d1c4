import { readFileSync } from 'node:fs';
import path from 'node:path';
import { tempDataDir } from '../../server/test/support/app.ts';
import { type ServerProcess, startServer } from '../../server/test/support/process.ts';
import type { PartnerClient, RequestEvent, ResponseEvent, SandboxCredentials } from '../src/index.ts';

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

type At = { at: number };
export type Recorded = { requests: (RequestEvent & At)[]; responses: (ResponseEvent & At)[]; clear(): void };

/** Every attempt the client makes, as its 'request' and 'response' events report them. */
export function record(client: PartnerClient): Recorded {
  const recorded: Recorded = {
    requests: [],
    responses: [],
    clear() {
      recorded.requests.length = 0;
      recorded.responses.length = 0;
    },
  };
  client.on('request', (event) => recorded.requests.push({ ...event, at: Date.now() }));
  client.on('response', (event) => recorded.responses.push({ ...event, at: Date.now() }));
  return recorded;
}

export const ORDER_REF = /Ref (c[a-z0-9]{24})/;
