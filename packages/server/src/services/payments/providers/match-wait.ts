/** How long a callback whose id matches nothing yet is looked up again, and how often. */
export const MATCH_WAIT_MS = 2000;
const MATCH_RETRY_MS = 100;
/**
 * At most this many callbacks of this process wait for a match at once. A callback can overtake the
 * commit of the answer that gave us its id, so it is looked up again for a while; a flood of
 * callbacks naming ids we never had would otherwise each hold two seconds of lookups. Beyond the
 * cap, a callback is looked up once: reconciliation settles what it could not.
 */
export const MAX_MATCH_WAITERS = 32;

let waiting = 0;

/**
 * `lookup()` now, then again every 100 ms for `waitMs` (MATCH_WAIT_MS) while it finds nothing, if
 * fewer than MAX_MATCH_WAITERS callbacks already wait. Shared by every provider's inbound handler.
 */
export async function lookUpWithin<T>(
  lookup: () => Promise<T | undefined>,
  waitMs = MATCH_WAIT_MS,
): Promise<T | undefined> {
  let found = await lookup();
  if (found || waitMs <= 0 || waiting >= MAX_MATCH_WAITERS) return found;
  waiting++;
  try {
    const deadline = Date.now() + waitMs;
    while (!found && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, MATCH_RETRY_MS));
      found = await lookup();
    }
    return found;
  } finally {
    waiting--;
  }
}
