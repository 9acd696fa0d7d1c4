import pg from 'pg';

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

/** What the pool tells its owner (the circuit breaker): the whole interface between them. */
export interface PoolGuard {
  /** Throws when no connection may be handed out now (the circuit is open). */
  admit(): void;
  /** Every failed connect or query, whatever its cause. */
  failed(error: unknown): void;
}

type Callback = (error: unknown, ...rest: unknown[]) => unknown;
type QueryConfig = { text: string; name?: string; values?: unknown[] };

/** A trailing callback, wrapped so that `guard.failed` sees its error first. */
function observed(args: unknown[], guard: PoolGuard): unknown[] {
  const last = args.length - 1;
  const callback = args[last];
  if (typeof callback !== 'function') return args;
  const copy = [...args];
  copy[last] = (error: unknown, ...rest: unknown[]) => {
    if (error) guard.failed(error);
    return (callback as Callback)(error, ...rest);
  };
  return copy;
}

/** The query config with the name its text is prepared under (statements already named keep theirs). */
function withName(config: unknown, values: unknown): unknown {
  if (typeof config === 'string') {
    const name = statementName(config, Array.isArray(values) ? values.length : 0);
    return name ? { text: config, name } : config;
  }
  if (config !== null && typeof config === 'object' && typeof (config as QueryConfig).text === 'string') {
    const c = config as QueryConfig & { submit?: unknown };
    if (c.name !== undefined || typeof c.submit === 'function') return config;
    const name = statementName(c.text, Array.isArray(values) ? values.length : (c.values?.length ?? 0));
    return name ? { ...c, name } : config;
  }
  return config;
}

/**
 * A node-postgres pool whose connections send repeated statements as named prepared statements and
 * whose connects and queries report to `guard`. Done by subclassing (pg's documented `Client` option
 * of the pool, and `Pool.connect`), never by replacing methods on pg's objects. Still a `pg.Pool`, as
 * drizzle's transactions require. Why naming pays: docs/performance.md ("One way to write a query").
 */
export function createPool(config: pg.PoolConfig, guard: PoolGuard): pg.Pool {
  class NamingClient extends pg.Client {
    constructor(options?: pg.ClientConfig) {
      super(options);
      // A checked-out client losing its server emits 'error'; unheard, that is an uncaught exception.
      // Its queries still fail (→ 503), and `guard` hears those.
      this.on('error', () => {});
    }

    // biome-ignore lint/suspicious/noExplicitAny: forwards every one of pg's `query` overloads unchanged
    override query(...args: any[]): any {
      const [config, values, ...rest] = observed(args, guard);
      const result = super.query(withName(config, values) as string, values as unknown[], ...(rest as []));
      if (result instanceof Promise) result.catch((error: unknown) => guard.failed(error));
      return result;
    }
  }

  class GuardedPool extends pg.Pool {
    // biome-ignore lint/suspicious/noExplicitAny: forwards both of pg's `connect` overloads unchanged
    override connect(...args: any[]): any {
      const [callback] = args as [Callback | undefined];
      try {
        guard.admit();
      } catch (error) {
        if (typeof callback !== 'function') return Promise.reject(error);
        process.nextTick(callback, error);
        return;
      }
      if (typeof callback === 'function') return super.connect(observed(args, guard)[0] as never);
      const pending = super.connect();
      pending.catch((error: unknown) => guard.failed(error));
      return pending;
    }
  }

  return new GuardedPool({ ...config, Client: NamingClient });
}
