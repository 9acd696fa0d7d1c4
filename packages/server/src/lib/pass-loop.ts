/**
 * A background worker's rhythm (the payment worker, the webhook worker): a pass every `intervalMs`
 * after `startDelayMs`, one pass at a time; a nudge during a pass runs one more after it, and a
 * pass that says there is more work runs again at once. Nothing else is kept in memory.
 */
export type PassLoop = {
  /** Run a pass now; a pass already running runs once more. */
  nudge(): void;
  /** Stops the timer and waits for the pass in flight. */
  stop(): Promise<void>;
  /** Resolves after the next complete pass. */
  settled(): Promise<void>;
  stopped(): boolean;
};

export function startPassLoop(options: {
  intervalMs: number;
  startDelayMs?: number;
  /** One pass; true when there may be more due work at once. */
  pass: () => Promise<boolean>;
  onError: (err: unknown) => void;
}): PassLoop {
  let started = false;
  let stopped = false;
  let again = false;
  let current: Promise<void> | undefined;
  let waiters: Array<() => void> = [];

  const run = async () => {
    do {
      again = false;
      try {
        if (await options.pass()) again = true;
      } catch (err) {
        options.onError(err);
      }
      const done = waiters;
      waiters = [];
      for (const w of done) w();
    } while (again && !stopped);
    // In the same synchronous step as the last look at `again`: a nudge from here on starts a new
    // run. (Cleared in a `.finally` instead, a nudge in the microtasks between the two was lost
    // until the next poll: pass-loop.test.ts.)
    current = undefined;
  };
  const tick = () => {
    if (stopped || !started) return;
    if (current) {
      again = true;
      return;
    }
    current = run();
  };
  let interval: NodeJS.Timeout | undefined;
  const start = setTimeout(() => {
    started = true;
    interval = setInterval(tick, options.intervalMs);
    interval.unref();
    tick();
  }, options.startDelayMs ?? 0);
  start.unref();

  return {
    nudge: tick,
    async stop() {
      stopped = true;
      clearTimeout(start);
      if (interval) clearInterval(interval);
      await current;
      for (const w of waiters) w();
      waiters = [];
    },
    settled: () =>
      new Promise<void>((resolve) => {
        if (stopped) return resolve();
        waiters.push(resolve);
        tick();
      }),
    stopped: () => stopped,
  };
}

/**
 * After a claimed item's pass failed (the database refused a write, the pool timed out): hand it
 * back so it is due again at `until` instead of at its lease's end, and say what happened for the
 * error line. `handBack` cuts only the lease this pass set (false: recorded or taken over
 * meanwhile); if it fails too, the lease stands and runs out as for a dead worker.
 */
export async function handBackAfterFailure(
  handBack: () => Promise<boolean>,
  lease: string,
  until: Date,
  handedBack: string,
): Promise<{ retryAt: string | undefined; what: string }> {
  const outcome = await handBack().catch(() => undefined);
  if (outcome === undefined) return { retryAt: lease, what: 'left to its lease' };
  if (outcome) return { retryAt: until.toISOString(), what: handedBack };
  return { retryAt: undefined, what: 'already recorded or taken over' };
}
