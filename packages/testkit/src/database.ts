import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { StoreKind } from './app.ts';

/**
 * A database of its own on the server of `serverUrl` (a suite's, or a bench phase's), so that no
 * other suite's or run's payment worker claims its requests and assertions on whole tables hold.
 * `drop()` removes it, connections and all.
 */
export async function scratchDatabase(serverUrl: string, prefix: string) {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: serverUrl });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  };
  await admin(`create database ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin(`drop database if exists ${name} with (force)`) };
}

/** On PostgreSQL, a scratch database from DATABASE_URL's server; PGlite is in memory and private anyway. */
export async function ownDatabase(
  store: StoreKind,
  prefix = 'suite',
): Promise<{ env: Record<string, string>; url?: string; drop(): Promise<void> }> {
  if (store !== 'postgres') return { env: {}, drop: async () => {} };
  const { url, drop } = await scratchDatabase(process.env.DATABASE_URL!, prefix);
  return { env: { DATABASE_URL: url }, url, drop };
}
