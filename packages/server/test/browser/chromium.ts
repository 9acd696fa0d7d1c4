import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type ServerProcess, startServer } from '@partner-api/testkit/process.ts';
import { type BrowserContext, chromium } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
export const HAS_CHROMIUM = existsSync(CHROMIUM);
export const SKIP_REASON = `${CHROMIUM} is absent (Debian package chromium; .ci/run installs it): browser tests skipped`;

/** The flags this machine kind needs: without the background-networking ones Chromium calls out and is refused. */
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
export const VIEWPORT = { width: 1280, height: 900 };

/**
 * Headless Chromium on a fresh profile that may reach `baseUrl` only: any other request is refused
 * and recorded in `outside`, since every asset must come from our server.
 */
export async function launchChromium(
  baseUrl: string,
  extraArgs: string[] = [],
): Promise<{ context: BrowserContext; outside: string[] }> {
  const context = await chromium.launchPersistentContext(
    mkdtempSync(path.join(tmpdir(), 'chromium-profile-')),
    {
      executablePath: CHROMIUM,
      headless: true,
      args: [...CHROMIUM_ARGS, ...extraArgs],
      viewport: VIEWPORT,
      deviceScaleFactor: 1,
      locale: 'en-US',
      timezoneId: 'UTC',
    },
  );
  const outside: string[] = [];
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith(`${baseUrl}/`)) return route.continue();
    outside.push(url);
    return route.abort();
  });
  return { context, outside };
}

export type BrowserSandbox = {
  server: ServerProcess;
  context: BrowserContext;
  outside: string[];
  close(): Promise<void>;
};

/** A sandbox `partner-api serve` on a fresh data directory, and a Chromium that may reach it only. */
export async function startBrowserSandbox(env: Record<string, string> = {}): Promise<BrowserSandbox> {
  const server = await startServer({
    DATA_DIR: mkdtempSync(path.join(tmpdir(), 'partner-api-browser-')),
    // Pages poll and click; the default budget is not what the browser tests are about.
    RATE_LIMIT_GLOBAL: '100000/60s',
    ...env,
  });
  const { context, outside } = await launchChromium(server.baseUrl);
  return {
    server,
    context,
    outside,
    async close() {
      await context.close();
      await server.stop();
    },
  };
}
