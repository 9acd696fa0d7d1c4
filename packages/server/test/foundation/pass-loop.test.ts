import { describe, expect, it } from 'vitest';
import { startPassLoop } from '../../src/lib/pass-loop.ts';

/** Resolves after `depth` microtasks have run, then calls `fn`. */
function afterMicrotasks(depth: number, fn: () => void) {
  if (depth === 0) return fn();
  queueMicrotask(() => afterMicrotasks(depth - 1, fn));
}

/**
 * The workers' rhythm (lib/pass-loop.ts): a nudge is never lost. A commit nudges its worker (a
 * webhook event, a queued payment) in whatever microtask its transaction resolves in; a nudge that
 * lands just as a pass ends must still run one more pass, not wait for the next poll.
 */
describe('the pass loop', () => {
  it('a nudge at any moment around the end of a pass runs another pass at once', async () => {
    for (let depth = 0; depth <= 16; depth++) {
      let passes = 0;
      const loop = startPassLoop({
        intervalMs: 60_000, // the poll never comes within the test: only the nudge can run pass 2
        pass: async () => {
          passes += 1;
          if (passes === 1) afterMicrotasks(depth, () => loop.nudge());
          return false;
        },
        onError: (err) => {
          throw err;
        },
      });
      const deadline = Date.now() + 1000;
      while (passes < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
      await loop.stop();
      expect({ depth, passes }).toEqual({ depth, passes: 2 });
    }
  });

  it('nudges during a pass run it once more, not once each', async () => {
    let passes = 0;
    let release: () => void = () => {};
    const loop = startPassLoop({
      intervalMs: 60_000,
      pass: async () => {
        passes += 1;
        if (passes === 1) await new Promise<void>((r) => (release = r));
        return false;
      },
      onError: (err) => {
        throw err;
      },
    });
    while (passes < 1) await new Promise((r) => setTimeout(r, 5));
    for (let i = 0; i < 5; i++) loop.nudge();
    release();
    await new Promise((r) => setTimeout(r, 50));
    await loop.stop();
    expect(passes).toBe(2);
  });
});
