/**
 * A per-adapter circuit breaker of this process: `threshold` consecutive calls that learned nothing
 * because the provider itself failed (a timeout, a reset or refused connection, an HTTP 5xx:
 * `providerFailed`) open it; a refusal such as a 400 or a 401, or a pending answer, is an answer and
 * counts as the provider being up; while open the worker does not claim that
 * adapter's requests (they stay due, for later or for another instance). After `cooldownMs` it is
 * half-open: one request may go; its success closes the breaker, its failure opens it again.
 * Ours rather than cockatiel's ConsecutiveBreaker: outcomes here are values, not exceptions, and the
 * worker must ask "may I claim?" before it holds any request (docs/payments.md, Pipeline).
 */
export type BreakerState = 'closed' | 'open' | 'half-open';

type Entry = { failures: number; openedAt?: number; trial: boolean };

export type Breakers = ReturnType<typeof createBreakers>;

export function createBreakers(options: {
  threshold: number;
  cooldownMs: number;
  now?: () => number;
  onChange?: (adapter: string, state: BreakerState) => void;
}) {
  const now = options.now ?? Date.now;
  const entries = new Map<string, Entry>();
  const entry = (name: string) => {
    const found = entries.get(name);
    if (found) return found;
    const created: Entry = { failures: 0, trial: false };
    entries.set(name, created);
    return created;
  };
  const state = (name: string): BreakerState => {
    const e = entry(name);
    if (e.openedAt === undefined) return 'closed';
    return now() - e.openedAt >= options.cooldownMs ? 'half-open' : 'open';
  };
  return {
    state,
    /** How many requests of this adapter the worker may claim now (0 while open, 1 half-open). */
    allowance(name: string, batch: number): number {
      const s = state(name);
      if (s === 'closed') return batch;
      if (s === 'open' || entry(name).trial) return 0;
      entry(name).trial = true;
      return 1;
    },
    success(name: string) {
      const e = entry(name);
      const was = state(name);
      e.failures = 0;
      e.openedAt = undefined;
      e.trial = false;
      if (was !== 'closed') options.onChange?.(name, 'closed');
    },
    /** Frees an unused half-open trial (nothing was due, or nothing was called): the next pass may try. */
    release(name: string) {
      entry(name).trial = false;
    },
    failure(name: string) {
      const e = entry(name);
      e.failures += 1;
      e.trial = false;
      if (e.failures >= options.threshold || e.openedAt !== undefined) {
        e.openedAt = now();
        options.onChange?.(name, 'open');
      }
    },
    all(): Record<string, BreakerState> {
      return Object.fromEntries([...entries.keys()].map((name) => [name, state(name)]));
    },
  };
}

/** Whether a call's exchanges show the provider failing: no answer at all, or an HTTP 5xx. */
export function providerFailed(exchanges: ReadonlyArray<{ status: number | null }>): boolean {
  return exchanges.some((e) => e.status === null || e.status >= 500);
}
