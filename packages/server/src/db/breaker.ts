import pg from 'pg';
import type { PoolGuard } from './pool.ts';

/** What a request meets while the breaker is open; `isDatabaseUnavailable` reads its SQLSTATE (08xxx). */
export class DatabaseUnavailableError extends Error {
  override readonly name = 'DatabaseUnavailableError';
  readonly code = '08000';
  constructor() {
    super('database unavailable (circuit open)');
  }
}

const PROBE_INTERVAL_MS = 100;
const PROBE_TIMEOUT_MS = 1000;

/**
 * A circuit breaker in front of the PostgreSQL pool. PostgreSQL that is stopped answers at once, but
 * one that is frozen (a partition: connections open, nothing flows) costs each request the whole
 * query timeout (10 s) before its 503, and every pooled connection ends up waiting. So the first
 * failure that means "unreachable" opens the circuit: from then on a request that needs a connection
 * fails at once with DatabaseUnavailableError (503 `Service Unavailable`). Meanwhile a probe opens
 * its own connection every 100 ms (1 s timeout, outside the pool, so hung pooled connections cannot
 * starve it) and runs `select 1`; the first probe that answers closes the circuit. A single dropped
 * connection therefore costs one probe round trip; a dead database costs callers nothing but the 503.
 */
export function createBreaker(url: string) {
  let open = false;
  let probing: NodeJS.Timeout | undefined;
  let closed = false;

  const probeOnce = async (): Promise<boolean> => {
    const client = new pg.Client({
      connectionString: url,
      connectionTimeoutMillis: PROBE_TIMEOUT_MS,
      query_timeout: PROBE_TIMEOUT_MS,
    });
    client.on('error', () => {});
    try {
      await client.connect();
      await client.query('select 1');
      return true;
    } catch {
      return false;
    } finally {
      client.end().catch(() => {});
    }
  };

  const probe = async () => {
    probing = undefined;
    if (closed || !open) return;
    if (await probeOnce()) open = false;
    else if (!closed) probing = setTimeout(probe, PROBE_INTERVAL_MS).unref();
  };

  return {
    get isOpen() {
      return open;
    },
    /** A failure that means the database cannot be reached (not a wrong query). */
    trip() {
      if (open || closed) return;
      open = true;
      probing = setTimeout(probe, 0).unref();
    },
    stop() {
      closed = true;
      if (probing) clearTimeout(probing);
    },
  };
}

export type Breaker = ReturnType<typeof createBreaker>;

/**
 * The pool's side of the breaker: no connection is handed out while the circuit is open, and a failed
 * connect or query that `isUnavailable` recognises trips it.
 */
export function poolGuard(breaker: Breaker, isUnavailable: (error: unknown) => boolean): PoolGuard {
  return {
    admit() {
      if (breaker.isOpen) throw new DatabaseUnavailableError();
    },
    failed(error) {
      if (isUnavailable(error)) breaker.trip();
    },
  };
}
