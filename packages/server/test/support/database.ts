import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { StoreKind } from './app.ts';

/**
 * On PostgreSQL, a database of the suite's own (created from DATABASE_URL's server, dropped by
 * `drop()`), so that no other suite's payment worker claims its requests and assertions on whole
 * tables hold; PGlite is in memory and private anyway.
 */
export async function ownDatabase(
  store: StoreKind,
  prefix = 'suite',
): Promise<{ env: Record<string, string>; url?: string; drop(): Promise<void> }> {
  if (store !== 'postgres') return { env: {}, drop: async () => {} };
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  };
  await admin(`create database ${name}`);
  const url = new URL(process.env.DATABASE_URL!);
  url.pathname = `/${name}`;
  return {
    env: { DATABASE_URL: url.toString() },
    url: url.toString(),
    drop: () => admin(`drop database if exists ${name} with (force)`),
  };
}
