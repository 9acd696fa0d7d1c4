/**
 * Work for the end of an event-loop turn (its check phase, `setImmediate`), and whether such work,
 * or a microtask it started, is running now.
 *
 * The embedded store gathers the statements asked for during a turn and runs them together when the
 * turn ends (db/pglite.ts). A statement that turn-end work itself asks for (the coalesced read of
 * db/query.ts) would then wait a whole loop iteration for the next check phase, and the requests
 * read in between would come in smaller turns: a signed GET on the embedded store cost ~16% more CPU
 * that way (docs/performance.md, "The embedded store"). While
 * `turnEnding()` is true such a statement runs as soon as the microtasks already queued have run.
 */
let ending = 0;

/**
 * Runs `task` when this turn ends. Node drains the microtask queue between two immediates, so the
 * second one, queued right behind it, runs only after every microtask `task` started.
 */
export function atTurnEnd(task: () => void): void {
  setImmediate(() => {
    ending++;
    task();
  });
  setImmediate(() => {
    ending--;
  });
}

/** True while turn-end work (`atTurnEnd`), or a microtask it started, runs. */
export function turnEnding(): boolean {
  return ending > 0;
}
