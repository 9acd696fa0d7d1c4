import { describe, expect, it } from 'vitest';
import { lookUpWithin, MAX_MATCH_WAITERS } from '../../src/services/payments/providers/match-wait.ts';

/**
 * The work a callback naming nothing of ours can cause is bounded: it is looked up again for a
 * while only while fewer than MAX_MATCH_WAITERS callbacks wait; beyond that, once.
 */
describe('looking a callback up again while its id is not yet saved', () => {
  it('finds an id saved a moment later, and stops looking once found', async () => {
    let calls = 0;
    const found = await lookUpWithin(async () => (++calls >= 3 ? 'request-1' : undefined), 2000);
    expect(found).toBe('request-1');
    expect(calls).toBe(3);
  });

  it('past MAX_MATCH_WAITERS callbacks waiting at once, a new one is looked up once only', async () => {
    const never = async () => undefined;
    const waiting = Array.from({ length: MAX_MATCH_WAITERS }, () => lookUpWithin(never, 300));
    let calls = 0;
    const extra = await lookUpWithin(async () => {
      calls++;
      return undefined;
    }, 300);
    expect(extra).toBeUndefined();
    expect(calls).toBe(1);
    await Promise.all(waiting);
    // The waiters gone, a new one waits again.
    let again = 0;
    await lookUpWithin(async () => {
      again++;
      return undefined;
    }, 300);
    expect(again).toBeGreaterThan(1);
  });
});
