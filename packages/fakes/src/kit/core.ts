/** One request a fake received, as it received it (tests count prompts and payouts here). */
export type LoggedRequest = {
  scenario: string | null;
  /** The HTTP status answered, or null for `reset` (and until a `slow` answer is written). */
  status: number | null;
};

/** One callback a fake made, with our route's answer. */
export type SentCallback = {
  url: string;
  body: unknown;
  /** Our route's HTTP status, or null when the call failed (`error`). */
  status: number | null;
  error: string | null;
};

/**
 * What every fake keeps: the request log, the callbacks made, the per-operation fault queue, the
 * counters of processed requests, and its timers (all cleared, and calls in flight aborted, on stop).
 */
export class FakeCore<
  Operation extends string,
  Scenario extends string,
  Request,
  Callback extends SentCallback,
> {
  readonly requests: Request[] = [];
  readonly callbacks: Callback[] = [];
  readonly #queued = new Map<Operation, Scenario[]>();
  readonly #processed = new Map<Operation, number>();
  readonly #timers = new Set<NodeJS.Timeout>();
  readonly #aborter = new AbortController();
  #callbackWaiters: Array<() => void> = [];

  /** `name` as in the fake's errors, e.g. `fake MTN`. */
  constructor(readonly name: string) {}

  get stopped(): boolean {
    return this.#aborter.signal.aborted;
  }

  later(ms: number, fn: () => void) {
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      fn();
    }, ms);
    this.#timers.add(timer);
  }

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.later(ms, resolve));
  }

  /** The next request of `operation` gets `scenario`, before anything the request itself says. */
  queue(operation: Operation, scenario: Scenario) {
    const list = this.#queued.get(operation) ?? [];
    list.push(scenario);
    this.#queued.set(operation, list);
  }

  takeQueued(operation: Operation): Scenario | undefined {
    return this.#queued.get(operation)?.shift();
  }

  markProcessed(operation: Operation) {
    this.#processed.set(operation, (this.#processed.get(operation) ?? 0) + 1);
  }

  processed(operation: Operation): number {
    return this.#processed.get(operation) ?? 0;
  }

  processedCounts(): Record<string, number> {
    return Object.fromEntries(this.#processed);
  }

  /**
   * Sends `entry.body` to `entry.url` as JSON (or form-encoded, as Africa's Talking posts its
   * reports), fills in our route's answer and logs the callback.
   */
  async sendCallback(
    entry: Callback,
    method: 'POST' | 'PUT' = 'POST',
    timeoutMs = 5000,
    encoding: 'json' | 'form' = 'json',
  ): Promise<Callback> {
    try {
      const form = encoding === 'form';
      const response = await fetch(entry.url, {
        method,
        headers: { 'content-type': form ? 'application/x-www-form-urlencoded' : 'application/json' },
        body: form
          ? new URLSearchParams(entry.body as Record<string, string>).toString()
          : JSON.stringify(entry.body),
        signal: AbortSignal.any([this.#aborter.signal, AbortSignal.timeout(timeoutMs)]),
      });
      entry.status = response.status;
      await response.arrayBuffer();
    } catch (err) {
      entry.error = err instanceof Error ? err.message : String(err);
    }
    this.callbacks.push(entry);
    for (const wake of this.#callbackWaiters) wake();
    return entry;
  }

  /** Resolves once `count` callbacks have been sent (or rejects after `timeoutMs`). */
  waitForCallbacks(count: number, timeoutMs = 5000): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (this.callbacks.length < count) return false;
        this.#callbackWaiters = this.#callbackWaiters.filter((w) => w !== check);
        clearTimeout(timer);
        resolve();
        return true;
      };
      const timer = setTimeout(() => {
        this.#callbackWaiters = this.#callbackWaiters.filter((w) => w !== check);
        reject(
          new Error(`${this.name}: ${this.callbacks.length} of ${count} callbacks after ${timeoutMs} ms`),
        );
      }, timeoutMs);
      if (!check()) this.#callbackWaiters.push(check);
    });
  }

  stop() {
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    this.#aborter.abort();
  }
}
