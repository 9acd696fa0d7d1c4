import { readFileSync } from 'node:fs';
import path from 'node:path';

export class AdminCallError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    super(`admin API answered ${status}: ${JSON.stringify(body)}`);
  }
}

/** ADMIN_TOKEN from the environment, else the token the embedded store generated in DATA_DIR. */
export function resolveAdminToken(env = process.env): string {
  if (env.ADMIN_TOKEN) return env.ADMIN_TOKEN;
  const file = path.resolve(env.DATA_DIR ?? './data', 'secrets.json');
  try {
    return (JSON.parse(readFileSync(file, 'utf8')) as { adminToken: string }).adminToken;
  } catch {
    throw new Error(`no ADMIN_TOKEN set and none found in ${file}; start the server once or set ADMIN_TOKEN`);
  }
}

export function createAdminClient(env = process.env) {
  const baseUrl = (env.ADMIN_URL ?? `http://127.0.0.1:${env.ADMIN_PORT ?? 8081}`).replace(/\/$/, '');
  const token = resolveAdminToken(env);
  return async function call<T = unknown>(method: string, urlPath: string, body?: unknown): Promise<T> {
    const response = await fetch(`${baseUrl}${urlPath}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    }).catch((error: unknown) => {
      // fetch says only "fetch failed"; the reason (ECONNREFUSED, ENOTFOUND, ...) is its cause.
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      throw new Error(
        `cannot reach the admin API at ${baseUrl} (${cause?.code ?? cause?.message ?? (error as Error).message}); is \`partner-api serve\` running there? ADMIN_URL or ADMIN_PORT names it`,
      );
    });
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      throw new Error(
        `${baseUrl} answered ${response.status} with a body that is not JSON: is it the admin API?`,
      );
    }
    if (!response.ok) throw new AdminCallError(response.status, parsed);
    return parsed as T;
  };
}
