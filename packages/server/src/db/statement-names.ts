import type pg from 'pg';

/** Above these, a statement is left unnamed: one-off shapes (bulk inserts) would only fill the cache. */
const MAX_NAMED = 1000;
const MAX_PARAMS = 64;
const MAX_TEXT = 8000;

const names = new Map<string, string>();

/**
 * The name a parameterised statement is prepared under, or undefined to leave it unnamed. A pattern
 * match (`like`) stays unnamed: its best plan depends on the pattern (a scan for a common name, the
 * trigram index for a rare one), and a cached generic plan could pick one for all.
 */
export function statementName(text: string, paramCount: number): string | undefined {
  let name = names.get(text);
  if (name !== undefined) return name;
  if (paramCount === 0 || paramCount > MAX_PARAMS || text.length > MAX_TEXT || names.size >= MAX_NAMED)
    return;
  if (/\blike\b/i.test(text)) return;
  name = `pa_${names.size}`;
  names.set(text, name);
  return name;
}

type QueryConfig = { text: string; name?: string };

/**
 * Makes a pooled client send repeated statements as named prepared statements: PostgreSQL then
 * parses and plans each once per connection instead of on every call. drizzle sends every query as
 * an unnamed statement, and for this service's short lookups planning is most of PostgreSQL's work
 * (pgbench, a USSD move's five reads: ~2,600 transactions/s unnamed, ~8,000/s prepared).
 * Statements drizzle already prepares under a name keep theirs.
 */
export function nameStatements(client: pg.PoolClient): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  const named = (config: unknown, values: unknown, ...rest: unknown[]) => {
    const params = Array.isArray(values) ? values.length : 0;
    if (typeof config === 'string') {
      const name = statementName(config, params);
      return query(name ? { text: config, name } : config, values, ...rest);
    }
    if (config !== null && typeof config === 'object' && typeof (config as QueryConfig).text === 'string') {
      const c = config as QueryConfig & { values?: unknown[] };
      const count = Array.isArray(values) ? params : (c.values?.length ?? 0);
      const name = c.name === undefined ? statementName(c.text, count) : undefined;
      return query(name ? { ...c, name } : config, values, ...rest);
    }
    return query(config, values, ...rest);
  };
  (client as unknown as { query: typeof named }).query = named;
}
