import { randomBytes } from 'node:crypto';
import pg from 'pg';

/**
 * A PostgreSQL database of its own for one bench phase, on the server of `databaseUrl`: a server
 * started on it runs its workers over its own rows only (the shared test database may hold other
 * runs' pending payments and deliveries). `drop` removes it, connections and all.
 */
export async function scratchDatabase(databaseUrl: string, prefix: string) {
  const name = `${prefix}_${randomBytes(4).toString('hex')}`;
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  };
  await admin(`create database ${name}`);
  const url = new URL(databaseUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () => admin(`drop database if exists ${name} with (force)`).catch(() => {}),
  };
}
