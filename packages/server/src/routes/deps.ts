import type { AppContext } from '../context.ts';

/** What every /v1 route plugin receives; mutations answer through plugins/idempotency.ts. */
export type RouteDeps = {
  ctx: AppContext;
};
