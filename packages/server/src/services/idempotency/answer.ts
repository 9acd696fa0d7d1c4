import type { SQL } from 'drizzle-orm';

/** What a mutation answers: stored with its idempotency key and replayed byte for byte. */
export type HandlerResult = { status: number; body: unknown };

/**
 * The statement that stores `result` as the request's idempotent answer, for the work to run as a
 * CTE of its last write (one round trip fewer than a statement of its own); undefined when the
 * request claimed no key. `onlyIf` makes the store conditional on the write's other CTEs. The work
 * must then return that same `result`: any other result is stored by a statement of its own after
 * the work, as when `store` is never called.
 */
export type StoreAnswer = (result: HandlerResult, onlyIf?: SQL) => SQL | undefined;
